package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// propertyResync is the resync interval of the services the property test
// runs: short, so that a schedule settles in well under a second.
const propertyResync = 200 * time.Millisecond

// TestEveryOpenPullRequestSaysWhy runs the service (receiver, durable
// queue on a SQLite file, App) against the fake GitHub through random
// schedules of pull requests opened, pushed to, approved, held and
// released, with deliveries dropped, GitHub answering 5xx for a while and
// the service restarted on the same state file. Once the schedule is over
// and a resync has run on a healthy GitHub, every open pull request says
// why it is not merged, in its catalogbot run's blocked-by line and in the
// blocked metric, with the same codes: never unexplained, and never a
// passing state (checking, merging, retrying) that nothing will move on
// from. A pull request that the schedule left approved, valid and not held
// is merged or carries the code of a real obstacle. Half the schedules
// merge through a merge queue, which merges what it holds now and then;
// there a held pull request must not stay queued.
func TestEveryOpenPullRequestSaysWhy(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	// A schedule mostly waits for the service (the queue's leader
	// election, the resync interval), so several run at once: more than
	// t.Parallel would run on a machine of few cores.
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for seed := range seeds {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
				newWorld(t, uint64(seed)).run()
			})
		})
	}
	wg.Wait()
}

// world is one schedule's fake GitHub, the service on it and the model of
// what each pull request should be.
type world struct {
	t    *testing.T
	rng  *rand.Rand
	gh   *githubtest.Server
	repo *githubtest.Repo
	dir  string // the state directory every start of the service shares
	// outage is how many more REST requests of the App fail with 502.
	outage atomic.Int64
	svc    *service
	queue  bool // main merges through a merge queue
	prs    []*modelPR
	sent   int // deliveries made or dropped, for their ids
	log    []string
	// logs are the service's, shown when the schedule fails.
	logs lockedBuffer
}

// lockedBuffer is a bytes.Buffer the service's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// modelPR is what the schedule did to a pull request.
type modelPR struct {
	pr       *githubtest.PR
	file     string // the one file it changes
	approver string // who may approve it: alice for the package, root-admin elsewhere
	approved bool   // approved at its current head
	valid    bool   // its head's catalog validates
	held     bool
	// unseen: the delivery that says when the head became the head was
	// lost, so a comment cannot be tied to it and an /approve does not
	// count (heads.go): that fails closed, by design.
	unseen bool
}

func newWorld(t *testing.T, seed uint64) *world {
	gh := githubtest.New(t)
	w := &world{t: t, rng: rand.New(rand.NewPCG(seed, 0x626c6f636b6564)), gh: gh, dir: t.TempDir()}
	w.repo = gh.AddRepo("acme", "catalog", catalogRepo(mergePolicy))
	if seed%2 == 1 {
		// Half the schedules merge through a merge queue.
		w.repo.RequireMergeQueue("main")
		w.queue = true
	}
	w.start()
	t.Cleanup(func() { w.svc.stop() })
	return w
}

// service is one process of catalogbot serve.
type service struct {
	state   *durable.State
	app     *App
	queue   *durable.Queue
	srv     *httptest.Server
	metrics *webhook.Metrics
	watch   *watch
	cancel  context.CancelFunc
}

// watch runs the App and counts what the settling waits for.
type watch struct {
	p       webhook.Processor
	mu      sync.Mutex
	running int
	started int // resync jobs started
	done    int // the latest resync job, by start, that finished well
}

func (w *watch) Process(ctx context.Context, job webhook.Job) (webhook.Result, error) {
	w.mu.Lock()
	w.running++
	resync := 0
	if job.Key.Kind == webhook.KindResync {
		w.started++
		resync = w.started
	}
	w.mu.Unlock()
	res, err := w.p.Process(ctx, job)
	w.mu.Lock()
	w.running--
	if resync > 0 && err == nil {
		w.done = max(w.done, resync)
	}
	w.mu.Unlock()
	return res, err
}

func (w *watch) counts() (running, started, done int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running, w.started, w.done
}

// failing is the App's way to GitHub: it answers 502 while the world's
// outage lasts, under the App's retrying transport, as GitHub does in an
// incident.
type failing struct {
	w    *world
	next http.RoundTripper
}

func (f failing) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.w.outage.Add(-1) < 0 {
		f.w.outage.Store(0)
		return f.next.RoundTrip(r)
	}
	body := `{"message":"Server Error"}`
	return &http.Response{StatusCode: http.StatusBadGateway, Status: "502 Bad Gateway", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body))}, nil
}

// start starts a new process of the service on the world's state file.
func (w *world) start() {
	t := w.t
	logger := slog.New(slog.NewTextHandler(&w.logs, nil))
	metrics := webhook.NewMetrics(prometheus.NewRegistry())
	state, err := durable.Open(context.Background(), durable.Options{
		StateDir: w.dir, ResyncInterval: propertyResync, Logger: logger, Metrics: metrics, Workers: 2,
		// A process killed between River's fetch of a key's job and its
		// lease leaves that work to the lease reaper, which waits
		// LeaseTTL: short here, so that a schedule settles in seconds,
		// yet long enough for a loaded machine to renew leases in time.
		LeaseTTL: 3 * time.Second,
		// A failed job is tried again within the settling's patience.
		Retry: webhook.RetryPolicy{Min: 50 * time.Millisecond, Max: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	app, err := NewApp(AppOptions{
		Config: &webhook.Config{
			AppID: w.gh.AppID(), PrivateKey: w.gh.PrivateKeyPEM(), GitHubURL: w.gh.URL + "/", CacheDir: t.TempDir(),
		},
		Metrics:       metrics,
		Logger:        logger,
		HTTPClient:    &http.Client{Transport: failing{w, http.DefaultTransport}},
		GitHubBackoff: time.Millisecond,
		Facts:         state.Facts(),
	})
	if err != nil {
		t.Fatal(err)
	}
	wt := &watch{p: app}
	q, err := state.Queue(wt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := webhook.NewServer(webhook.ServerOptions{Secrets: [][]byte{[]byte(serveSecret)}, Queue: q, Metrics: metrics, Logger: logger, Observe: app.Observe})
	if err != nil {
		t.Fatal(err)
	}
	w.svc = &service{state: state, app: app, queue: q, srv: httptest.NewServer(srv.Handler()), metrics: metrics, watch: wt, cancel: cancel}
}

// stop ends the process abruptly: the work under way is cancelled, as
// when the process is killed, and only the state file remains.
func (s *service) stop() {
	s.srv.Close()
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.queue.Drain(ctx)
	s.state.Close()
	s.app.Close()
}

// deliver sends GitHub's delivery of event about pr, unless the schedule
// drops it; it reports whether it was sent.
func (w *world) deliver(m *modelPR, event, action string) bool {
	w.sent++
	if w.rng.IntN(4) == 0 {
		w.log = append(w.log, fmt.Sprintf("  (the %s %s delivery is lost)", event, action))
		return false
	}
	body := w.gh.Payload(event, action, githubtest.PayloadArgs{Repo: w.repo, PR: m.pr.Number})
	resp := w.gh.Deliver(w.t, w.svc.srv.URL+"/webhook", serveSecret, event, body, fmt.Sprintf("delivery-%d", w.sent))
	if resp.StatusCode != http.StatusAccepted {
		w.t.Fatalf("%s %s delivery: %d", event, action, resp.StatusCode)
	}
	return true
}

// open opens a pull request: a bump of package foo (approved by its
// owner alice, or by its author when that is alice) or a note outside the
// catalog (approved by root-admin).
func (w *world) open() {
	n := len(w.prs) + 1
	m := &modelPR{valid: true}
	author := "bob"
	var files map[string]string
	if w.rng.IntN(2) == 0 {
		m.file, m.approver = "catalog/foo/catalog.yaml", "alice"
		files = map[string]string{m.file: bumpedCatalog(fmt.Sprintf("v1.0.%d", n))}
		if w.rng.IntN(2) == 0 {
			author, m.approved = "alice", true
		}
	} else {
		m.file, m.approver = fmt.Sprintf("docs/note-%d.md", n), "root-admin"
		files = map[string]string{m.file: fmt.Sprintf("note %d\n", n)}
	}
	w.repo.Commit(fmt.Sprint("change-", n), files, "change "+fmt.Sprint(n))
	m.pr = w.repo.OpenPR(author, fmt.Sprint("change-", n), "main")
	w.prs = append(w.prs, m)
	w.log = append(w.log, fmt.Sprintf("#%d opened by %s, changing %s", m.pr.Number, author, m.file))
	m.unseen = !w.deliver(m, "pull_request", "opened")
}

// openPR is an open pull request of the schedule, nil when there is none.
func (w *world) openPR() *modelPR {
	var open []*modelPR
	for _, m := range w.prs {
		if m.pr.State() == "open" {
			open = append(open, m)
		}
	}
	if len(open) == 0 {
		return nil
	}
	return open[w.rng.IntN(len(open))]
}

// push adds a commit to a pull request: valid, or now and then a catalog
// that does not parse.
func (w *world) push(m *modelPR) {
	content := fmt.Sprintf("note %d, again %d\n", m.pr.Number, w.sent)
	if m.file == "catalog/foo/catalog.yaml" {
		content, m.valid = bumpedCatalog(fmt.Sprintf("v2.%d.%d", m.pr.Number, w.sent)), true
		if w.rng.IntN(3) == 0 {
			content, m.valid = "{not: a catalog", false
		}
	}
	m.pr.Push(map[string]string{m.file: content}, "another change")
	// An approval is of a commit; the author's own stands.
	m.approved = m.pr.Author() == m.approver
	w.log = append(w.log, fmt.Sprintf("#%d pushed to (valid %v)", m.pr.Number, m.valid))
	m.unseen = !w.deliver(m, "pull_request", "synchronize")
}

// comment has user comment body on the pull request.
func (w *world) comment(m *modelPR, user, body string) {
	w.gh.Advance(2 * time.Second) // after the head's push, on GitHub's clock
	w.repo.Comment(m.pr.Number, user, body)
	w.log = append(w.log, fmt.Sprintf("#%d: %s comments %s", m.pr.Number, user, body))
	w.deliver(m, "issue_comment", "created")
}

// step is one random event of the schedule.
func (w *world) step() {
	m := w.openPR()
	switch r := w.rng.IntN(20); {
	case m == nil || r < 4:
		w.open()
	case r < 7:
		w.push(m)
	case r < 10:
		w.comment(m, m.approver, "/approve")
		m.approved = m.approved || !m.unseen
	case r < 12:
		w.comment(m, m.approver, "/hold")
		m.held = true
	case r < 13:
		w.comment(m, m.approver, "/hold cancel")
		m.held = false
	case r < 15:
		n := 5 + w.rng.IntN(40)
		w.outage.Store(int64(n))
		w.log = append(w.log, fmt.Sprintf("GitHub answers the next %d requests with 502", n))
	case r < 17:
		w.log = append(w.log, "the service restarts")
		w.svc.stop()
		w.start()
	case r < 18 && w.queue:
		// The queue's checks pass: it merges what it holds.
		shas, err := w.repo.MergeQueued("main")
		if err != nil {
			w.t.Fatal(err)
		}
		w.log = append(w.log, fmt.Sprintf("the merge queue merges %d pull requests", len(shas)))
	default:
		// Let the service work for a moment before the next event.
		time.Sleep(time.Duration(w.rng.IntN(150)) * time.Millisecond)
	}
}

// settle ends the outage and waits until a resync that started on a
// healthy GitHub has run and the service has nothing left to do.
func (w *world) settle() {
	w.outage.Store(0)
	_, healthy, _ := w.svc.watch.counts()
	deadline := time.Now().Add(30 * time.Second)
	idle := 0
	for idle < 3 {
		if time.Now().After(deadline) {
			running, started, done := w.svc.watch.counts()
			w.t.Fatalf("the service did not settle within 30s: %d jobs running, %d keys queued, resyncs %d started (%d before GitHub was healthy), up to %d done\n%s\nthe service's log:\n%s",
				running, w.svc.queue.Len(), started, healthy, done, w.story(), w.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
		running, _, done := w.svc.watch.counts()
		if done > healthy && running == 0 && w.svc.queue.Len() == 0 {
			idle++
		} else {
			idle = 0
		}
	}
}

func (w *world) story() string {
	s := "schedule:\n"
	for _, l := range w.log {
		s += "  " + l + "\n"
	}
	return s
}

// passing are the codes of states the App passes through: after settling
// on a healthy GitHub, no pull request may be left in one.
var passing = []policy.Code{policy.CodeChecking, policy.CodeMerging, policy.CodeRetrying, policy.CodeUnexplained}

// obstacles are the codes that may keep a pull request the schedule left
// approved, valid and not held from merging: another pull request merged
// first and they no longer merge cleanly, or it waits in the merge queue
// for the queue's checks.
var obstacles = []policy.Code{policy.CodeMergeConflict, policy.CodeQueued}

func (w *world) run() {
	steps := 10 + w.rng.IntN(10)
	for range steps {
		w.step()
		// The service works while the schedule goes on.
		time.Sleep(time.Duration(w.rng.IntN(80)) * time.Millisecond)
	}
	w.settle()
	t := w.t
	merged := 0
	for _, m := range w.prs {
		n := m.pr.Number
		recorded := w.svc.metrics.Blocked.Codes("acme/catalog", n)
		if m.pr.State() != "open" {
			merged++
			if recorded != nil {
				t.Errorf("#%d is %s but recorded as blocked by %q", n, m.pr.State(), recorded)
			}
			continue
		}
		run := w.ownRun(m.pr.HeadSHA())
		if run == nil {
			t.Errorf("#%d has no catalogbot run at its head %s", n, m.pr.HeadSHA())
			continue
		}
		said, ok := review.ParseBlockedBy(run.Text)
		switch {
		case !ok || len(said) == 0:
			t.Errorf("#%d: its run gives no blocked-by line:\n%s", n, run.Text)
		case slices.ContainsFunc(said, func(c policy.Code) bool { return slices.Contains(passing, c) }):
			t.Errorf("#%d is left in a passing state: %q\n%s", n, said, run.Text)
		case !slices.Equal(sortedCodes(said), recorded):
			t.Errorf("#%d: the run says %q, the metric records %q", n, said, recorded)
		}
		for _, c := range said {
			if !slices.Contains(policy.Codes(), c) {
				t.Errorf("#%d: unknown code %q", n, c)
			}
		}
		if m.approved && m.valid && !m.held && !slices.ContainsFunc(said, func(c policy.Code) bool { return slices.Contains(obstacles, c) }) {
			t.Errorf("#%d is approved, valid and not held, yet open: %q\n%s", n, said, run.Text)
		}
		// A held pull request is in no merge queue: the queue would
		// merge it.
		if m.held && slices.ContainsFunc(w.repo.MergeQueue("main"), func(e githubtest.QueueEntry) bool { return e.Number == n }) {
			t.Errorf("#%d is held, yet in the merge queue", n)
		}
	}
	if v := w.svc.metrics.Blocked.Longest()[policy.CodeUnexplained]; v != 0 {
		t.Errorf("%s{reason=unexplained} = %v", webhook.BlockedName, v)
	}
	if t.Failed() {
		t.Logf("%s\nthe service's log:\n%s", w.story(), w.logs.String())
	}
	t.Logf("%d steps, %d pull requests, %d merged or closed", steps, len(w.prs), merged)
}

// ownRun is the App's newest catalogbot run at sha, nil when it has none.
func (w *world) ownRun(sha string) *githubtest.CheckRun {
	var found *githubtest.CheckRun
	for _, r := range w.repo.CheckRuns(sha) {
		if r.Name == CheckRunName && r.AppID == w.gh.AppID() && (found == nil || r.ID > found.ID) {
			found = &r
		}
	}
	return found
}

// sortedCodes orders codes as policy.Codes lists them, as
// BlockedWaits.Codes does.
func sortedCodes(codes []policy.Code) []policy.Code {
	var out []policy.Code
	for _, c := range policy.Codes() {
		if slices.Contains(codes, c) {
			out = append(out, c)
		}
	}
	return out
}
