// Package replay replays a repository's history through the review core.
// Each first-parent commit that touched a catalog root is taken as a pull
// request from its first parent (the base) to itself (the head), authored
// by nobody special and approved by nobody, and reviewed by review.Evaluate
// exactly as the App, the Action and `catalogbot check` review one. The
// report says, per commit, what each check concluded and what would block
// the merge; summed up, how often each verdict came out and which commits'
// content checks failed; and, given two policies, which commits' verdicts
// flip between them, so a maintainer can try a policy change on past pull
// requests before merging it.
//
// A commit whose objects are missing (a partial or shallow clone) is
// reported unreadable, never invalid: a verdict on a tree that could not be
// read says nothing about the commit.
//
// A commit is unreadable exactly when `catalogbot check` of it would not
// judge for want of an object: a read the review tolerates, or one it does
// not make (a catalog the commit does not touch, a directory whose
// packages are known by its tree id), leaves the verdict standing.
//
// view.go holds the tree wrapper that puts a policy under trial in place
// of the base's; text.go renders a Report.
package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// Version is the version of the Report's JSON shape. It changes only when
// a field changes meaning or goes away; new fields may appear without it.
const Version = 1

// DefaultLast is how many commits a backtest replays when neither Last nor
// Since bounds it.
const DefaultLast = 20

// Policy is a policy file under trial, in place of each base commit's.
type Policy struct {
	// Name says where it came from (a file name), for the report.
	Name string
	Data []byte
}

// Options say which commits to replay and how. The zero value replays the
// last DefaultLast commits from HEAD under each base commit's own policy,
// offline.
type Options struct {
	// Head is where the first-parent walk starts; "" is HEAD.
	Head string
	// Last is the most commits replayed (0: DefaultLast, unless Since is
	// set, which then alone bounds the walk).
	Last int
	// Since stops the walk at this commit, which is not replayed.
	Since string
	// Policies are the policies under trial: none reads each base
	// commit's own, as the App does; two are compared (Report.Flips).
	Policies []Policy

	// ImageOptions, AllImages and Renderer are review.PR's: nil leaves
	// the images check out and the reference list entries unrendered, so
	// a backtest contacts no registry unless asked to.
	ImageOptions *images.Options
	AllImages    bool
	Renderer     *render.Renderer
	// Index keeps the package index of each base's catalogs on disk
	// across runs (review.PR's).
	Index *pkgindex.Store

	// Progress, when set, is called before the first commit is reviewed
	// and after each one.
	Progress func(Progress)
	// Now is the clock of Progress; nil is time.Now.
	Now func() time.Time
}

// Progress is how far a backtest has got.
type Progress struct {
	Done, Total int
	Elapsed     time.Duration
	// Commit is the commit just reviewed ("" before the first).
	Commit string
}

// ETA is the time the rest will take at the pace so far; 0 before the
// first commit is done.
func (p Progress) ETA() time.Duration {
	if p.Done == 0 {
		return 0
	}
	return p.Elapsed / time.Duration(p.Done) * time.Duration(p.Total-p.Done)
}

// Report is a backtest's outcome. Its JSON shape is documented in
// docs/backtest.md and stable within a Version.
type Report struct {
	Version int    `json:"version"`
	Repo    string `json:"repo"`
	Head    string `json:"head"`
	// Policies name the policies each commit was reviewed under, in the
	// order of Commit.Reviews and Summaries: "base" for each base
	// commit's own.
	Policies []string `json:"policies"`
	// Commits are oldest first.
	Commits   []Commit  `json:"commits"`
	Summaries []Summary `json:"summaries"`
	// Flips are the commits whose verdict differs between two policies;
	// nil unless two were given.
	Flips []Flip `json:"flips,omitempty"`
	// HistoryEnd says why the walk stopped before Last commits: "root"
	// (the first commit was reached), "since", or "missing" (a parent
	// commit is not in the repository: a shallow clone). "" when Last
	// commits were found.
	HistoryEnd string `json:"historyEnd,omitempty"`
}

// Commit is one replayed commit.
type Commit struct {
	SHA     string    `json:"sha"`
	Parent  string    `json:"parent"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	Time    time.Time `json:"time"`
	// Roots are the catalog roots the commit touched.
	Roots []string `json:"roots"`
	// Unreadable, when set, says which object could not be read; the
	// commit then has no Reviews.
	Unreadable *Unreadable `json:"unreadable,omitempty"`
	Reviews    []Review    `json:"reviews,omitempty"`
	// Millis is how long reading and reviewing the commit took, under
	// every policy, in milliseconds.
	Millis int64 `json:"millis"`
}

// Unreadable names what a review could not read: the first read, in the
// review's own order (its checks by name, each in path order), that the
// review needed and that found no object, or other bytes than the
// object's. A read the review tolerates does not make a commit unreadable,
// as it does not stop `catalogbot check`.
type Unreadable struct {
	// Path is "base:PATH" or "head:PATH", or "" when the commit itself
	// or its tree is missing.
	Path string `json:"path,omitempty"`
	// Object is the git object that could not be read, when known.
	Object string `json:"object,omitempty"`
	// Check is the check that needed it; "" when the review itself did
	// (the policy, say).
	Check  string `json:"check,omitempty"`
	Reason string `json:"reason"`
}

// Review is a commit's review under one policy.
type Review struct {
	Policy string `json:"policy"`
	// Verdict and Title are the catalogbot check run's (Outcome.Verdict).
	Verdict checks.Conclusion `json:"verdict"`
	Title   string            `json:"title"`
	// PolicyFindings say why the policy is invalid; nothing else was
	// checked then.
	PolicyFindings []checks.Finding `json:"policyFindings,omitempty"`
	Checks         []Check          `json:"checks"`
	// Mergeable is the merge decision with the forge's part taken as
	// given; Blocking lists every reason against it.
	Mergeable bool     `json:"mergeable"`
	Blocking  []string `json:"blocking"`
	// Owners is the approval state without any approval: what approving
	// the commit would have needed.
	Owners *Owners `json:"owners,omitempty"`
}

// Check is one check's conclusion. Findings are its errors; warnings and
// notes are only counted.
type Check struct {
	Name       string            `json:"name"`
	Conclusion checks.Conclusion `json:"conclusion"`
	Errors     int               `json:"errors"`
	Warnings   int               `json:"warnings"`
	Findings   []checks.Finding  `json:"findings,omitempty"`
	// Summary is the check's own, when it failed without an error
	// finding (it could not judge, say).
	Summary string `json:"summary,omitempty"`
}

// Owners is what approval a commit needed.
type Owners struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
	// Needs are the OWNERS files (or ci.yaml files) whose approvers must
	// approve, with who they are.
	Needs []Need `json:"needs,omitempty"`
	// Suggested is a small set of approvers who together would approve
	// it.
	Suggested []string `json:"suggested,omitempty"`
}

// Need is one approval a commit needed.
type Need struct {
	File      string   `json:"file"`
	Approvers []string `json:"approvers"`
	Paths     []string `json:"paths"`
}

// ownersCheck is the check whose verdict is kept apart from the content
// checks: every other check judges what the commit holds.
const ownersCheck = "owners"

// ContentFailed lists the checks other than owners that failed.
func (r *Review) ContentFailed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Name != ownersCheck && c.Conclusion == checks.Failure {
			out = append(out, c.Name)
		}
	}
	return out
}

// Summary sums up the commits' reviews under one policy.
type Summary struct {
	Policy     string `json:"policy"`
	Commits    int    `json:"commits"`
	Unreadable int    `json:"unreadable"`
	// InvalidPolicy counts the commits whose base policy was invalid.
	InvalidPolicy int `json:"invalidPolicy"`
	// Verdicts count the readable commits by verdict.
	Verdicts map[checks.Conclusion]int `json:"verdicts"`
	// Checks count each check's conclusions.
	Checks    map[string]map[checks.Conclusion]int `json:"checks"`
	Mergeable int                                  `json:"mergeable"`
	// ContentFailures are the commits whose content checks failed.
	ContentFailures []Failure `json:"contentFailures"`
}

// Failure is a commit whose content checks failed.
type Failure struct {
	SHA     string   `json:"sha"`
	Subject string   `json:"subject"`
	Checks  []string `json:"checks"`
}

// Flip is a commit whose verdict differs between the two policies.
type Flip struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
	// From and To are its verdicts under the first and second policy.
	From Brief `json:"from"`
	To   Brief `json:"to"`
}

// Brief is a review in a few words, for a flip.
type Brief struct {
	Verdict   checks.Conclusion `json:"verdict"`
	Failed    []string          `json:"failed"`
	Mergeable bool              `json:"mergeable"`
}

func briefOf(r Review) Brief {
	b := Brief{Verdict: r.Verdict, Mergeable: r.Mergeable, Failed: []string{}}
	if len(r.PolicyFindings) > 0 {
		b.Failed = append(b.Failed, "policy")
	}
	for _, c := range r.Checks {
		if c.Conclusion == checks.Failure {
			b.Failed = append(b.Failed, c.Name)
		}
	}
	return b
}

// trial is a policy under trial, parsed.
type trial struct {
	name string
	data []byte
	pol  *policy.Policy
}

// Run replays the history of the git repository at repoDir. The error is
// for what allows no report: a repository that cannot be opened, a
// revision that does not resolve, an invalid policy under trial.
func Run(ctx context.Context, repoDir string, o Options) (*Report, error) {
	if len(o.Policies) > 2 {
		return nil, fmt.Errorf("at most two policies can be compared, got %d", len(o.Policies))
	}
	var trials []trial
	for _, p := range o.Policies {
		pol, findings := policy.Parse(p.Name, p.Data)
		if len(findings) > 0 {
			return nil, &PolicyError{Name: p.Name, Findings: findings}
		}
		trials = append(trials, trial{name: p.Name, data: p.Data, pol: pol})
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}

	// Opened as every check opens a repository, so that objects kept in
	// alternates (a clone made with --shared or --reference) are found.
	repo, err := change.Open(repoDir)
	if err != nil {
		return nil, err
	}
	head := o.Head
	if head == "" {
		head = "HEAD"
	}
	headSHA, err := change.Resolve(repo, head)
	if err != nil {
		return nil, err
	}
	sinceSHA := ""
	if o.Since != "" {
		if sinceSHA, err = change.Resolve(repo, o.Since); err != nil {
			return nil, err
		}
	}
	last := o.Last
	if last == 0 && o.Since == "" {
		last = DefaultLast
	}
	commits, end, err := pick(repo, headSHA, sinceSHA, last, trials)
	if err != nil {
		return nil, err
	}

	rep := &Report{Version: Version, Repo: repoDir, Head: headSHA, Commits: commits, HistoryEnd: end}
	if len(trials) == 0 {
		rep.Policies = []string{"base"}
	}
	for _, t := range trials {
		rep.Policies = append(rep.Policies, t.name)
	}

	start := now()
	progress := func(done int, sha string) {
		if o.Progress != nil {
			o.Progress(Progress{Done: done, Total: len(commits), Elapsed: now().Sub(start), Commit: sha})
		}
	}
	progress(0, "")
	for i := range rep.Commits {
		c := &rep.Commits[i]
		if c.Unreadable == nil {
			t0 := now()
			if err := reviewCommit(ctx, repoDir, c, trials, o); err != nil {
				return nil, err
			}
			c.Millis = now().Sub(t0).Milliseconds()
		}
		progress(i+1, c.SHA)
	}
	rep.sum()
	return rep, nil
}

// PolicyError is a policy under trial that is invalid.
type PolicyError struct {
	Name     string
	Findings []checks.Finding
}

func (e *PolicyError) Error() string {
	msgs := make([]string, 0, len(e.Findings))
	for _, f := range e.Findings {
		if f.Line > 0 {
			msgs = append(msgs, fmt.Sprintf("%s:%d: %s", e.Name, f.Line, f.Message))
		} else {
			msgs = append(msgs, fmt.Sprintf("%s: %s", e.Name, f.Message))
		}
	}
	return "invalid policy: " + strings.Join(msgs, "; ")
}

// pick walks the first parents from head, newest first, and returns, oldest
// first, up to last commits (0: no bound) that touched a catalog root:
// the trials' roots, or else those of the policy at each commit's first
// parent, as the review will read it.
func pick(repo *git.Repository, head, since string, last int, trials []trial) ([]Commit, string, error) {
	var out []Commit
	end := ""
	h := plumbing.NewHash(head)
	for last == 0 || len(out) < last {
		if h.String() == since {
			end = "since"
			break
		}
		c, err := repo.CommitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			if len(out) == 0 && h.String() == head {
				return nil, "", fmt.Errorf("commit %s: %w", head, err)
			}
			end = "missing"
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("commit %s: %w", h, err)
		}
		if c.NumParents() == 0 {
			end = "root"
			break
		}
		parent := c.ParentHashes[0]
		cm := Commit{
			SHA:     c.Hash.String(),
			Parent:  parent.String(),
			Subject: subject(c.Message),
			Author:  c.Author.Name,
			Time:    c.Author.When.UTC(),
		}
		roots, err := touchedRoots(repo, c, parent, trials)
		switch {
		case unreadable(err):
			// Which roots it touched is unknown; it is listed so that
			// the gap shows rather than being skipped silently.
			cm.Unreadable = unreadableOf(&cm, nil, err)
			cm.Roots = []string{}
			out = append(out, cm)
		case err != nil:
			return nil, "", fmt.Errorf("commit %s: %w", change.ShortSHA(cm.SHA), err)
		case len(roots) > 0:
			cm.Roots = roots
			out = append(out, cm)
		}
		h = parent
	}
	slices.Reverse(out)
	return out, end, nil
}

func subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(s)
}

// touchedRoots lists the catalog roots whose trees differ between c and
// its parent. Comparing the roots' tree ids is enough: git gives equal
// trees equal ids.
func touchedRoots(repo *git.Repository, c *object.Commit, parent plumbing.Hash, trials []trial) ([]string, error) {
	pc, err := repo.CommitObject(parent)
	if err != nil {
		return nil, err
	}
	// The roots are the policy's catalogs resolved against both trees,
	// as the review resolves them: a catalogs list or a conventions line
	// names its roots by pattern, and a catalog the commit adds counts.
	base, err := change.TreeFS(repo, parent.String())
	if err != nil {
		return nil, err
	}
	head, err := change.TreeFS(repo, c.Hash.String())
	if err != nil {
		return nil, err
	}
	resolved := func(pol *policy.Policy, findings []checks.Finding) []string {
		if len(findings) > 0 {
			// The review will say the policy is invalid; which roots
			// it meant is unknown, so the default's count.
			pol = policy.Default()
		}
		r, _, err := pol.Resolved(base, head)
		if err != nil {
			return policy.Default().Catalog.Roots
		}
		return r.Catalog.Roots
	}
	var roots []string
	if len(trials) == 0 {
		pol, findings, err := policy.Load(base)
		if err != nil {
			return nil, err
		}
		roots = resolved(pol, findings)
	}
	for _, t := range trials {
		pol, findings := policy.LoadWith(base, t.name, t.data)
		for _, r := range resolved(pol, findings) {
			if !slices.Contains(roots, r) {
				roots = append(roots, r)
			}
		}
	}
	a, err := pc.Tree()
	if err != nil {
		return nil, err
	}
	b, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var touched []string
	for _, r := range roots {
		ida, err := entryID(a, r)
		if err != nil {
			return nil, err
		}
		idb, err := entryID(b, r)
		if err != nil {
			return nil, err
		}
		if ida != idb {
			touched = append(touched, r)
		}
	}
	slices.Sort(touched)
	return touched, nil
}

// entryID is the object id at path p of t, zero when there is none.
func entryID(t *object.Tree, p string) (plumbing.Hash, error) {
	if p == "." || p == "" {
		return t.Hash, nil
	}
	e, err := t.FindEntry(p)
	if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return e.Hash, nil
}

// reviewCommit reviews c under each policy, as a pull request from its
// parent, through the same review.PR the check command builds: no author,
// no approvals, no conversation.
func reviewCommit(ctx context.Context, repoDir string, c *Commit, trials []trial, o Options) error {
	ch, baseFS, headFS, err := change.FromGit(repoDir, c.Parent, c.SHA)
	if unreadable(err) {
		c.Unreadable = &Unreadable{Reason: err.Error()}
		return nil
	}
	if err != nil {
		return err
	}
	runs := []*trial{nil}
	if len(trials) > 0 {
		runs = runs[:0]
		for i := range trials {
			runs = append(runs, &trials[i])
		}
	}
	for _, t := range runs {
		head := headFS
		base := baseFS
		name := "base"
		if t != nil {
			base, name = view{fsys: baseFS, policy: t.data}, t.name
		}
		pr := &review.PR{
			Change:       ch,
			Base:         base,
			Head:         head,
			ImageOptions: o.ImageOptions,
			AllImages:    o.AllImages,
			Renderer:     o.Renderer,
			Index:        o.Index,
		}
		out, err := review.Evaluate(ctx, pr)
		// An object missing, or one whose bytes are not the ones git
		// named, that the review needed: no verdict, as `catalogbot
		// check` and the App give none.
		if u := unreadableOf(c, out, err); u != nil {
			c.Unreadable, c.Reviews = u, nil
			return nil
		}
		if err != nil {
			return fmt.Errorf("review %s: %w", change.ShortSHA(c.SHA), err)
		}
		c.Reviews = append(c.Reviews, reviewOf(name, out))
	}
	return nil
}

// unreadable says whether err is a read of the repository that gave no
// bytes, or other bytes than the object's: a commit that cannot be judged.
func unreadable(err error) bool {
	return errors.Is(err, plumbing.ErrObjectNotFound) || errors.Is(err, change.ErrCorruptObject)
}

// unreadableOf says what of c the review could not read and needed: the
// error of a review that gave no outcome, or else the first check, by
// name, that could not judge for want of an object. Nil when the review
// judged c.
func unreadableOf(c *Commit, out *review.Outcome, err error) *Unreadable {
	if err != nil {
		if !unreadable(err) {
			return nil
		}
		u := &Unreadable{Reason: err.Error()}
		if oe, ok := change.Unreadable(err); ok {
			u.Path, u.Object = sidePath(c, oe.Commit, oe.Path), oe.Object
		}
		return u
	}
	if out == nil {
		return nil
	}
	for _, res := range out.Report.Results {
		if res.Conclusion != checks.Pending {
			continue
		}
		for _, w := range res.Waits {
			if w.Class == checks.WaitUnreadable {
				return &Unreadable{Path: sidePath(c, w.Commit, w.Path), Object: w.Object, Check: res.Name, Reason: strings.TrimSpace(res.Summary)}
			}
		}
	}
	return nil
}

// sidePath is "base:PATH" or "head:PATH" for a path of the tree of
// commit, c's parent or c; the path alone for any other commit.
func sidePath(c *Commit, commit, p string) string {
	switch commit {
	case c.SHA:
		return "head:" + p
	case c.Parent:
		return "base:" + p
	}
	return p
}

func reviewOf(name string, out *review.Outcome) Review {
	d := out.Decide(review.Forge{Local: true})
	verdict, title := out.Verdict()
	r := Review{
		Policy:         name,
		Verdict:        verdict,
		Title:          title,
		PolicyFindings: out.PolicyFindings,
		Checks:         []Check{},
		Mergeable:      d.Merge,
		Blocking:       d.Reasons(),
	}
	if r.Blocking == nil {
		r.Blocking = []string{}
	}
	for _, res := range out.Report.Results {
		c := Check{Name: res.Name, Conclusion: res.Conclusion}
		for _, f := range res.Findings {
			switch f.Severity {
			case checks.SeverityError:
				c.Errors++
				c.Findings = append(c.Findings, f)
			case checks.SeverityWarning:
				c.Warnings++
			}
		}
		if c.Errors == 0 && res.Conclusion != checks.Success {
			c.Summary = res.Summary
		}
		r.Checks = append(r.Checks, c)
	}
	if out.Owners != nil {
		r.Owners = ownersOf(out.Owners)
	}
	return r
}

func ownersOf(st *owners.State) *Owners {
	o := &Owners{Approved: st.Approved, Reason: st.Reason, Suggested: st.Suggested}
	for _, req := range st.Required {
		if req.Approved {
			continue
		}
		n := Need{File: req.File, Paths: req.Paths, Approvers: []string{}}
		for _, cov := range st.Files {
			if cov.OwnersFile != req.File {
				continue
			}
			for _, a := range cov.Approvers {
				if !slices.Contains(n.Approvers, a) {
					n.Approvers = append(n.Approvers, a)
				}
			}
		}
		slices.Sort(n.Approvers)
		o.Needs = append(o.Needs, n)
	}
	return o
}

// sum fills in the summaries and, for two policies, the flips.
func (r *Report) sum() {
	r.Summaries = make([]Summary, len(r.Policies))
	for i, p := range r.Policies {
		r.Summaries[i] = Summary{
			Policy:          p,
			Verdicts:        map[checks.Conclusion]int{},
			Checks:          map[string]map[checks.Conclusion]int{},
			ContentFailures: []Failure{},
		}
	}
	for _, c := range r.Commits {
		for i := range r.Summaries {
			s := &r.Summaries[i]
			s.Commits++
			if c.Unreadable != nil {
				s.Unreadable++
				continue
			}
			rv := c.Reviews[i]
			if len(rv.PolicyFindings) > 0 {
				s.InvalidPolicy++
			}
			s.Verdicts[rv.Verdict]++
			if rv.Mergeable {
				s.Mergeable++
			}
			for _, ck := range rv.Checks {
				if s.Checks[ck.Name] == nil {
					s.Checks[ck.Name] = map[checks.Conclusion]int{}
				}
				s.Checks[ck.Name][ck.Conclusion]++
			}
			if failed := rv.ContentFailed(); len(failed) > 0 {
				s.ContentFailures = append(s.ContentFailures, Failure{SHA: c.SHA, Subject: c.Subject, Checks: failed})
			}
		}
	}
	if len(r.Policies) != 2 {
		return
	}
	r.Flips = []Flip{}
	for _, c := range r.Commits {
		if c.Unreadable != nil {
			continue
		}
		a, b := briefOf(c.Reviews[0]), briefOf(c.Reviews[1])
		if a.Verdict != b.Verdict || a.Mergeable != b.Mergeable || !slices.Equal(a.Failed, b.Failed) {
			r.Flips = append(r.Flips, Flip{SHA: c.SHA, Subject: c.Subject, From: a, To: b})
		}
	}
}

// ReadableCommits counts the commits that were reviewed.
func (r *Report) ReadableCommits() int {
	n := 0
	for _, c := range r.Commits {
		if c.Unreadable == nil {
			n++
		}
	}
	return n
}

// Failed says whether any readable commit's content checks failed under
// any policy, or a verdict flipped between two: what a backtest run as a
// gate stops on.
func (r *Report) Failed() bool {
	if len(r.Flips) > 0 {
		return true
	}
	for _, s := range r.Summaries {
		if len(s.ContentFailures) > 0 {
			return true
		}
	}
	return false
}
