package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
)

// fooCatalog is a valid File-Based Catalog of one package, foo.
const fooCatalog = fbctest.Foo

// mergePolicy turns merging on.
const mergePolicy = "merge:\n  enabled: true\n  method: squash\n"

// catalogRepo is the default branch of a catalog repository: package foo
// owned by alice, the root by root-admin, and policy as .catalogbot.yaml.
func catalogRepo(policy string) map[string]string {
	files := map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": fooCatalog,
		// OWNERS files are not catalog content.
		"catalog/.indexignore": "OWNERS\n",
	}
	if policy != "" {
		files[".catalogbot.yaml"] = policy
	}
	return files
}

// bumpedCatalog is fooCatalog with its bundle image moved: a valid change.
func bumpedCatalog(tag string) string {
	return strings.Replace(fooCatalog, "foo-bundle:v1.0.0", "foo-bundle:"+tag, 1)
}

// env is a fake GitHub with one catalog repository and an App on it.
type env struct {
	t       testing.TB
	gh      *githubtest.Server
	repo    *githubtest.Repo
	app     *App
	metrics *webhook.Metrics
	n       atomic.Int64
	rec     *apiRecorder
}

// apiRecorder keeps every request the App sends and the status it got, once
// the response is in: what the App did, in the order it did it.
type apiRecorder struct {
	mu   sync.Mutex
	reqs []githubtest.Request
}

func (r *apiRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, githubtest.Request{Method: req.Method, Path: req.URL.Path, Status: status})
	r.mu.Unlock()
	return resp, err
}

// requests returns the requests recorded so far.
func (e *env) requests() []githubtest.Request {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return append([]githubtest.Request(nil), e.rec.reqs...)
}

func newEnv(t testing.TB, files map[string]string) *env {
	t.Helper()
	return newEnvWith(t, files, nil)
}

// newEnvWith is newEnv with the App's options changed by opts first.
func newEnvWith(t testing.TB, files map[string]string, opts func(*AppOptions)) *env {
	t.Helper()
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", files)
	m := webhook.NewMetrics(prometheus.NewRegistry())
	rec := &apiRecorder{}
	o := AppOptions{
		HTTPClient: &http.Client{Transport: rec},
		Config: &webhook.Config{
			AppID:      gh.AppID(),
			PrivateKey: gh.PrivateKeyPEM(),
			GitHubURL:  gh.URL + "/",
			CacheDir:   t.TempDir(),
		},
		Metrics: m,
		Logger:  slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if opts != nil {
		opts(&o)
	}
	app, err := NewApp(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return &env{t: t, gh: gh, repo: repo, app: app, metrics: m, rec: rec}
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// openPR commits files on a new branch and opens a pull request by author.
func (e *env) openPR(author, branch string, files map[string]string) *githubtest.PR {
	e.t.Helper()
	e.repo.Commit(branch, files, "change by "+author)
	return e.repo.OpenPR(author, branch, "main")
}

// job is the work a pull request event makes.
func (e *env) job(pr *githubtest.PR, event string) webhook.Job {
	return webhook.Job{
		Key:          webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindPR},
		Event:        event,
		Delivery:     fmt.Sprintf("delivery-%d", e.n.Add(1)),
		Installation: e.gh.InstallationID(e.repo),
	}
}

// process runs one pull request job and fails the test on an error.
func (e *env) process(pr *githubtest.PR, event string) {
	e.t.Helper()
	if err := processAll(context.Background(), e.app, e.job(pr, event)); err != nil {
		e.t.Fatalf("process #%d (%s): %v", pr.Number, event, err)
	}
}

// run is the newest run named name at sha, failing the test when there is
// none.
func (e *env) run(sha, name string) githubtest.CheckRun {
	e.t.Helper()
	var found *githubtest.CheckRun
	for _, r := range e.repo.CheckRuns(sha) {
		if r.Name == name && (found == nil || r.ID > found.ID) {
			found = &r
		}
	}
	if found == nil {
		e.t.Fatalf("no %s check run at %s", name, sha)
	}
	return *found
}

// statusComments are the status comments on pull request number.
func (e *env) statusComments(number int) []githubtest.IssueComment {
	var out []githubtest.IssueComment
	for _, c := range e.repo.IssueComments(number) {
		if strings.Contains(c.Body, StatusMarker) {
			out = append(out, c)
		}
	}
	return out
}

// mergesAt are the merges pinned to sha.
func (e *env) mergesAt(sha string) int {
	n := 0
	for _, m := range e.repo.Merges() {
		if m.HeadSHA == sha {
			n++
		}
	}
	return n
}

func (e *env) counter(c *prometheus.CounterVec, labels ...string) float64 {
	var m dto.Metric
	if err := c.WithLabelValues(labels...).Write(&m); err != nil {
		e.t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestNewAppErrors(t *testing.T) {
	gh := githubtest.New(t)
	tests := []struct {
		name string
		cfg  *webhook.Config
		want string
	}{
		{"no config", nil, "no configuration"},
		{"no key", &webhook.Config{AppID: 1}, "no private key"},
		{"missing key file", &webhook.Config{AppID: 1, PrivateKeyFile: "/nonexistent/key.pem"}, "private key"},
		{"bad key", &webhook.Config{AppID: 1, PrivateKey: []byte("nope")}, "private key"},
		{"bad app id", &webhook.Config{AppID: 0, PrivateKey: gh.PrivateKeyPEM()}, "invalid app id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewApp(AppOptions{Config: tc.cfg})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestAppReadyAndTemporaryCache(t *testing.T) {
	gh := githubtest.New(t)
	gh.AddRepo("acme", "catalog", nil)
	app, err := NewApp(AppOptions{Config: &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Ready(); err == nil {
		t.Fatal("ready before GitHub was asked for an installation token")
	}
	if err := app.ProbeGitHub(context.Background()); err != nil {
		t.Fatalf("ProbeGitHub: %v", err)
	}
	if err := app.Ready(); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	if err := app.Ready(); err == nil {
		t.Error("Ready after the temporary cache was removed")
	}
}

// TestAppNotReadyWithoutGitHub: an App that cannot mint an installation
// token (GitHub unreachable, down, or refusing its key) is not ready, and
// becomes ready once it can.
func TestAppNotReadyWithoutGitHub(t *testing.T) {
	gh := githubtest.New(t)
	gh.AddRepo("acme", "catalog", nil)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	other := githubtest.New(t) // a GitHub that does not know this App's key

	tests := []struct {
		name string
		url  string
		key  []byte
		fail func()
	}{
		{"unreachable", dead.URL + "/", gh.PrivateKeyPEM(), nil},
		{"down", gh.URL + "/", gh.PrivateKeyPEM(), func() { gh.FailNext(10, http.StatusBadGateway) }},
		{"wrong key", gh.URL + "/", other.PrivateKeyPEM(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app, err := NewApp(AppOptions{Config: &webhook.Config{AppID: gh.AppID(), PrivateKey: tt.key, GitHubURL: tt.url, CacheDir: t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.fail != nil {
				tt.fail()
			}
			if err := app.ProbeGitHub(context.Background()); err == nil {
				t.Fatal("ProbeGitHub succeeded")
			}
			if err := app.Ready(); err == nil {
				t.Fatal("ready, though no installation token could be had")
			}
		})
	}

	app, err := NewApp(AppOptions{Config: &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	gh.FailNext(2, http.StatusBadGateway)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go app.RunReadiness(ctx, time.Millisecond)
	for app.Ready() != nil {
		if ctx.Err() != nil {
			t.Fatalf("not ready after 30s of RunReadiness: %v", app.Ready())
		}
		time.Sleep(time.Millisecond)
	}
	tokens := 0
	for _, r := range gh.Requests() {
		if strings.HasSuffix(r.Path, "/access_tokens") && r.Status == http.StatusCreated {
			tokens++
		}
	}
	if tokens != 1 {
		t.Errorf("%d installation tokens minted, want 1", tokens)
	}
}

func TestUnknownJobKind(t *testing.T) {
	e := newEnv(t, catalogRepo(""))
	err := processAll(context.Background(), e.app, webhook.Job{Key: webhook.Key{Repo: "acme/catalog", Kind: "nonsense"}})
	if err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("err = %v", err)
	}
}

// tracker is a Processor that runs the App and reports every finished job.
type tracker struct {
	app  *App
	mu   sync.Mutex
	seen map[string]int // delivery -> times processed
	ch   chan webhook.Job
}

func (d *tracker) Process(ctx context.Context, job webhook.Job) (webhook.Result, error) {
	res, err := d.app.Process(ctx, job)
	d.mu.Lock()
	d.seen[job.Delivery]++
	d.mu.Unlock()
	d.ch <- job
	return res, err
}

// processAll runs job and then, one after another, the jobs it returns (a
// resync's pull requests, the re-checks of a rules change), as the queue
// would, inline. Retries are left out: the next resync finds them.
func processAll(ctx context.Context, app *App, job webhook.Job) error {
	res, err := app.Process(ctx, job)
	errs := []error{err}
	for _, j := range res.Jobs {
		errs = append(errs, processAll(ctx, app, j))
	}
	return errors.Join(errs...)
}

// wait waits for the next finished job.
func (d *tracker) wait(t *testing.T) webhook.Job {
	t.Helper()
	select {
	case j := <-d.ch:
		return j
	case <-time.After(30 * time.Second):
		t.Fatal("no job finished within 30s")
		return webhook.Job{}
	}
}

// serveSecret is the webhook secret of the services serve starts.
const serveSecret = "a-webhook-secret-of-some-length"

// serve runs the App behind the real receiver and queue, as catalogbot serve
// does, and returns the URL to deliver webhooks to, the tracker that sees
// each finished job and the queue.
func (e *env) serve(t *testing.T) (string, *tracker, *webhook.Queue) {
	t.Helper()
	d := &tracker{app: e.app, seen: map[string]int{}, ch: make(chan webhook.Job, 16)}
	q := webhook.NewQueue(d, webhook.QueueOptions{Workers: 2, DedupeTTL: time.Hour, Metrics: e.metrics})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	q.Start(ctx)
	srv, err := webhook.NewServer(webhook.ServerOptions{Secrets: [][]byte{[]byte(serveSecret)}, Queue: q, Metrics: e.metrics, Ready: e.app.Ready})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL + "/webhook", d, q
}

// TestEndToEndThroughWebhooks drives the whole service as GitHub would:
// signed deliveries built from GitHub's examples go to the receiver, the
// queue runs them on the App, and the fake's state shows the outcome.
func TestEndToEndThroughWebhooks(t *testing.T) {
	image := registryRef(t)
	e := newEnv(t, catalogRepo(publishPolicy(image)))
	url, d, q := e.serve(t)

	pr := e.openPR("bob", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	opened := e.gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number})

	// A bad signature is refused and nothing runs.
	if resp := e.gh.Deliver(t, url, "not-the-secret-at-all", "pull_request", opened, "bad-1"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d", resp.StatusCode)
	}

	// The same delivery twice is processed once.
	if resp := e.gh.Deliver(t, url, serveSecret, "pull_request", opened, "open-1"); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("opened: %d", resp.StatusCode)
	}
	d.wait(t)
	resp := e.gh.Deliver(t, url, serveSecret, "pull_request", opened, "open-1")
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusAccepted || !strings.Contains(string(body), "duplicate") {
		t.Fatalf("redelivery: %d %s", resp.StatusCode, body)
	}
	if cs := e.statusComments(pr.Number); len(cs) != 1 || !strings.Contains(cs[0].Body, "@alice") {
		t.Fatalf("status comments after opening: %+v", cs)
	}

	// The owner approves; the pull request merges; the push publishes.
	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/approve")
	comment := e.gh.Payload("issue_comment", "created", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number})
	e.gh.Deliver(t, url, serveSecret, "issue_comment", comment, "comment-1")
	d.wait(t)
	if e.mergesAt(pr.HeadSHA()) != 1 {
		t.Fatalf("merges = %+v", e.repo.Merges())
	}
	push := e.gh.Payload("push", "", githubtest.PayloadArgs{Repo: e.repo})
	e.gh.Deliver(t, url, serveSecret, "push", push, "push-1")
	d.wait(t)
	if run := e.run(e.repo.Branch("main"), PublishCheckRunName); run.Conclusion != "success" {
		t.Fatalf("publish run: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
	}

	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	want := map[string]int{"open-1": 1, "comment-1": 1, "push-1": 1}
	if len(d.seen) != len(want) {
		t.Errorf("processed %v, want %v", d.seen, want)
	}
	for id, n := range want {
		if d.seen[id] != n {
			t.Errorf("delivery %s processed %d times, want %d", id, d.seen[id], n)
		}
	}
}
