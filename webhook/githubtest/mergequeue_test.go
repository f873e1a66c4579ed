package githubtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/catalogbot/catalogbot/webhook/ghapi"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestMergeQueue drives the merge queue as a bot meets it: the rules of a
// branch that requires one, the refused REST merge, enqueuePullRequest
// with its expectedHeadOid check, and the queue merging. Every REST
// request and response is held to GitHub's OpenAPI description.
func TestMergeQueue(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/a/index.yaml": "schema: olm.package\nname: a\ndefaultChannel: x\n"}, "change a")
	pr := repo.OpenPR("bob", "feature", "main")
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()
	gpr, _, err := c.PullRequests.Get(ctx, owner, name, pr.Number)
	if err != nil {
		t.Fatal(err)
	}

	if queued, err := ghapi.RequiresMergeQueue(ctx, c, owner, name, "main"); err != nil || queued {
		t.Fatalf("RequiresMergeQueue before the ruleset = %v, %v; want false", queued, err)
	}
	repo.RequireMergeQueue("main")
	if queued, err := ghapi.RequiresMergeQueue(ctx, c, owner, name, "main"); err != nil || !queued {
		t.Fatalf("RequiresMergeQueue = %v, %v; want true", queued, err)
	}
	if queued, err := ghapi.RequiresMergeQueue(ctx, c, owner, name, "feature"); err != nil || queued {
		t.Fatalf("RequiresMergeQueue(feature) = %v, %v; want false", queued, err)
	}

	_, _, err = c.PullRequests.Merge(ctx, owner, name, pr.Number, "", &github.PullRequestOptions{SHA: pr.HeadSHA()})
	if !ghapi.MergeQueueRefusal(err) {
		t.Fatalf("REST merge into a queued branch = %v, want the merge queue's 405", err)
	}

	if _, err := ghapi.EnqueuePullRequest(ctx, c, gpr.GetNodeID(), "0123456789abcdef0123456789abcdef01234567"); !errors.Is(err, ghapi.ErrQueueHeadMoved) {
		t.Fatalf("enqueue at another head = %v, want ErrQueueHeadMoved", err)
	}
	if q := repo.MergeQueue("main"); len(q) != 0 {
		t.Fatalf("queued at the wrong head: %+v", q)
	}
	entry, err := ghapi.EnqueuePullRequest(ctx, c, gpr.GetNodeID(), pr.HeadSHA())
	if err != nil || entry.Position != 1 || entry.State != "QUEUED" {
		t.Fatalf("enqueue = %+v, %v; want position 1, QUEUED", entry, err)
	}
	if q := repo.MergeQueue("main"); len(q) != 1 || q[0].Number != pr.Number || q[0].HeadSHA != pr.HeadSHA() || q[0].ID != entry.ID {
		t.Fatalf("merge queue = %+v", q)
	}
	// A bot reads the entry, and takes the pull request out and in again.
	if e, err := ghapi.MergeQueueEntryOf(ctx, c, gpr.GetNodeID()); err != nil || e == nil || e.ID != entry.ID {
		t.Fatalf("MergeQueueEntryOf = %+v, %v; want %s", e, err, entry.ID)
	}
	if err := ghapi.DequeuePullRequest(ctx, c, gpr.GetNodeID()); err != nil {
		t.Fatalf("dequeue = %v", err)
	}
	if e, err := ghapi.MergeQueueEntryOf(ctx, c, gpr.GetNodeID()); err != nil || e != nil || len(repo.MergeQueue("main")) != 0 {
		t.Fatalf("after the dequeue: entry %+v, %v; queue %+v", e, err, repo.MergeQueue("main"))
	}
	if err := ghapi.DequeuePullRequest(ctx, c, gpr.GetNodeID()); err == nil {
		t.Fatal("dequeue of a pull request no queue holds succeeded")
	}
	if _, err := ghapi.EnqueuePullRequest(ctx, c, gpr.GetNodeID(), pr.HeadSHA()); err != nil {
		t.Fatal(err)
	}
	shas, err := repo.MergeQueued("main")
	if err != nil || len(shas) != 1 || !pr.Merged() || repo.Branch("main") != shas[0] {
		t.Fatalf("MergeQueued = %v, %v; merged %v", shas, err, pr.Merged())
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestGraphQLNeedsAToken: the GraphQL endpoint, like the REST API, answers
// nobody without a valid installation token.
func TestGraphQLNeedsAToken(t *testing.T) {
	s, _ := newRepo(t)
	resp, err := http.Post(s.URL+"/graphql", "application/json", bytes.NewReader([]byte(`{"query":"mutation { enqueuePullRequest }"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GraphQL without a token: %d, want 401", resp.StatusCode)
	}
}

// TestDequeuedPayloadMatchesTheSchema holds the fake's pull_request
// dequeued delivery, for which GitHub ships no example, to GitHub's
// webhook schema.
func TestDequeuedPayloadMatchesTheSchema(t *testing.T) {
	const schemaFile = "../../../shared/github/webhooks-schema.json"
	data, err := os.ReadFile(schemaFile)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not here", schemaFile)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The event's own shape: its fields, which are required and that
	// there are no others. The objects inside (pull request, repository,
	// users) are the fake's, shared by every event; GitHub's deliveries
	// today carry fields (user_view_type) this schema predates, so they
	// are taken as objects here.
	var all struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	def := all.Definitions["pull_request$dequeued"]
	if def == nil {
		t.Fatal("the schema has no pull_request$dequeued")
	}
	for k, v := range def["properties"].(map[string]any) {
		if _, ref := v.(map[string]any)["$ref"]; ref {
			def["properties"].(map[string]any)[k] = map[string]any{"type": "object"}
		}
	}
	delete(def, "$schema")
	c := jsonschema.NewCompiler()
	if err := c.AddResource("dequeued.json", any(def)); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("dequeued.json")
	if err != nil {
		t.Fatal(err)
	}
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/a/index.yaml": "schema: olm.package\nname: a\ndefaultChannel: x\n"}, "change a")
	pr := repo.OpenPR("bob", "feature", "main")
	body := s.Payload("pull_request", "dequeued", githubtest.PayloadArgs{Repo: repo, PR: pr.Number, Reason: "CI_FAILURE"})
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(v); err != nil {
		t.Errorf("the dequeued payload does not match GitHub's schema: %v", err)
	}
	var p struct{ Action, Reason string }
	if err := json.Unmarshal(body, &p); err != nil || p.Action != "dequeued" || p.Reason != "CI_FAILURE" {
		t.Errorf("payload action %q reason %q: %v", p.Action, p.Reason, err)
	}
}
