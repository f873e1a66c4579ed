package reconcile

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestBlockedReasons: after a reconcile, an open pull request that is not
// merged says why in its catalogbot run (the blocked-by line of the
// run's text) and in the blocked metric, with the same codes; one that
// merged is in neither.
func TestBlockedReasons(t *testing.T) {
	const bump = "catalog/foo/catalog.yaml"
	tests := []struct {
		name   string
		policy string
		author string
		files  map[string]string
		// setup runs before the reconcile.
		setup func(e *env, pr *githubtest.PR)
		// refuse answers every merge call 409.
		refuse bool
		want   []policy.Code // nil: merged
	}{
		{name: "an owner's change merges", policy: mergePolicy, author: "alice"},
		{name: "another's change waits for approval", policy: mergePolicy, author: "bob",
			want: []policy.Code{policy.CodeApprovalMissing}},
		{name: "merging is off", author: "alice",
			want: []policy.Code{policy.CodeMergingDisabled}},
		{name: "held", policy: mergePolicy, author: "alice",
			setup: func(e *env, pr *githubtest.PR) { e.repo.Comment(pr.Number, "alice", "/hold") },
			want:  []policy.Code{policy.CodeHold}},
		{name: "a broken catalog", policy: mergePolicy, author: "alice",
			files: map[string]string{bump: "{not: a catalog"},
			want:  []policy.Code{policy.CodeChecksFailed}},
		{name: "queued in the merge queue", policy: mergePolicy, author: "alice",
			setup: func(e *env, _ *githubtest.PR) { e.repo.RequireMergeQueue("main") },
			want:  []policy.Code{policy.CodeQueued}},
		{name: "GitHub refuses the merge twice", policy: mergePolicy, author: "alice",
			// Refused before the fake sees it, which would merge.
			refuse: true,
			want:   []policy.Code{policy.CodeMergeRefused}},
		{name: "GitHub fails after the check began", policy: mergePolicy, author: "alice",
			setup: func(e *env, _ *githubtest.PR) {
				e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
					if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/files") {
						resp.Status, resp.Body = http.StatusBadGateway, []byte(`{"message":"Server Error"}`)
					}
				})
			},
			want: []policy.Code{policy.CodeRetrying}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, catalogRepo(tc.policy), func(o *AppOptions) {
				o.GitHubBackoff = time.Millisecond
				if tc.refuse {
					o.HTTPClient = &http.Client{Transport: refuseMerges{o.HTTPClient.Transport}}
				}
			})
			files := tc.files
			if files == nil {
				files = map[string]string{bump: bumpedCatalog("v1.0.1")}
			}
			pr := e.openPR(tc.author, "change", files)
			if tc.setup != nil {
				tc.setup(e, pr)
			}
			err := processAll(context.Background(), e.app, e.job(pr, "pull_request"))
			if err != nil && !slices.Contains(tc.want, policy.CodeRetrying) {
				t.Fatal(err)
			}
			e.gh.HookResponses(nil)

			recorded := e.metrics.Blocked.Codes("acme/catalog", pr.Number)
			if tc.want == nil {
				if !pr.Merged() {
					t.Fatalf("not merged; run says %q", e.run(pr.HeadSHA(), CheckRunName).Text)
				}
				if recorded != nil {
					t.Errorf("a merged pull request is recorded as blocked by %q", recorded)
				}
				return
			}
			run := e.run(pr.HeadSHA(), CheckRunName)
			said, ok := review.ParseBlockedBy(run.Text)
			if !ok || !slices.Equal(said, tc.want) {
				t.Errorf("the run says %q (%v), want %q; text:\n%s", said, ok, tc.want, run.Text)
			}
			if !slices.Equal(recorded, tc.want) {
				t.Errorf("the metric records %q, want %q", recorded, tc.want)
			}
		})
	}
}

// TestBlockedWaitEnds: the wait of a pull request is counted from the
// reconcile that first found its reason, and ends when it merges.
func TestBlockedWaitEnds(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e.metrics.Blocked.Now = func() time.Time { return now }
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	now = now.Add(time.Hour)
	e.process(pr, "resync")
	if got := e.metrics.Blocked.Longest()[policy.CodeApprovalMissing]; got != time.Hour.Seconds() {
		t.Errorf("approval-missing has waited %vs, want an hour", got)
	}
	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/approve")
	e.process(pr, "issue_comment")
	if !pr.Merged() {
		t.Fatalf("not merged: %s", e.run(pr.HeadSHA(), CheckRunName).Text)
	}
	for c, secs := range e.metrics.Blocked.Longest() {
		if secs != 0 {
			t.Errorf("%s still waits %vs after the merge", c, secs)
		}
	}
}

// refuseMerges answers every merge call 409, as GitHub does when the
// head moved, without passing it on.
type refuseMerges struct{ next http.RoundTripper }

func (t refuseMerges) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/merge") {
		return t.next.RoundTrip(r)
	}
	body := `{"message":"Head branch was modified. Review and try the merge again."}`
	return &http.Response{
		StatusCode: http.StatusConflict, Status: "409 Conflict", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}, nil
}
