package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

const replaySecret = "a-webhook-secret-for-replays"

// callCounter counts the GitHub API requests the App sends, when it sends
// them (the fake's own record is written after its reply).
type callCounter struct{ n atomic.Int64 }

func (c *callCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

// finished passes jobs to the App and tells of each one done.
type finished struct {
	app *reconcile.App
	mu  sync.Mutex
	n   int
	ch  chan webhook.Job
}

func (f *finished) Process(ctx context.Context, j webhook.Job) (webhook.Result, error) {
	res, err := f.app.Process(ctx, j)
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	f.ch <- j
	return res, err
}

func (f *finished) wait(t *testing.T) {
	t.Helper()
	select {
	case <-f.ch:
	case <-time.After(60 * time.Second):
		t.Fatal("no job finished within 60s")
	}
}

// TestReplaysCostNoGitHubCalls runs the App behind the real receiver and
// queue against the fake GitHub. A captured signed delivery replayed under
// new delivery ids, while its job is queued and after it ran, makes no
// job and no GitHub call, and is counted; a genuine new event for the same
// pull request (a comment) and a resync still do their work.
func TestReplaysCostNoGitHubCalls(t *testing.T) {
	gh := githubtest.New(t)
	// GitHub's clock stands still but for Advance: every read is in the
	// second of the last change, which the resync looks at again.
	stopped := time.Now()
	gh.SetClock(func() time.Time { return stopped })
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
		"catalog/.indexignore":     "OWNERS\n",
	})
	repo.Commit("bump", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v1.0.1", 1)}, "bump")
	pr := repo.OpenPR("bob", "bump", "main")

	reg := prometheus.NewRegistry()
	m := webhook.NewMetrics(reg)
	counter := &callCounter{}
	app, err := reconcile.NewApp(reconcile.AppOptions{
		HTTPClient: &http.Client{Transport: counter},
		Config:     &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir()},
		Metrics:    m,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	f := &finished{app: app, ch: make(chan webhook.Job, 16)}
	q := webhook.NewQueue(f, webhook.QueueOptions{Workers: 1, Metrics: m})
	srv, err := webhook.NewServer(webhook.ServerOptions{Secrets: [][]byte{[]byte(replaySecret)}, Queue: q, Metrics: m, Gatherer: reg, Observe: app.Observe})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	url := hs.URL + "/webhook"

	deliver := func(event string, body []byte, id, want string) {
		t.Helper()
		resp := gh.Deliver(t, url, replaySecret, event, body, id)
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusAccepted || string(b) != want+"\n" {
			t.Fatalf("%s: %d %q, want 202 %q", id, resp.StatusCode, b, want)
		}
	}
	opened := gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: repo, PR: pr.Number})

	// Replays while the job is queued (the queue has not started).
	deliver("pull_request", opened, "opened-1", "accepted")
	for i := range 3 {
		deliver("pull_request", opened, fmt.Sprintf("queued-replay-%d", i), "replay")
	}
	if n := q.Len(); n != 1 {
		t.Fatalf("%d jobs queued, want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	q.Start(ctx)
	f.wait(t)
	calls := int(counter.n.Load())
	if calls == 0 {
		t.Fatal("the opened delivery made no GitHub calls")
	}

	// Replays after it ran.
	for i := range 5 {
		deliver("pull_request", opened, fmt.Sprintf("done-replay-%d", i), "replay")
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("%d jobs queued by replays", n)
	}
	if got := int(counter.n.Load()); got != calls {
		t.Fatalf("replays made %d GitHub calls", got-calls)
	}
	var pb dto.Metric
	if err := m.Replays.WithLabelValues("pull_request").Write(&pb); err != nil {
		t.Fatal(err)
	}
	if got := pb.GetCounter().GetValue(); got != 8 {
		t.Errorf("catalogbot_webhook_replays_total{event=pull_request} = %v, want 8", got)
	}

	// A genuine new event for the same pull request is work.
	gh.Advance(2 * time.Second)
	repo.Comment(pr.Number, "alice", "/approve")
	comment := gh.Payload("issue_comment", "created", githubtest.PayloadArgs{Repo: repo, PR: pr.Number})
	deliver("issue_comment", comment, "comment-1", "accepted")
	f.wait(t)
	if got := int(counter.n.Load()); got == calls {
		t.Fatal("the comment made no GitHub calls")
	}

	// Resync is not a delivery and is never taken for a replay.
	calls = int(counter.n.Load())
	if res := q.Enqueue(webhook.Job{Key: webhook.Key{Kind: webhook.KindResync}, Installation: gh.InstallationID(repo)}); res != webhook.Queued {
		t.Fatalf("resync: %s", res)
	}
	f.wait(t)
	if got := int(counter.n.Load()); got == calls {
		t.Fatal("the resync made no GitHub calls")
	}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// The resync's own job, and, if the pull request is still open, the
	// job it found for it: last read in the second of its last change, it
	// is not taken for settled.
	want := 3
	if !pr.Merged() {
		want = 4
	}
	if f.n != want {
		t.Errorf("%d jobs ran, want %d (opened, comment, resync and the open pull request it found)", f.n, want)
	}
}
