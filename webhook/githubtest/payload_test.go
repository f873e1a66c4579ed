package githubtest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// field walks a decoded payload by a dotted path ("pull_request.head.sha", "commits.0.id").
func field(t *testing.T, v any, path string) any {
	t.Helper()
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func TestPayloadsCarryTheFakesState(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
	pr := repo.OpenPR("bob", "feature", "main")
	pr.SetLabels("hold")
	commentID := repo.Comment(pr.Number, "alice", "/approve")
	repo.Review(pr.Number, "carol", "APPROVED", "ok", "")
	head := pr.HeadSHA()
	inst := float64(s.InstallationID(repo))
	mainTip := repo.Branch("main")
	mainParent := repo.Parents(mainTip)

	tests := []struct {
		event, action string
		args          githubtest.PayloadArgs
		want          map[string]any
	}{
		{"pull_request", "opened", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}, map[string]any{
			"action": "opened", "number": float64(pr.Number), "installation.id": inst,
			"repository.full_name": "acme/catalog", "repository.owner.login": "acme", "repository.default_branch": "main",
			"repository.clone_url": repo.CloneURL(), "pull_request.head.sha": head, "pull_request.head.ref": "feature",
			"pull_request.base.ref": "main", "pull_request.base.sha": mainTip, "pull_request.user.login": "bob",
			"pull_request.draft": false, "pull_request.labels.0.name": "hold", "sender.login": "bob",
		}},
		{"pull_request", "edited", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}, map[string]any{
			"action": "edited", "pull_request.number": float64(pr.Number),
		}},
		{"issue_comment", "created", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}, map[string]any{
			"issue.number": float64(pr.Number), "comment.id": float64(commentID), "comment.body": "/approve",
			"comment.user.login": "alice", "sender.login": "alice", "installation.id": inst,
			"issue.pull_request.url": fmt.Sprintf("%s/repos/acme/catalog/pulls/%d", s.URL, pr.Number),
		}},
		{"pull_request_review", "submitted", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}, map[string]any{
			"review.state": "approved", "review.commit_id": head, "review.user.login": "carol",
			"pull_request.head.sha": head, "sender.login": "carol",
		}},
		{"check_suite", "rerequested", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}, map[string]any{
			"check_suite.head_sha": head, "check_suite.head_branch": "feature",
			"check_suite.pull_requests.0.number": float64(pr.Number), "installation.id": inst,
		}},
		{"push", "", githubtest.PayloadArgs{Repo: repo}, map[string]any{
			"ref": "refs/heads/main", "after": mainTip, "before": parentOrZero(mainParent),
			"head_commit.id": mainTip, "repository.full_name": "acme/catalog", "installation.id": inst,
		}},
		{"installation_repositories", "added", githubtest.PayloadArgs{Repo: repo}, map[string]any{
			"installation.id": inst, "repositories_added.0.full_name": "acme/catalog",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.event+"."+tt.action, func(t *testing.T) {
			var p map[string]any
			if err := json.Unmarshal(s.Payload(tt.event, tt.action, tt.args), &p); err != nil {
				t.Fatal(err)
			}
			for path, want := range tt.want {
				if got := field(t, p, path); got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
		})
	}
}

func parentOrZero(parents []string) string {
	if len(parents) == 0 {
		return strings.Repeat("0", 40)
	}
	return parents[0]
}

func TestCheckRunPayloadNamesTheRun(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"x": "y"}, "x")
	pr := repo.OpenPR("bob", "feature", "main")
	c, _ := installationClient(t, s, repo)
	run, _, err := c.Checks.CreateCheckRun(t.Context(), owner, name, checkRunOpts(pr.HeadSHA()))
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(s.Payload("check_run", "rerequested", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}), &p); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"action": "rerequested", "check_run.id": float64(run.GetID()), "check_run.head_sha": pr.HeadSHA(),
		"check_run.name": "catalogbot", "check_run.pull_requests.0.number": float64(pr.Number),
		"check_run.check_suite.head_sha": pr.HeadSHA(),
	} {
		if got := field(t, p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}

func TestDeliverSignsLikeGitHub(t *testing.T) {
	s, repo := newRepo(t)
	type got struct {
		header http.Header
		body   []byte
	}
	deliveries := make(chan got, 2)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		deliveries <- got{r.Header.Clone(), b}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer receiver.Close()

	body := s.Payload("push", "", githubtest.PayloadArgs{Repo: repo})
	resp := s.Deliver(t, receiver.URL, "s3cret", "push", body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	d := <-deliveries
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(d.body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); d.header.Get("X-Hub-Signature-256") != want {
		t.Errorf("signature %s, want %s", d.header.Get("X-Hub-Signature-256"), want)
	}
	if d.header.Get("X-GitHub-Event") != "push" || len(d.header.Get("X-GitHub-Delivery")) != 36 || string(d.body) != string(body) {
		t.Errorf("delivery headers %v", d.header)
	}
	s.Deliver(t, receiver.URL, "s3cret", "push", body, "fixed-id")
	if d := <-deliveries; d.header.Get("X-GitHub-Delivery") != "fixed-id" {
		t.Errorf("delivery id %q, want the given one", d.header.Get("X-GitHub-Delivery"))
	}
}

// TestHeadChangePayloads: each head change is delivered as GitHub sent it
// then, with that head and that time, whatever the PR's state now.
func TestHeadChangePayloads(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
	pr := repo.OpenPR("bob", "feature", "main")
	opened := pr.HeadSHA()
	s.Advance(time.Minute)
	second := pr.Push(map[string]string{"catalog/b/index.yaml": "name: b3\n"}, "b3")
	s.Advance(time.Minute)
	pr.Push(map[string]string{"catalog/b/index.yaml": "name: b4\n"}, "b4")
	s.Advance(time.Minute)
	repo.Comment(pr.Number, "alice", "later")

	hc := pr.HeadChanges()
	if len(hc) != 3 || hc[0].Action != "opened" || hc[0].SHA != opened || hc[1].Action != "synchronize" ||
		hc[1].Before != opened || hc[1].SHA != second || !hc[1].At.After(hc[0].At) || !hc[2].At.After(hc[1].At) {
		t.Fatalf("head changes: %+v", hc)
	}
	var p map[string]any
	if err := json.Unmarshal(s.Payload("pull_request", "synchronize", githubtest.PayloadArgs{Repo: repo, PR: pr.Number, HeadChange: &hc[1]}), &p); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"action": "synchronize", "number": float64(pr.Number), "pull_request.head.sha": second,
		"pull_request.updated_at": hc[1].At.UTC().Format(time.RFC3339), "before": opened, "after": second,
	} {
		if got := field(t, p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}
