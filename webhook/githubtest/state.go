package githubtest

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Repo is a repository held by the fake. Its methods act as people acting on GitHub would
// (pushing, opening pull requests, commenting) and let a test inspect what a client did.
type Repo struct {
	s             *Server
	ID            int64
	Owner, Name   string
	st            *memory.Storage
	defaultBranch string
	created       time.Time
	pushed        time.Time

	nextNumber int
	prs        map[int]*PR
	comments   []*issueComment
	reviews    []*review
	checkRuns  []*checkRun
	suites     []*checkSuite
	statuses   []*commitStatus
	merges     []Merge
	perms      map[string]string
	diffs      map[[2]plumbing.Hash][]fileChange
	// queues are the merge queues of the branches whose ruleset
	// (rulesetID) requires one.
	queues    map[string][]QueueEntry
	rulesetID int64
	// required are the status checks the ruleset requires of each
	// branch, and groups the merge group each branch's queue tests.
	required map[string][]string
	groups   map[string]*MergeGroup
}

// PR is a pull request. Number is fixed; everything else is read through methods because the
// client may change it (merging closes it).
type PR struct {
	r      *Repo
	Number int
	ID     int64

	author           string
	headRef, baseRef string
	headSHA          string
	state            string // open, closed
	merged           bool
	mergedAt         time.Time
	mergedBy         string
	mergeCommitSHA   string
	draft            bool
	labels           []string
	mergeable        *bool
	title, body      string
	created, updated time.Time
	closedAt         time.Time
	// timeline are the PR's commits and force-pushes, in the order
	// GitHub's timeline lists them.
	timeline []timelineEvent
	// headChanges are the head changes GitHub delivers as pull_request
	// events, in order.
	headChanges []HeadChange
}

// HeadChange is a change of a PR's head as GitHub delivers it: a
// pull_request "opened" or "synchronize" event naming the new head, at
// GitHub's time of the change (the payload's pull_request.updated_at).
// Tests replay the ones they want delivered with PayloadArgs.HeadChange.
type HeadChange struct {
	Action      string // "opened" or "synchronize"
	Before, SHA string // the old head ("" when opened) and the new
	At          time.Time
}

// HeadChanges are the PR's head changes so far, oldest first.
func (pr *PR) HeadChanges() (hc []HeadChange) {
	pr.locked(func() { hc = append(hc, pr.headChanges...) })
	return hc
}

// timelineEvent is a committed or a head_ref_force_pushed event of a PR's
// timeline.
type timelineEvent struct {
	id    int64
	event string // "committed" or "head_ref_force_pushed"
	sha   string // the commit, or the force-push's new head
	actor string // who force-pushed
	at    time.Time
}

// Merge is a merge a client made through PUT .../pulls/{n}/merge.
type Merge struct {
	Number int
	SHA    string // the resulting commit on the base branch
	Method string // merge, squash or rebase
	// HeadSHA is the sha the client pinned the merge to.
	HeadSHA string
}

// Annotation is one check-run annotation.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
	RawDetails      string `json:"raw_details,omitempty"`
	StartColumn     *int   `json:"start_column,omitempty"`
	EndColumn       *int   `json:"end_column,omitempty"`
}

// CheckRun is the state of a check run as the client left it.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	DetailsURL  string
	ExternalID  string
	Title       string
	Summary     string
	Text        string
	Annotations []Annotation // accumulated over the create and every update, as GitHub does
	StartedAt   time.Time
	CompletedAt time.Time
	// AppID and AppSlug are the App that made the run.
	AppID   int64
	AppSlug string
}

// IssueComment is a comment on an issue or pull request.
type IssueComment struct {
	ID        int64
	User      string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Status is a commit status.
type Status struct {
	SHA, State, Context, Description, TargetURL string
}

// CheckSuite is the suite GitHub creates when a commit becomes the head of a branch.
type CheckSuite struct {
	ID        int64
	HeadSHA   string
	Branch    string
	CreatedAt time.Time
}

type issueComment struct {
	IssueComment
	number int
	// editedBy and prevBody are who made the last edit and the body
	// before it, for the "edited" delivery.
	editedBy, prevBody string
}

type review struct {
	id          int64
	number      int
	user, state string
	body        string
	commitID    string
	submitted   time.Time
}

type checkRun struct {
	CheckRun
	suiteID int64
	app     *otherApp // nil: made by the catalogbot App
}

type checkSuite struct {
	CheckSuite
	before string
	app    *otherApp // nil: the catalogbot App's suite
}

type commitStatus struct {
	Status
	id      int64
	creator string
	created time.Time
}

// AddRepo creates owner/name with one commit holding files on the default branch "main", installed
// in the owner's installation of the App (created on first use).
func (s *Server) AddRepo(owner, name string, files map[string]string) *Repo {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(owner + "/" + name)
	if _, dup := s.repos[key]; dup {
		s.t.Fatalf("githubtest: repository %s/%s already exists", owner, name)
	}
	st, err := newStorage("main")
	if err != nil {
		s.t.Fatalf("githubtest: creating %s/%s: %v", owner, name, err)
	}
	r := &Repo{
		s: s, ID: s.newID(), Owner: owner, Name: name, st: st, defaultBranch: "main",
		created: s.now(), prs: map[int]*PR{}, perms: map[string]string{}, nextNumber: 1,
	}
	s.repos[key] = r
	s.repoOrder = append(s.repoOrder, r)
	s.installationOf(owner).repos = append(s.installationOf(owner).repos, r)
	if files == nil {
		files = map[string]string{}
	}
	if len(files) == 0 {
		files = map[string]string{"README.md": "# " + name + "\n"}
	}
	if _, err := r.commitLocked("main", files, "Initial commit", owner); err != nil {
		s.t.Fatalf("githubtest: initial commit of %s/%s: %v", owner, name, err)
	}
	return r
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// CloneURL is the git smart-HTTP URL of the repository (fetch only, installation token as the
// password of user x-access-token).
func (r *Repo) CloneURL() string { return r.s.URL + "/" + r.Owner + "/" + r.Name + ".git" }

// DefaultBranch is "main".
func (r *Repo) DefaultBranch() string { return r.defaultBranch }

// Commit adds a commit on branch with files changed (a value of Delete removes the path) and
// returns its SHA. A new branch starts from the default branch.
func (r *Repo) Commit(branch string, files map[string]string, message string) string {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	sha, err := r.commitLocked(branch, files, message, "")
	if err != nil {
		r.s.t.Fatalf("githubtest: commit on %s/%s: %v", r.FullName(), branch, err)
	}
	return sha
}

func (r *Repo) commitLocked(branch string, files map[string]string, message, author string) (string, error) {
	var parents []plumbing.Hash
	var base map[string]blobEntry
	tip, ok := r.tip(branch)
	if !ok {
		tip, ok = r.tip(r.defaultBranch)
	}
	if ok {
		c, err := object.GetCommit(r.st, tip)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", tip, err)
		}
		if base, err = flatten(r.st, c.TreeHash); err != nil {
			return "", err
		}
		parents = []plumbing.Hash{tip}
	} else {
		base = map[string]blobEntry{}
	}
	tree, err := applyFiles(r.st, base, files)
	if err != nil {
		return "", err
	}
	sha, err := writeCommit(r.st, tree, parents, message, author, r.s.now())
	if err != nil {
		return "", err
	}
	if err := r.moveBranch(branch, sha); err != nil {
		return "", err
	}
	return sha.String(), nil
}

// tip is the commit a branch points at.
func (r *Repo) tip(branch string) (plumbing.Hash, bool) {
	ref, err := r.st.Reference(plumbing.NewBranchReferenceName(branch))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

// moveBranch points branch at sha, as a push would: open PRs with that head follow it and a check
// suite is created for the new head (its created_at records when the head was pushed).
func (r *Repo) moveBranch(branch string, sha plumbing.Hash) error {
	before, _ := r.tip(branch)
	if err := r.st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), sha)); err != nil {
		return fmt.Errorf("moving %s: %w", branch, err)
	}
	r.pushed = r.s.now()
	for _, pr := range r.prs {
		if pr.state == "open" && pr.headRef == branch {
			if err := pr.recordPushLocked(before, sha); err != nil {
				return err
			}
			pr.headChanges = append(pr.headChanges, HeadChange{Action: "synchronize", Before: pr.headSHA, SHA: sha.String(), At: r.s.now()})
			pr.headSHA = sha.String()
			pr.updated = r.s.now()
			if err := r.st.SetReference(plumbing.NewHashReference(pullRef(pr.Number), sha)); err != nil {
				return fmt.Errorf("moving %s: %w", pullRef(pr.Number), err)
			}
		}
	}
	r.suiteFor(sha.String(), branch, before.String())
	return nil
}

func pullRef(n int) plumbing.ReferenceName {
	return plumbing.ReferenceName(fmt.Sprintf("refs/pull/%d/head", n))
}

// suiteFor returns the catalogbot App's check suite of sha, creating it.
func (r *Repo) suiteFor(sha, branch, before string) *checkSuite {
	return r.appSuite(sha, branch, before, nil)
}

// appSuite returns app's check suite of sha, creating it: as on GitHub,
// each App's runs of a commit are in a suite of that App's.
func (r *Repo) appSuite(sha, branch, before string, app *otherApp) *checkSuite {
	for _, cs := range r.suites {
		if cs.HeadSHA == sha && cs.app == app {
			return cs
		}
	}
	cs := &checkSuite{CheckSuite: CheckSuite{ID: r.s.newID(), HeadSHA: sha, Branch: branch, CreatedAt: r.s.now()}, before: before, app: app}
	r.suites = append(r.suites, cs)
	return cs
}

// Branch returns the SHA a branch points at, "" if there is no such branch.
func (r *Repo) Branch(name string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	h, ok := r.tip(name)
	if !ok {
		return ""
	}
	return h.String()
}

// ReadFile returns the content of path at rev (a branch name or a commit SHA).
func (r *Repo) ReadFile(rev, path string) (string, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.readFileLocked(rev, path)
}

func (r *Repo) resolve(rev string) (*object.Commit, error) {
	h, ok := r.tip(rev)
	if !ok {
		if !plumbing.IsHash(rev) {
			return nil, fmt.Errorf("no branch or commit %q in %s", rev, r.FullName())
		}
		h = plumbing.NewHash(rev)
	}
	c, err := object.GetCommit(r.st, h)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s of %s: %w", rev, r.FullName(), err)
	}
	return c, nil
}

func (r *Repo) readFileLocked(rev, path string) (string, error) {
	c, err := r.resolve(rev)
	if err != nil {
		return "", err
	}
	f, err := c.File(path)
	if err != nil {
		return "", fmt.Errorf("reading %s at %s in %s: %w", path, rev, r.FullName(), err)
	}
	rd, err := f.Reader()
	if err != nil {
		return "", fmt.Errorf("reading %s at %s: %w", path, rev, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	return string(b), err
}

// Parents returns the parent SHAs of a commit.
func (r *Repo) Parents(sha string) []string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c, err := r.resolve(sha)
	if err != nil {
		r.s.t.Fatalf("githubtest: %v", err)
	}
	var out []string
	for _, p := range c.ParentHashes {
		out = append(out, p.String())
	}
	return out
}

// OpenPR opens a pull request from branch head into base, by author. Its head SHA is the head
// branch's tip.
func (r *Repo) OpenPR(author, head, base string) *PR {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	sha, ok := r.tip(head)
	if !ok {
		r.s.t.Fatalf("githubtest: OpenPR: no branch %q in %s", head, r.FullName())
	}
	if _, ok := r.tip(base); !ok {
		r.s.t.Fatalf("githubtest: OpenPR: no base branch %q in %s", base, r.FullName())
	}
	now := r.s.now()
	pr := &PR{
		r: r, Number: r.nextNumber, ID: r.s.newID(), author: author, headRef: head, baseRef: base,
		headSHA: sha.String(), state: "open", title: "Update from " + head, created: now, updated: now,
	}
	pr.headChanges = []HeadChange{{Action: "opened", SHA: pr.headSHA, At: now}}
	r.nextNumber++
	r.prs[pr.Number] = pr
	if err := r.st.SetReference(plumbing.NewHashReference(pullRef(pr.Number), sha)); err != nil {
		r.s.t.Fatalf("githubtest: OpenPR: %v", err)
	}
	if err := pr.recordPushLocked(plumbing.ZeroHash, sha); err != nil {
		r.s.t.Fatalf("githubtest: OpenPR: %v", err)
	}
	r.suiteFor(sha.String(), head, "")
	return pr
}

// ForcePush points the PR's head branch at sha, an existing commit (of
// this PR, another PR or any branch), as "git push --force" does: no
// check suite is created when sha has one already, and the PR's timeline
// records a head_ref_force_pushed event unless sha descends from the old
// head. It fails the test when sha is not a commit.
func (pr *PR) ForcePush(sha string) {
	pr.r.s.t.Helper()
	pr.r.s.mu.Lock()
	defer pr.r.s.mu.Unlock()
	h := plumbing.NewHash(sha)
	if _, err := object.GetCommit(pr.r.st, h); err != nil {
		pr.r.s.t.Fatalf("githubtest: ForcePush #%d: no commit %s: %v", pr.Number, sha, err)
	}
	if err := pr.r.moveBranch(pr.headRef, h); err != nil {
		pr.r.s.t.Fatalf("githubtest: ForcePush #%d: %v", pr.Number, err)
	}
}

// recordPushLocked adds to the PR's timeline what a move of its head from
// before (zero when the PR opens) to after shows there: a
// head_ref_force_pushed event when after does not descend from before,
// then a committed event for each commit of after's history not on the
// base branch and not listed yet, oldest first.
func (pr *PR) recordPushLocked(before, after plumbing.Hash) error {
	r := pr.r
	now := r.s.now()
	if !before.IsZero() && before != after {
		ff, err := r.isAncestor(before, after)
		if err != nil {
			return err
		}
		if !ff {
			pr.timeline = append(pr.timeline, timelineEvent{id: r.s.newID(), event: "head_ref_force_pushed", sha: after.String(), actor: pr.author, at: now})
		}
	}
	onBase := map[plumbing.Hash]bool{}
	if tip, ok := r.tip(pr.baseRef); ok {
		if err := r.walk(tip, func(h plumbing.Hash) bool { onBase[h] = true; return true }); err != nil {
			return err
		}
	}
	listed := map[string]bool{}
	for _, ev := range pr.timeline {
		if ev.event == "committed" {
			listed[ev.sha] = true
		}
	}
	var fresh []string
	if err := r.walk(after, func(h plumbing.Hash) bool {
		if onBase[h] {
			return false
		}
		if !listed[h.String()] {
			fresh = append(fresh, h.String())
		}
		return true
	}); err != nil {
		return err
	}
	slices.Reverse(fresh)
	for _, sha := range fresh {
		pr.timeline = append(pr.timeline, timelineEvent{id: r.s.newID(), event: "committed", sha: sha, at: now})
	}
	return nil
}

// walk visits the history of from, each commit once, not going past a
// commit for which visit returns false.
func (r *Repo) walk(from plumbing.Hash, visit func(plumbing.Hash) bool) error {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{from}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[h] {
			continue
		}
		seen[h] = true
		if !visit(h) {
			continue
		}
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			return fmt.Errorf("reading %s: %w", h, err)
		}
		stack = append(stack, c.ParentHashes...)
	}
	return nil
}

// isAncestor says whether a is in the history of b.
func (r *Repo) isAncestor(a, b plumbing.Hash) (bool, error) {
	found := false
	err := r.walk(b, func(h plumbing.Hash) bool {
		if h == a {
			found = true
		}
		return !found
	})
	return found, err
}

// PR returns pull request number, failing the test if there is none.
func (r *Repo) PR(number int) *PR {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	pr := r.prs[number]
	if pr == nil {
		r.s.t.Fatalf("githubtest: no pull request #%d in %s", number, r.FullName())
	}
	return pr
}

// PRs are the repository's pull requests, open and closed, by number.
func (r *Repo) PRs() []*PR {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	prs := make([]*PR, 0, len(r.prs))
	for _, pr := range r.prs {
		prs = append(prs, pr)
	}
	slices.SortFunc(prs, func(a, b *PR) int { return a.Number - b.Number })
	return prs
}

// SetBranch points branch at sha, an existing commit, creating the branch
// if need be, as a push does; open pull requests from it follow.
func (r *Repo) SetBranch(branch, sha string) {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	h := plumbing.NewHash(sha)
	if _, err := object.GetCommit(r.st, h); err != nil {
		r.s.t.Fatalf("githubtest: SetBranch %s: no commit %s: %v", branch, sha, err)
	}
	if err := r.moveBranch(branch, h); err != nil {
		r.s.t.Fatalf("githubtest: SetBranch %s: %v", branch, err)
	}
}

// Push adds a commit to the PR's head branch; the head moves to it. It returns the new head SHA.
func (pr *PR) Push(files map[string]string, message string) string {
	pr.r.s.t.Helper()
	pr.r.s.mu.Lock()
	defer pr.r.s.mu.Unlock()
	sha, err := pr.r.commitLocked(pr.headRef, files, message, pr.author)
	if err != nil {
		pr.r.s.t.Fatalf("githubtest: push to #%d: %v", pr.Number, err)
	}
	return sha
}

func (pr *PR) locked(f func()) {
	pr.r.s.mu.Lock()
	defer pr.r.s.mu.Unlock()
	f()
}

// HeadSHA is the current head commit.
func (pr *PR) HeadSHA() (sha string) { pr.locked(func() { sha = pr.headSHA }); return }

// HeadRef is the head branch name.
func (pr *PR) HeadRef() string { return pr.headRef }

// BaseRef is the base branch name.
func (pr *PR) BaseRef() string { return pr.baseRef }

// Author is the login that opened the PR.
func (pr *PR) Author() string { return pr.author }

// State is "open" or "closed".
func (pr *PR) State() (st string) { pr.locked(func() { st = pr.state }); return }

// Merged reports whether the PR was merged.
func (pr *PR) Merged() (m bool) { pr.locked(func() { m = pr.merged }); return }

// SetTitle sets the title and body.
func (pr *PR) SetTitle(title, body string) {
	pr.locked(func() { pr.title, pr.body, pr.updated = title, body, pr.r.s.now() })
}

// SetLabels replaces the labels.
func (pr *PR) SetLabels(labels ...string) {
	pr.locked(func() { pr.labels, pr.updated = append([]string(nil), labels...), pr.r.s.now() })
}

// SetDraft marks the PR draft or ready for review.
func (pr *PR) SetDraft(draft bool) { pr.locked(func() { pr.draft, pr.updated = draft, pr.r.s.now() }) }

// SetMergeable overrides GitHub's mergeability computation (by default a PR is mergeable unless
// the base changed a file the PR changes).
func (pr *PR) SetMergeable(m bool) { pr.locked(func() { pr.mergeable = &m }) }

// Close closes the PR without merging.
func (pr *PR) Close() {
	pr.locked(func() { pr.state, pr.closedAt, pr.updated = "closed", pr.r.s.now(), pr.r.s.now() })
}

// Comment posts an issue comment on PR number as user and returns its id. A login ending in
// "[bot]" is a bot account.
func (r *Repo) Comment(number int, user, body string) int64 {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.prs[number] == nil {
		r.s.t.Fatalf("githubtest: Comment: no pull request #%d in %s", number, r.FullName())
	}
	return r.addComment(number, user, body).ID
}

func (r *Repo) addComment(number int, user, body string) *issueComment {
	now := r.s.now()
	c := &issueComment{IssueComment: IssueComment{ID: r.s.newID(), User: user, Body: body, CreatedAt: now, UpdatedAt: now}, number: number}
	r.comments = append(r.comments, c)
	// A comment updates its pull request, as on GitHub, where the issue
	// and the pull request are one object.
	if pr := r.prs[number]; pr != nil {
		pr.updated = now
	}
	return c
}

// Review submits a review on PR number. state is APPROVED, CHANGES_REQUESTED, COMMENTED or
// DISMISSED; commitSHA is the commit reviewed ("" means the current head).
func (r *Repo) Review(number int, user, state, body, commitSHA string) int64 {
	r.s.t.Helper()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	pr := r.prs[number]
	if pr == nil {
		r.s.t.Fatalf("githubtest: Review: no pull request #%d in %s", number, r.FullName())
	}
	if commitSHA == "" {
		commitSHA = pr.headSHA
	}
	rv := &review{id: r.s.newID(), number: number, user: user, state: strings.ToUpper(state), body: body, commitID: commitSHA, submitted: r.s.now()}
	r.reviews = append(r.reviews, rv)
	pr.updated = rv.submitted
	return rv.id
}

// SetPermission sets a user's role on the repository (admin, maintain, write, triage, read), as
// GET .../collaborators/{u}/permission reports it. The owner is admin; anyone else has "none".
func (r *Repo) SetPermission(user, permission string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.perms[strings.ToLower(user)] = permission
}

// Merges lists the merges clients made, oldest first.
func (r *Repo) Merges() []Merge {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return append([]Merge(nil), r.merges...)
}

// CheckRuns lists the check runs on sha, oldest first.
func (r *Repo) CheckRuns(sha string) []CheckRun {
	return listLocked(r, r.checkRuns, func(cr *checkRun) (CheckRun, bool) {
		c := cr.CheckRun
		c.AppID, c.AppSlug = r.s.appOf(cr.app)
		c.Annotations = append([]Annotation(nil), cr.Annotations...)
		return c, cr.HeadSHA == sha
	})
}

// CheckSuites lists the check suites on sha.
func (r *Repo) CheckSuites(sha string) []CheckSuite {
	return listLocked(r, r.suites, func(cs *checkSuite) (CheckSuite, bool) { return cs.CheckSuite, cs.HeadSHA == sha })
}

// IssueComments lists the comments on issue or PR number, oldest first.
func (r *Repo) IssueComments(number int) []IssueComment {
	return listLocked(r, r.comments, func(c *issueComment) (IssueComment, bool) { return c.IssueComment, c.number == number })
}

// Statuses lists the commit statuses on sha, oldest first.
func (r *Repo) Statuses(sha string) []Status {
	return listLocked(r, r.statuses, func(st *commitStatus) (Status, bool) { return st.Status, st.SHA == sha })
}

// listLocked copies out, under the server's lock, the items that view
// keeps, in order.
func listLocked[T, U any](r *Repo, items []T, view func(T) (U, bool)) []U {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []U
	for _, it := range items {
		if u, ok := view(it); ok {
			out = append(out, u)
		}
	}
	return out
}

// changesLocked is the PR's diff: merge base of base tip and head, to head.
func (pr *PR) changesLocked() (mergeBaseSHA plumbing.Hash, changes []fileChange, err error) {
	r := pr.r
	baseTip, ok := r.tip(pr.baseRef)
	if !ok {
		return plumbing.ZeroHash, nil, fmt.Errorf("base branch %s of #%d is gone", pr.baseRef, pr.Number)
	}
	head := plumbing.NewHash(pr.headSHA)
	mb, err := mergeBase(r.st, baseTip, head)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	changes, err = r.diff(mb, head)
	return mb, changes, err
}

// diff is diffCommits, remembered: commits never change, and the PR files list is asked for page
// by page.
func (r *Repo) diff(a, b plumbing.Hash) ([]fileChange, error) {
	key := [2]plumbing.Hash{a, b}
	if c, ok := r.diffs[key]; ok {
		return c, nil
	}
	c, err := diffCommits(r.st, a, b)
	if err != nil {
		return nil, err
	}
	if r.diffs == nil {
		r.diffs = map[[2]plumbing.Hash][]fileChange{}
	}
	r.diffs[key] = c
	return c, nil
}

// conflictsLocked reports whether the base changed, since the merge base, a path the PR changes.
func (pr *PR) conflictsLocked() (bool, error) {
	mb, changes, err := pr.changesLocked()
	if err != nil {
		return false, err
	}
	baseTip, _ := pr.r.tip(pr.baseRef)
	if baseTip == mb {
		return false, nil
	}
	baseChanges, err := pr.r.diff(mb, baseTip)
	if err != nil {
		return false, err
	}
	ours, theirs := touchedPaths(changes), touchedPaths(baseChanges)
	for p := range ours {
		if theirs[p] {
			return true, nil
		}
	}
	return false, nil
}

// mergeableLocked is what GitHub reports as mergeable.
func (pr *PR) mergeableLocked() bool {
	if pr.mergeable != nil {
		return *pr.mergeable
	}
	conflict, err := pr.conflictsLocked()
	return err == nil && !conflict
}

// treeOntoLocked is the tree of the PR's changes applied to commit onto: the head's own tree when
// onto is the merge base, else onto's tree with each file the PR changes taken from the head.
func (pr *PR) treeOntoLocked(onto plumbing.Hash) (plumbing.Hash, error) {
	r := pr.r
	mb, changes, err := pr.changesLocked()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	head := plumbing.NewHash(pr.headSHA)
	hc, err := object.GetCommit(r.st, head)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading head %s: %w", head, err)
	}
	if onto == mb {
		return hc.TreeHash, nil
	}
	bc, err := object.GetCommit(r.st, onto)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("reading base %s: %w", onto, err)
	}
	files, err := flatten(r.st, bc.TreeHash)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	headFiles, err := flatten(r.st, hc.TreeHash)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	for _, c := range changes {
		if c.PreviousFilename != "" {
			delete(files, c.PreviousFilename)
		}
		if c.Status == "removed" {
			delete(files, c.Filename)
			continue
		}
		files[c.Filename] = headFiles[c.Filename]
	}
	return writeTree(r.st, files)
}

// mergeLocked merges the PR into its base and returns the new base commit. The tree is the head's
// when the base has not moved since the merge base; otherwise the PR's changes applied to the base.
func (pr *PR) mergeLocked(method, title, message, by string) (string, error) {
	r := pr.r
	baseTip, _ := r.tip(pr.baseRef)
	head := plumbing.NewHash(pr.headSHA)
	tree, err := pr.treeOntoLocked(baseTip)
	if err != nil {
		return "", err
	}
	if title == "" {
		title = pr.title
	}
	parents := []plumbing.Hash{baseTip}
	var msg string
	switch method {
	case "merge":
		parents = append(parents, head)
		msg = fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", pr.Number, r.Owner, pr.headRef, title)
	default:
		msg = fmt.Sprintf("%s (#%d)", title, pr.Number)
	}
	if message != "" {
		msg += "\n\n" + message
	}
	sha, err := writeCommit(r.st, tree, parents, msg, by, r.s.now())
	if err != nil {
		return "", err
	}
	if err := r.moveBranch(pr.baseRef, sha); err != nil {
		return "", err
	}
	now := r.s.now()
	pr.state, pr.merged, pr.mergedAt, pr.closedAt, pr.updated = "closed", true, now, now, now
	pr.mergedBy, pr.mergeCommitSHA = by, sha.String()
	r.merges = append(r.merges, Merge{Number: pr.Number, SHA: sha.String(), Method: method, HeadSHA: head.String()})
	return sha.String(), nil
}

// sortedPRs lists PRs by number.
func (r *Repo) sortedPRs() []*PR {
	out := make([]*PR, 0, len(r.prs))
	for _, pr := range r.prs {
		out = append(out, pr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// commitCountLocked counts the commits from the merge base to the head.
func (pr *PR) commitCountLocked() int {
	baseTip, ok := pr.r.tip(pr.baseRef)
	if !ok {
		return 0
	}
	head := plumbing.NewHash(pr.headSHA)
	mb, err := mergeBase(pr.r.st, baseTip, head)
	if err != nil {
		return 0
	}
	n := 0
	seen := map[plumbing.Hash]bool{mb: true}
	queue := []plumbing.Hash{head}
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(pr.r.st, h)
		if err != nil {
			return n
		}
		n++
		queue = append(queue, c.ParentHashes...)
	}
	return n
}
