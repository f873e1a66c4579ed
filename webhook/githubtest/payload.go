package githubtest

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// webhookExamples are GitHub's own example deliveries; payloads start from them so that fields
// the fake does not model keep GitHub's real shape.
//
//go:embed testdata/webhooks/*.json
var webhookExamples embed.FS

// PayloadArgs say what a webhook payload is about. Zero fields take defaults from the fake's state.
type PayloadArgs struct {
	Repo   *Repo
	PR     int    // pull_request, issue_comment, pull_request_review, check_run/check_suite (its head)
	Sender string // default: the PR author, the comment's or review's user, or the repo owner

	CommentID  int64  // issue_comment; default the PR's latest comment
	ReviewID   int64  // pull_request_review; default the PR's latest review
	CheckRunID int64  // check_run; default the latest run on the PR's head
	Label      string // pull_request labeled/unlabeled
	// Reason is why pull_request dequeued took the pull request out of
	// its merge queue (default "MANUAL"), or why merge_group destroyed
	// destroyed the group (default "merged").
	Reason string
	// Group is the merge group of a merge_group delivery.
	Group *MergeGroup
	// HeadChange, for pull_request opened and synchronize, is the head
	// change (from PR.HeadChanges) to deliver: its head, time and old
	// head stand in for the PR's current ones, as when GitHub sent it.
	HeadChange *HeadChange

	// push: Ref defaults to the default branch, After to its tip, Before to After's first parent.
	Ref, Before, After string
}

// examplePayload loads the example for event.action, or any example of event when GitHub ships
// none for that action (the action is then overwritten).
func examplePayload(event, action string) (map[string]any, error) {
	names, err := fs.Glob(webhookExamples, "testdata/webhooks/"+event+".*.json")
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no example payload for event %q in testdata/webhooks", event)
	}
	sort.Strings(names)
	pick := names[0]
	for _, n := range names {
		if strings.HasPrefix(n, "testdata/webhooks/"+event+"."+action+".") {
			pick = n
			break
		}
	}
	b, err := webhookExamples.ReadFile(pick)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", pick, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", pick, err)
	}
	return m, nil
}

// dequeuedFields are the fields of a pull_request dequeued delivery, by
// GitHub's webhook schema (which allows no others).
var dequeuedFields = map[string]bool{"action": true, "number": true, "reason": true, "pull_request": true,
	"repository": true, "installation": true, "organization": true, "sender": true}

// merge overwrites dst's keys with src's, recursing into objects both have.
func merge(dst map[string]any, src obj) {
	for k, v := range src {
		if sv, ok := v.(obj); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// Payload builds the body of a webhook delivery from GitHub's example for event.action, with the
// repository, installation, pull request, comment, review, check and push fields set from the
// fake's state. It fails the test when the event has no example or the arguments name nothing.
func (s *Server) Payload(event, action string, args PayloadArgs) []byte {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.payloadLocked(event, action, args)
	if err != nil {
		s.t.Fatalf("githubtest: %v", err)
	}
	return b
}

// payloadLocked is Payload with s.mu held, reporting what Payload fails
// the test for.
func (s *Server) payloadLocked(event, action string, args PayloadArgs) ([]byte, error) {
	p := map[string]any{}
	if event != "merge_group" {
		// GitHub ships no example of merge_group: its payload is made
		// whole from the webhook schema's fields (fillGroup).
		var err error
		if p, err = examplePayload(event, action); err != nil {
			return nil, err
		}
	}
	if err := s.fillPayload(p, event, action, args); err != nil {
		return nil, fmt.Errorf("payload %s.%s: %w", event, action, err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding payload: %w", err)
	}
	return b, nil
}

// fillGroup sets the fields of a merge_group delivery, those GitHub's
// webhook schema gives it and no others.
func (s *Server) fillGroup(p map[string]any, r *Repo, action string, a PayloadArgs) error {
	g := a.Group
	if g == nil {
		return fmt.Errorf("merge_group needs Group")
	}
	c, err := r.resolve(g.HeadSHA)
	if err != nil {
		return err
	}
	person := func(sig object.Signature) obj { return obj{"name": sig.Name, "email": sig.Email} }
	p["merge_group"] = obj{
		"head_sha": g.HeadSHA, "head_ref": g.HeadRef, "base_sha": g.BaseSHA, "base_ref": "refs/heads/" + g.BaseRef,
		"head_commit": obj{
			"id": c.Hash.String(), "tree_id": c.TreeHash.String(), "message": c.Message,
			"timestamp": c.Committer.When.UTC().Format(time.RFC3339),
			"author":    person(c.Author), "committer": person(c.Committer),
		},
	}
	if action == "destroyed" {
		p["reason"] = cmp.Or(a.Reason, "merged")
	}
	return nil
}

func (s *Server) fillPayload(p map[string]any, event, action string, a PayloadArgs) error {
	if _, ok := p["action"]; ok || action != "" && action != "event" {
		p["action"] = action
	}
	r := a.Repo
	if r == nil {
		if len(s.repoOrder) == 0 {
			return fmt.Errorf("no repository")
		}
		r = s.repoOrder[0]
	}
	in := s.installationOf(r.Owner)
	sender := a.Sender
	var pr *PR
	if a.PR != 0 {
		if pr = r.prs[a.PR]; pr == nil {
			return fmt.Errorf("no pull request #%d in %s", a.PR, r.FullName())
		}
		if sender == "" {
			sender = pr.author
		}
	}
	if repo, ok := p["repository"].(map[string]any); ok || event != "installation" && event != "installation_repositories" {
		if repo == nil {
			repo = map[string]any{}
			p["repository"] = repo
		}
		rj := s.repoJSON(r)
		for _, k := range []string{"id", "node_id", "name", "full_name", "private", "html_url", "url", "clone_url", "git_url", "ssh_url", "svn_url", "default_branch"} {
			repo[k] = rj[k]
		}
		owner, _ := repo["owner"].(map[string]any)
		if owner == nil {
			owner = map[string]any{}
			repo["owner"] = owner
		}
		merge(owner, s.userJSON(r.Owner))
		if _, ok := repo["master_branch"]; ok {
			repo["master_branch"] = r.defaultBranch
		}
	}
	instObj, _ := p["installation"].(map[string]any)
	if instObj == nil {
		instObj = map[string]any{}
		p["installation"] = instObj
	}
	instObj["id"] = in.id
	instObj["node_id"] = nodeID("II_", in.id)

	switch event {
	case "pull_request":
		if pr == nil {
			return fmt.Errorf("pull_request needs PR")
		}
		p["number"] = pr.Number
		s.mergePull(p, pr)
		if hc := a.HeadChange; hc != nil {
			pull := p["pull_request"].(map[string]any)
			head, _ := pull["head"].(obj)
			if head == nil {
				return fmt.Errorf("pull_request payload has no head")
			}
			head["sha"], pull["updated_at"] = hc.SHA, ts(hc.At)
			if hc.Action == "synchronize" {
				p["before"], p["after"] = hc.Before, hc.SHA
			}
		}
		if a.Label != "" {
			p["label"] = s.labelJSON(r, a.Label)
		}
		if action == "dequeued" {
			// GitHub ships no example of it: the example borrowed
			// loses what its own action carries, and gains the reason.
			for k := range p {
				if !dequeuedFields[k] {
					delete(p, k)
				}
			}
			p["reason"] = cmp.Or(a.Reason, "MANUAL")
		}
	case "merge_group":
		if err := s.fillGroup(p, r, action, a); err != nil {
			return err
		}
	case "issue_comment":
		if pr == nil {
			return fmt.Errorf("issue_comment needs PR")
		}
		c := r.findComment(pr.Number, a.CommentID)
		if c == nil {
			return fmt.Errorf("no comment %d on #%d", a.CommentID, pr.Number)
		}
		if a.Sender == "" {
			sender = c.User
			if action == "edited" && c.editedBy != "" {
				sender = c.editedBy
			}
		}
		if action == "edited" {
			p["changes"] = obj{"body": obj{"from": c.prevBody}}
		}
		issue, _ := p["issue"].(map[string]any)
		if issue == nil {
			issue = map[string]any{}
			p["issue"] = issue
		}
		pj := s.pullJSON(pr, false)
		for _, k := range []string{"number", "title", "user", "state", "labels", "body", "created_at", "updated_at", "closed_at", "author_association", "locked"} {
			issue[k] = pj[k]
		}
		issue["id"], issue["node_id"] = pr.ID, nodeID("I_", pr.ID)
		issue["url"], issue["html_url"] = pj["issue_url"], pj["html_url"]
		issue["comments_url"] = pj["comments_url"]
		issue["draft"] = pr.draft
		issue["pull_request"] = obj{
			"url": pj["url"], "html_url": pj["html_url"], "diff_url": pj["diff_url"], "patch_url": pj["patch_url"],
			"merged_at": pj["merged_at"],
		}
		comment, _ := p["comment"].(map[string]any)
		if comment == nil {
			comment = map[string]any{}
			p["comment"] = comment
		}
		merge(comment, s.commentJSON(r, c))
	case "pull_request_review":
		if pr == nil {
			return fmt.Errorf("pull_request_review needs PR")
		}
		rv := r.findReview(pr.Number, a.ReviewID)
		if rv == nil {
			return fmt.Errorf("no review %d on #%d", a.ReviewID, pr.Number)
		}
		if a.Sender == "" {
			sender = rv.user
		}
		s.mergePull(p, pr)
		review, _ := p["review"].(map[string]any)
		if review == nil {
			review = map[string]any{}
			p["review"] = review
		}
		rj := s.reviewJSON(r, rv)
		rj["state"] = strings.ToLower(rv.state) // webhooks spell review states in lower case
		merge(review, rj)
	case "check_run":
		if pr == nil {
			return fmt.Errorf("check_run needs PR")
		}
		cr := r.findCheckRun(pr.headSHA, a.CheckRunID)
		if cr == nil {
			return fmt.Errorf("no check run %d on %s", a.CheckRunID, pr.headSHA)
		}
		run, _ := p["check_run"].(map[string]any)
		if run == nil {
			run = map[string]any{}
			p["check_run"] = run
		}
		rj := s.checkRunJSON(r, cr)
		merge(run, rj)
		if suite, ok := run["check_suite"].(map[string]any); ok {
			cs := r.appSuite(cr.HeadSHA, pr.headRef, "", cr.app)
			merge(suite, s.suitePayload(r, cs))
		}
	case "check_suite":
		if pr == nil {
			return fmt.Errorf("check_suite needs PR")
		}
		suite, _ := p["check_suite"].(map[string]any)
		if suite == nil {
			suite = map[string]any{}
			p["check_suite"] = suite
		}
		merge(suite, s.suitePayload(r, r.suiteFor(pr.headSHA, pr.headRef, "")))
	case "push":
		if err := s.fillPush(p, r, a); err != nil {
			return err
		}
		if sender == "" {
			sender = r.Owner
		}
	case "installation", "installation_repositories":
		merge(instObj, s.installationJSON(in))
		var repos []obj
		for _, rp := range in.repos {
			repos = append(repos, obj{"id": rp.ID, "node_id": nodeID("R_", rp.ID), "name": rp.Name, "full_name": rp.FullName(), "private": true})
		}
		if event == "installation" {
			p["repositories"] = repos
		} else {
			p["repositories_added"], p["repositories_removed"] = repos, []obj{}
			p["repository_selection"] = "selected"
		}
	}
	if sender == "" {
		sender = r.Owner
	}
	senderObj, _ := p["sender"].(map[string]any)
	if senderObj == nil {
		senderObj = map[string]any{}
		p["sender"] = senderObj
	}
	merge(senderObj, s.userJSON(sender))
	return nil
}

func (s *Server) mergePull(p map[string]any, pr *PR) {
	pull, _ := p["pull_request"].(map[string]any)
	if pull == nil {
		pull = map[string]any{}
		p["pull_request"] = pull
	}
	// head and base are replaced whole: the example's repo objects describe another repository.
	delete(pull, "head")
	delete(pull, "base")
	merge(pull, s.pullJSON(pr, true))
}

func (s *Server) suitePayload(r *Repo, cs *checkSuite) obj {
	j := s.checkSuiteJSON(r, cs)
	delete(j, "repository") // the delivery carries the repository at the top level
	return j
}

func (s *Server) fillPush(p map[string]any, r *Repo, a PayloadArgs) error {
	ref := a.Ref
	if ref == "" {
		ref = "refs/heads/" + r.defaultBranch
	}
	after := a.After
	if after == "" {
		h, ok := r.tip(strings.TrimPrefix(ref, "refs/heads/"))
		if !ok {
			return fmt.Errorf("no branch for %s", ref)
		}
		after = h.String()
	}
	c, err := r.resolve(after)
	if err != nil {
		return err
	}
	before := a.Before
	if before == "" {
		before = strings.Repeat("0", 40)
		if len(c.ParentHashes) > 0 {
			before = c.ParentHashes[0].String()
		}
	}
	p["ref"], p["before"], p["after"] = ref, before, after
	p["created"], p["deleted"], p["forced"], p["base_ref"] = before == strings.Repeat("0", 40), false, false, nil
	p["compare"] = fmt.Sprintf("%s/%s/compare/%s...%s", s.URL, r.FullName(), before[:12], after[:12])
	head := s.pushCommit(r, c)
	p["head_commit"] = head
	p["commits"] = []obj{head}
	p["pusher"] = obj{"name": r.Owner, "email": r.Owner + "@users.noreply.github.com"}
	return nil
}

func (s *Server) pushCommit(r *Repo, c *object.Commit) obj {
	added, removed, modified := []string{}, []string{}, []string{}
	if len(c.ParentHashes) > 0 {
		if changes, err := diffCommits(r.st, c.ParentHashes[0], c.Hash); err == nil {
			for _, ch := range changes {
				switch ch.Status {
				case "added":
					added = append(added, ch.Filename)
				case "removed":
					removed = append(removed, ch.Filename)
				case "renamed":
					added, removed = append(added, ch.Filename), append(removed, ch.PreviousFilename)
				default:
					modified = append(modified, ch.Filename)
				}
			}
		}
	}
	person := func(sig object.Signature) obj {
		return obj{"name": sig.Name, "email": sig.Email, "username": sig.Name}
	}
	return obj{
		"id": c.Hash.String(), "tree_id": c.TreeHash.String(), "distinct": true, "message": c.Message,
		"timestamp": c.Committer.When.UTC().Format(time.RFC3339),
		"url":       fmt.Sprintf("%s/%s/commit/%s", s.URL, r.FullName(), c.Hash),
		"author":    person(c.Author), "committer": person(c.Committer),
		"added": added, "removed": removed, "modified": modified,
	}
}

func (r *Repo) findComment(number int, id int64) *issueComment {
	return lastOf(r.comments, func(c *issueComment) bool { return c.number == number && (id == 0 || c.ID == id) })
}

func (r *Repo) findReview(number int, id int64) *review {
	return lastOf(r.reviews, func(rv *review) bool { return rv.number == number && (id == 0 || rv.id == id) })
}

func (r *Repo) findCheckRun(sha string, id int64) *checkRun {
	return lastOf(r.checkRuns, func(cr *checkRun) bool { return (id != 0 && cr.ID == id) || (id == 0 && cr.HeadSHA == sha) })
}

// lastOf is the last item that match accepts, or nil: the newest, since
// the fake appends.
func lastOf[T any](items []*T, match func(*T) bool) *T {
	for i := len(items) - 1; i >= 0; i-- {
		if match(items[i]) {
			return items[i]
		}
	}
	return nil
}

// Sign returns the X-Hub-Signature-256 value for body: "sha256=" and the hex HMAC-SHA256.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Sign is the package-level Sign.
func (s *Server) Sign(secret string, body []byte) string { return Sign(secret, body) }

// NewDeliveryID returns a random GUID like GitHub's X-GitHub-Delivery.
func NewDeliveryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// Deliver posts body to url as GitHub delivers a webhook: X-GitHub-Event, X-GitHub-Delivery (a
// random id unless one is given), X-Hub-Signature-256 with secret, and the hook's other headers.
// The response body is read in full and can be read again from the returned response.
func (s *Server) Deliver(t testing.TB, url, secret, event string, body []byte, delivery ...string) *http.Response {
	t.Helper()
	id := NewDeliveryID()
	if len(delivery) > 0 && delivery[0] != "" {
		id = delivery[0]
	}
	resp, err := s.post(url, secret, event, id, body)
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	return resp
}

// post delivers body as Deliver does, reporting what Deliver fails the
// test for.
func (s *Server) post(url, secret, event, id string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("delivering %s: %w", event, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/githubtest")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-GitHub-Hook-ID", "1")
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-GitHub-Hook-Installation-Target-ID", fmt.Sprint(s.appID))
	if secret != "" {
		req.Header.Set("X-Hub-Signature-256", Sign(secret, body))
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("delivering %s to %s: %w", event, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading the reply to %s: %w", event, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}
