package githubtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/catalogbot/catalogbot/webhook/ghapi"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// receiver is a webhook receiver that keeps what it was sent, checking
// each signature.
type receiver struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	got    []received
}

type received struct {
	event string
	body  map[string]any
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("X-Hub-Signature-256") != githubtest.Sign(rc.secret, body) {
		rc.t.Errorf("a %s delivery with a bad signature", r.Header.Get("X-GitHub-Event"))
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		rc.t.Errorf("a delivery that is not JSON: %v", err)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, received{r.Header.Get("X-GitHub-Event"), m})
	rc.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// wait waits for the deliveries event.action (action "" for push) and
// returns them all, failing the test after ten seconds.
func (rc *receiver) wait(event, action string) []received {
	rc.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		rc.mu.Lock()
		got := slices.Clone(rc.got)
		rc.mu.Unlock()
		for _, r := range got {
			if r.event == event && (action == "" || r.body["action"] == action) {
				return got
			}
		}
	}
	rc.t.Fatalf("no %s %s delivery within 10s", event, action)
	return nil
}

// TestMergeGroup drives a queue whose ruleset requires a check: the rules
// list it; a pull request whose head has not passed it is not admitted;
// the queue builds one group of two pull requests on the base's tip,
// delivers merge_group, waits while the check is missing or running,
// merges once it succeeds on the group's commit, and on a failure destroys
// the group and lets go of its pull requests, the base untouched.
func TestMergeGroup(t *testing.T) {
	s, repo := newRepo(t)
	rc := &receiver{t: t, secret: "hook-secret"}
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	s.SendWebhooks(t, hs.URL, "hook-secret", "merge_group", "pull_request", "push")
	repo.RequireMergeQueue("main")
	repo.RequireChecks("main", "catalogbot")
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()

	// go-github's RepositoryRule reads no merge_queue rule: the rules
	// are read as JSON.
	req, err := c.NewRequest(http.MethodGet, "repos/"+owner+"/"+name+"/rules/branches/main", nil)
	if err != nil {
		t.Fatal(err)
	}
	var rules []struct {
		Type       string `json:"type"`
		Parameters struct {
			Checks []struct{ Context string } `json:"required_status_checks"`
		} `json:"parameters"`
	}
	if _, err := c.Do(ctx, req, &rules); err != nil || len(rules) != 2 || rules[0].Type != "required_status_checks" ||
		len(rules[0].Parameters.Checks) != 1 || rules[0].Parameters.Checks[0].Context != "catalogbot" || rules[1].Type != "merge_queue" {
		t.Fatalf("rules = %+v, %v; want the required check catalogbot and the merge queue", rules, err)
	}
	report := func(sha, status, conclusion string) {
		t.Helper()
		opts := github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: sha, Status: github.String(status)}
		if conclusion != "" {
			opts.Conclusion = github.String(conclusion)
		}
		if _, _, err := c.Checks.CreateCheckRun(ctx, owner, name, opts); err != nil {
			t.Fatal(err)
		}
	}
	open := func(branch, file string) (*githubtest.PR, string) {
		t.Helper()
		repo.Commit(branch, map[string]string{file: "schema: olm.package\nname: " + branch + "\n"}, "add "+branch)
		pr := repo.OpenPR("bob", branch, "main")
		gpr, _, err := c.PullRequests.Get(ctx, owner, name, pr.Number)
		if err != nil {
			t.Fatal(err)
		}
		return pr, gpr.GetNodeID()
	}
	one, node1 := open("x", "catalog/x/index.yaml")
	two, node2 := open("y", "catalog/y/index.yaml")
	if _, err := ghapi.EnqueuePullRequest(ctx, c, node1, one.HeadSHA()); err == nil || !strings.Contains(err.Error(), `required status check "catalogbot"`) {
		t.Fatalf("enqueue before the required check passed = %v", err)
	}
	report(one.HeadSHA(), "completed", "success")
	report(two.HeadSHA(), "completed", "success")
	for i, node := range []string{node1, node2} {
		if _, err := ghapi.EnqueuePullRequest(ctx, c, node, []string{one.HeadSHA(), two.HeadSHA()}[i]); err != nil {
			t.Fatal(err)
		}
	}

	base := repo.Branch("main")
	g, err := repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.PRs, []int{one.Number, two.Number}) || g.BaseSHA != base || g.BaseRef != "main" ||
		g.HeadRef != "refs/heads/gh-readonly-queue/main/pr-"+strconv.Itoa(two.Number)+"-"+base {
		t.Fatalf("group = %+v", g)
	}
	if parents := repo.Parents(g.HeadSHA); len(parents) != 2 || parents[1] != two.HeadSHA() || repo.Parents(parents[0])[0] != base {
		t.Errorf("the group's commit is not base, then #%d, then #%d merged: parents %v", one.Number, two.Number, parents)
	}
	for _, f := range []string{"catalog/x/index.yaml", "catalog/y/index.yaml", "catalog/a/index.yaml"} {
		if _, err := repo.ReadFile(g.HeadSHA, f); err != nil {
			t.Errorf("the group's commit has no %s: %v", f, err)
		}
	}
	got := rc.wait("merge_group", "checks_requested")
	mg := got[len(got)-1].body["merge_group"].(map[string]any)
	if mg["head_sha"] != g.HeadSHA || mg["base_sha"] != base || mg["head_ref"] != g.HeadRef || mg["base_ref"] != "refs/heads/main" {
		t.Errorf("merge_group = %v", mg)
	}
	if _, err := repo.StartMergeGroup("main"); err == nil {
		t.Error("a second group was built while one is tested")
	}

	// Missing, then running: the queue waits.
	report(g.HeadSHA, "in_progress", "")
	if _, ok := repo.MergeGroupOf("main"); !ok || one.Merged() || repo.Branch("main") != base {
		t.Fatalf("the queue did not wait for the check: merged %v, main %s", one.Merged(), repo.Branch("main"))
	}
	report(g.HeadSHA, "completed", "success")
	if _, ok := repo.MergeGroupOf("main"); ok || !one.Merged() || !two.Merged() || repo.Branch("main") != g.HeadSHA {
		t.Fatalf("after the check passed: merged %v %v, main %s, want %s", one.Merged(), two.Merged(), repo.Branch("main"), g.HeadSHA)
	}
	if q := repo.MergeQueue("main"); len(q) != 0 {
		t.Errorf("queue after the merge = %+v", q)
	}
	rc.wait("push", "")
	got = rc.wait("merge_group", "destroyed")
	if !slices.ContainsFunc(got, func(r received) bool { return r.body["action"] == "destroyed" && r.body["reason"] == "merged" }) {
		t.Errorf("no merge_group destroyed with reason merged: %v", got)
	}

	// A failure: the group goes, its pull request leaves the queue and
	// main stays where it was.
	three, node3 := open("z", "catalog/z/index.yaml")
	report(three.HeadSHA(), "completed", "success")
	if _, err := ghapi.EnqueuePullRequest(ctx, c, node3, three.HeadSHA()); err != nil {
		t.Fatal(err)
	}
	main := repo.Branch("main")
	g, err = repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	report(g.HeadSHA, "completed", "failure")
	if _, ok := repo.MergeGroupOf("main"); ok || three.Merged() || repo.Branch("main") != main || len(repo.MergeQueue("main")) != 0 {
		t.Fatalf("after the check failed: merged %v, main %s (was %s), queue %+v", three.Merged(), repo.Branch("main"), main, repo.MergeQueue("main"))
	}
	got = rc.wait("pull_request", "dequeued")
	var reasons []any
	for _, r := range got {
		reasons = append(reasons, r.body["reason"])
	}
	if !slices.Contains(reasons, "CI_FAILURE") || !slices.Contains(reasons, "dequeued") {
		t.Errorf("reasons delivered %v, want the group dequeued and the pull request's CI_FAILURE", reasons)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestMergeGroupUnsubscribed: with no receiver subscribed to merge_group
// nothing tells of the group, and its check never reports: the queue
// holds it and never merges.
func TestMergeGroupUnsubscribed(t *testing.T) {
	s, repo := newRepo(t)
	rc := &receiver{t: t, secret: "hook-secret"}
	hs := httptest.NewServer(rc)
	t.Cleanup(hs.Close)
	s.SendWebhooks(t, hs.URL, "hook-secret", "pull_request")
	repo.RequireMergeQueue("main")
	repo.RequireChecks("main", "catalogbot")
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()
	repo.Commit("x", map[string]string{"catalog/x/index.yaml": "schema: olm.package\nname: x\n"}, "add x")
	pr := repo.OpenPR("bob", "x", "main")
	gpr, _, _ := c.PullRequests.Get(ctx, owner, name, pr.Number)
	c.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: pr.HeadSHA(), Status: github.String("completed"), Conclusion: github.String("success")})
	if _, err := ghapi.EnqueuePullRequest(ctx, c, gpr.GetNodeID(), pr.HeadSHA()); err != nil {
		t.Fatal(err)
	}
	base := repo.Branch("main")
	if _, err := repo.StartMergeGroup("main"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, ok := repo.MergeGroupOf("main"); !ok || pr.Merged() || repo.Branch("main") != base {
		t.Fatalf("the queue went on without the check: merged %v", pr.Merged())
	}
	if d := s.Delivered(); len(d) != 0 {
		t.Errorf("delivered %+v to a receiver not subscribed to them", d)
	}
}

// TestMergeGroupPayloadsMatchTheSchema holds the fake's merge_group
// deliveries, for which GitHub ships no example, to GitHub's webhook
// schema.
func TestMergeGroupPayloadsMatchTheSchema(t *testing.T) {
	const schemaFile = "../../../shared/github/webhooks-schema.json"
	data, err := os.ReadFile(schemaFile)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not here", schemaFile)
	}
	if err != nil {
		t.Fatal(err)
	}
	var all struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	s, repo := newRepo(t)
	repo.RequireMergeQueue("main")
	repo.Commit("x", map[string]string{"catalog/x/index.yaml": "schema: olm.package\nname: x\n"}, "add x")
	pr := repo.OpenPR("bob", "x", "main")
	c, _ := installationClient(t, s, repo)
	gpr, _, _ := c.PullRequests.Get(context.Background(), owner, name, pr.Number)
	if _, err := ghapi.EnqueuePullRequest(context.Background(), c, gpr.GetNodeID(), pr.HeadSHA()); err != nil {
		t.Fatal(err)
	}
	g, err := repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"checks_requested", "destroyed"} {
		def := all.Definitions["merge_group$"+action]
		if def == nil {
			t.Fatalf("the schema has no merge_group$%s", action)
		}
		// The objects shared by every event (repository, users) are
		// the fake's; this holds the event's own shape.
		for k, v := range def["properties"].(map[string]any) {
			if _, ref := v.(map[string]any)["$ref"]; ref {
				def["properties"].(map[string]any)[k] = map[string]any{"type": "object"}
			}
		}
		delete(def, "$schema")
		comp := jsonschema.NewCompiler()
		if err := comp.AddResource(action+".json", any(def)); err != nil {
			t.Fatal(err)
		}
		schema, err := comp.Compile(action + ".json")
		if err != nil {
			t.Fatal(err)
		}
		body := s.Payload("merge_group", action, githubtest.PayloadArgs{Repo: repo, Group: &g, Reason: "dequeued"})
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("the merge_group %s payload does not match GitHub's schema: %v", action, err)
		}
	}
}
