package reconcile

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestMergeQueue: a base branch whose rules require a merge queue refuses
// the REST merge; the pull request is queued instead, pinned to the
// checked head, and the status comment says so. GitHub's queue merges it.
func TestMergeQueue(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})

	e.process(pr, "pull_request")

	if merges := e.repo.Merges(); len(merges) != 0 {
		t.Fatalf("merged around the merge queue: %+v", merges)
	}
	q := e.repo.MergeQueue("main")
	if len(q) != 1 || q[0].Number != pr.Number || q[0].HeadSHA != pr.HeadSHA() {
		t.Fatalf("merge queue = %+v, want #%d at %s", q, pr.Number, pr.HeadSHA())
	}
	if n := e.counter(e.metrics.Merges, MergeQueued); n != 1 {
		t.Errorf("queued counter = %v, want 1", n)
	}
	comments := e.statusComments(pr.Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "**Queued** in the merge queue of `main` at "+pr.HeadSHA()[:7]) {
		t.Fatalf("status comments = %+v, want one saying the pull request is queued", comments)
	}
	// Reconciled again while queued (a resync, or GitHub delivering the
	// App's own comment edit): still one entry, and the comment is left
	// as it is, or each edit would bring another delivery.
	before := len(e.requests())
	e.process(pr, "issue_comment")
	if q := e.repo.MergeQueue("main"); len(q) != 1 {
		t.Fatalf("merge queue after a second reconcile = %+v", q)
	}
	for _, r := range e.requests()[before:] {
		if r.Method == "PATCH" && strings.Contains(r.Path, "/issues/comments/") || r.Method == "POST" && strings.HasSuffix(r.Path, "/comments") {
			t.Errorf("the second reconcile wrote the status comment: %s %s", r.Method, r.Path)
		}
	}
	if comments := e.statusComments(pr.Number); len(comments) != 1 || !strings.Contains(comments[0].Body, "**Queued**") {
		t.Fatalf("status comments after a second reconcile = %+v", comments)
	}
	if _, err := e.repo.MergeQueued("main"); err != nil {
		t.Fatal(err)
	}
	if !pr.Merged() || e.mergesAt(pr.HeadSHA()) != 1 {
		t.Errorf("the queue did not merge the pull request: %+v", e.repo.Merges())
	}
}

// TestMergeQueueHeadMoved: a push between the refused merge and the
// enqueue makes GitHub refuse the enqueue (expectedHeadOid); the old head
// is never queued, the new one is checked and queued.
func TestMergeQueueHeadMoved(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	old := pr.HeadSHA()
	var once sync.Once
	var pushed string
	e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if r.Method == "PUT" && strings.HasSuffix(r.URL.Path, "/merge") && resp.Status == http.StatusMethodNotAllowed {
			once.Do(func() {
				pushed = pr.Push(map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.2")}, "another bump")
			})
		}
	})

	e.process(pr, "pull_request")

	if pushed == "" {
		t.Fatal("the hook never pushed")
	}
	q := e.repo.MergeQueue("main")
	if len(q) != 1 || q[0].HeadSHA != pushed {
		t.Fatalf("merge queue = %+v, want the new head %s only, never %s", q, pushed, old)
	}
	if run := e.run(pushed, CheckRunName); run.Conclusion != "success" {
		t.Errorf("the new head's check run concluded %q", run.Conclusion)
	}
}

// TestMergeQueueDequeued: the queue letting go of the pull request is a
// new decision. At the commit it was queued at, it is not queued again
// (the queue's checks failed, or someone took it out), not even by a later
// event such as the App's own comment edit; the comment says why and how
// to queue it again. A /recheck after it queues it, and so does a new commit.
func TestMergeQueueDequeued(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if !e.repo.Dequeue(pr.Number) {
		t.Fatal("the pull request was not queued")
	}

	job := e.job(pr, "pull_request")
	job.Action = "dequeued"
	job.Payload = e.gh.Payload("pull_request", "dequeued", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number, Reason: "CI_FAILURE"})
	if err := processAll(context.Background(), e.app, job); err != nil {
		t.Fatal(err)
	}
	if q := e.repo.MergeQueue("main"); len(q) != 0 {
		t.Fatalf("queued again at the commit the queue let go of: %+v", q)
	}
	comments := e.statusComments(pr.Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "**Removed from the merge queue** of `main` at "+pr.HeadSHA()[:12]+": `CI_FAILURE`") ||
		strings.Contains(comments[0].Body, "**Queued**") {
		t.Fatalf("status comments = %+v, want one saying it was removed, and why", comments)
	}

	before := len(e.requests())
	e.process(pr, "issue_comment")
	if q := e.repo.MergeQueue("main"); len(q) != 0 {
		t.Fatalf("queued again by a later event at the same commit: %+v", q)
	}
	for _, r := range e.requests()[before:] {
		if r.Method == "PATCH" && strings.Contains(r.Path, "/issues/comments/") {
			t.Errorf("a later event rewrote the status comment: %s %s", r.Method, r.Path)
		}
	}

	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/recheck")
	e.process(pr, "issue_comment")
	if q := e.repo.MergeQueue("main"); len(q) != 1 || q[0].HeadSHA != pr.HeadSHA() {
		t.Fatalf("merge queue = %+v after /recheck, want the pull request queued again", q)
	}
	if comments := e.statusComments(pr.Number); len(comments) != 1 || !strings.Contains(comments[0].Body, "**Queued**") {
		t.Fatalf("status comments after /recheck = %+v", comments)
	}

	// Let go of again, then a new commit: queued at the new head.
	e.repo.Dequeue(pr.Number)
	job = e.job(pr, "pull_request")
	job.Action = "dequeued"
	job.Payload = e.gh.Payload("pull_request", "dequeued", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number, Reason: "MERGE_CONFLICT"})
	if err := processAll(context.Background(), e.app, job); err != nil {
		t.Fatal(err)
	}
	pushed := pr.Push(map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.2")}, "another bump")
	e.process(pr, "pull_request")
	if q := e.repo.MergeQueue("main"); len(q) != 1 || q[0].HeadSHA != pushed {
		t.Fatalf("merge queue = %+v after a new commit, want it queued at %s", q, pushed)
	}
}

// TestHoldDequeues: a /hold after the App queued a pull request takes it
// out of the merge queue, which would otherwise merge it. GitHub's
// dequeued delivery that follows, sent by the App's own bot, is not the
// queue letting go: once the hold is lifted, the pull request is queued
// again at the same commit.
func TestHoldDequeues(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if q := e.repo.MergeQueue("main"); len(q) != 1 {
		t.Fatalf("merge queue = %+v, want the pull request", q)
	}

	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/hold")
	e.process(pr, "issue_comment")
	if q := e.repo.MergeQueue("main"); len(q) != 0 {
		t.Fatalf("merge queue = %+v after /hold, want it empty", q)
	}
	if codes, _ := review.ParseBlockedBy(e.run(pr.HeadSHA(), CheckRunName).Text); !slices.Equal(codes, []policy.Code{policy.CodeHold}) {
		t.Errorf("blocked by %q, want hold", codes)
	}

	job := e.job(pr, "pull_request")
	job.Action = "dequeued"
	job.Payload = e.gh.Payload("pull_request", "dequeued", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number, Reason: "MANUAL", Sender: e.gh.AppSlug() + "[bot]"})
	if err := processAll(context.Background(), e.app, job); err != nil {
		t.Fatal(err)
	}
	for _, c := range e.statusComments(pr.Number) {
		if strings.Contains(c.Body, dequeueMarker) {
			t.Errorf("the App's own dequeue was recorded as the queue letting go:\n%s", c.Body)
		}
	}

	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/hold cancel")
	e.process(pr, "issue_comment")
	if q := e.repo.MergeQueue("main"); len(q) != 1 || q[0].HeadSHA != pr.HeadSHA() {
		t.Fatalf("merge queue = %+v after /hold cancel, want the pull request queued again", q)
	}
	if codes, _ := review.ParseBlockedBy(e.run(pr.HeadSHA(), CheckRunName).Text); !slices.Equal(codes, []policy.Code{policy.CodeQueued}) {
		t.Errorf("blocked by %q, want queued", codes)
	}
}
