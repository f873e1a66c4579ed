package reconcile

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
)

func prNumbers(jobs []webhook.Job) []int {
	var out []int
	for _, j := range jobs {
		out = append(out, j.Key.PR)
	}
	slices.Sort(out)
	return out
}

// TestMissedWebhookIsPickedUpByResync opens pull requests without a
// webhook: resync finds them, and once they are reconciled finds nothing
// more until one of them changes.
func TestMissedWebhookIsPickedUpByResync(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	owned := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	other := e.openPR("bob", "bump2", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.2")})
	ctx := context.Background()

	jobs, err := e.app.Resync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := prNumbers(jobs); !slices.Equal(got, []int{owned.Number, other.Number}) {
		t.Fatalf("resync queued %v, want both pull requests", got)
	}
	for _, j := range jobs {
		if j.Key.Kind != webhook.KindPR || j.Key.Repo != "acme/catalog" || j.Installation != e.gh.InstallationID(e.repo) || j.Delivery == "" {
			t.Errorf("job %+v", j)
		}
		if err := processAll(ctx, e.app, j); err != nil {
			t.Fatal(err)
		}
	}
	if !owned.Merged() {
		t.Error("the owner's pull request found by resync was not merged")
	}

	// A read in the second of the pull request's last change does not
	// settle it (a change later in that second would not move
	// updated_at): a resync a second later looks once more.
	e.settle()

	// Nothing changed: nothing to do.
	e.gh.Advance(time.Second)
	jobs, err = e.app.Resync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Fatalf("a resync with nothing changed queued %v", prNumbers(jobs))
	}

	// A push nobody told us about.
	other.Push(map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.3")}, "again")
	jobs, err = e.app.Resync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := prNumbers(jobs); !slices.Equal(got, []int{other.Number}) {
		t.Fatalf("after a push resync queued %v, want #%d", got, other.Number)
	}
}

// TestResyncJobThroughProcess runs a KindResync job with no queue: the work
// it finds is in its result, and done inline here.
func TestResyncJobThroughProcess(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	if err := processAll(context.Background(), e.app, webhook.Job{Key: webhook.Key{Kind: webhook.KindResync}, Event: "installation", Delivery: "d1"}); err != nil {
		t.Fatal(err)
	}
	if !pr.Merged() {
		t.Error("not merged by the resync job")
	}
}

// TestRestartLosesNothing: a second App on the same cache directory (the
// process restarted) knows nothing of the first one's results, so its
// first resync reconciles every open pull request.
func TestRestartLosesNothing(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")

	restarted, err := NewApp(AppOptions{Config: e.app.cfg, Metrics: webhook.NewMetrics(nil)})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := restarted.Resync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := prNumbers(jobs); !slices.Equal(got, []int{pr.Number}) {
		t.Fatalf("after a restart resync queued %v", got)
	}
}

// TestRunResyncStartsAtOnce: RunResync resyncs before its first interval
// and returns when its context ends.
func TestRunResyncStartsAtOnce(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan webhook.Job, 1)
	returned := make(chan struct{})
	go func() {
		// An interval no test waits for: only the first round can run.
		e.app.RunResync(ctx, time.Hour, func(j webhook.Job) { got <- j })
		close(returned)
	}()
	select {
	case j := <-got:
		if j.Key.PR != pr.Number {
			t.Errorf("queued %+v", j.Key)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunResync did not resync at start")
	}
	cancel()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("RunResync did not return after its context ended")
	}
}

// TestResyncFindsAMissedApproval: an /approve whose webhook never came is
// seen on the next resync, and the pull request merges.
func TestResyncFindsAMissedApproval(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	ctx := context.Background()
	e.process(pr, "pull_request")
	if pr.Merged() {
		t.Fatal("merged without the owner's approval")
	}
	e.gh.Advance(time.Minute)
	e.repo.Comment(pr.Number, "alice", "/approve")

	jobs, err := e.app.Resync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := prNumbers(jobs); !slices.Equal(got, []int{pr.Number}) {
		t.Fatalf("after a missed /approve resync queued %v, want #%d", got, pr.Number)
	}
	for _, j := range jobs {
		if err := processAll(ctx, e.app, j); err != nil {
			t.Fatal(err)
		}
	}
	if !pr.Merged() {
		t.Error("the approved pull request was not merged")
	}
}

// TestResyncAfterRestartIsNoDuplicate: the durable queue remembers
// delivery ids past a restart, so the resync of a new process on the same
// state must not reuse the ids of the last one's, or its first rounds
// would be dropped as duplicates and a lost delivery found by no one.
func TestResyncAfterRestartIsNoDuplicate(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, catalogRepo(mergePolicy))
	e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	for process := range 2 {
		s, err := durable.Open(context.Background(), durable.Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		// A new process: a new App on the same GitHub and state.
		app, err := NewApp(AppOptions{Config: &webhook.Config{
			AppID: e.gh.AppID(), PrivateKey: e.gh.PrivateKeyPEM(), GitHubURL: e.gh.URL + "/", CacheDir: t.TempDir(),
		}})
		if err != nil {
			t.Fatal(err)
		}
		q, err := s.Queue(app)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := app.Resync(context.Background())
		if err != nil || len(jobs) != 1 {
			t.Fatalf("process %d: resync found %d jobs, %v", process, len(jobs), err)
		}
		if r := q.Enqueue(jobs[0]); r != webhook.Queued && r != webhook.Replaced {
			t.Errorf("process %d: the resync's job for #%d was %v, not queued", process, jobs[0].Key.PR, r)
		}
		s.Close()
	}
}
