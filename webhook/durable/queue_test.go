package durable

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// recorder is a processor that notes the jobs it runs and lets a test
// hold them.
type recorder struct {
	mu      sync.Mutex
	ran     []webhook.Job
	running map[webhook.Key]int
	overlap bool
	hold    chan struct{} // when set, each job waits for a receive
	result  func(webhook.Job) webhook.Result
	done    chan webhook.Job
}

func newRecorder() *recorder {
	return &recorder{running: map[webhook.Key]int{}, done: make(chan webhook.Job, 1000)}
}

func (r *recorder) Process(ctx context.Context, j webhook.Job) (webhook.Result, error) {
	r.mu.Lock()
	r.running[j.Key]++
	if r.running[j.Key] > 1 {
		r.overlap = true
	}
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	r.running[j.Key]--
	r.ran = append(r.ran, j)
	r.mu.Unlock()
	var res webhook.Result
	if r.result != nil {
		res = r.result(j)
	}
	r.done <- j
	return res, nil
}

func (r *recorder) wait(t *testing.T, n int, within time.Duration) []webhook.Job {
	t.Helper()
	var got []webhook.Job
	timeout := time.After(within)
	for len(got) < n {
		select {
		case j := <-r.done:
			got = append(got, j)
		case <-timeout:
			t.Fatalf("%d of %d jobs ran within %s: %v", len(got), n, within, got)
		}
	}
	return got
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openSQLiteState(t *testing.T, dir string, o Options) *State {
	t.Helper()
	o.StateDir = dir
	if o.Logger == nil {
		o.Logger = quiet()
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = -1
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startQueue(t *testing.T, s *State, p webhook.Processor) *Queue {
	t.Helper()
	q, err := s.Queue(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q
}

func stopQueue(t *testing.T, q *Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Drain(ctx); err != nil {
		t.Error(err)
	}
}

func prJob(pr int, delivery string) webhook.Job {
	return webhook.Job{Key: webhook.Key{Repo: "o/r", PR: pr, Kind: webhook.KindPR}, Event: "pull_request",
		Action: "synchronize", Delivery: delivery, Payload: []byte(delivery)}
}

func TestQueueSemantics(t *testing.T) {
	s := openSQLiteState(t, t.TempDir(), Options{})
	defer s.Close()
	r := newRecorder()
	r.hold = make(chan struct{})
	q := startQueue(t, s, r)
	defer stopQueue(t, q)

	if got := q.Enqueue(prJob(1, "d1")); got != webhook.Queued {
		t.Fatalf("first job: %v, want queued", got)
	}
	if got := q.Enqueue(prJob(1, "d1")); got != webhook.Duplicate {
		t.Errorf("same delivery again: %v, want duplicate", got)
	}
	// Let d1 start, then queue two more for the key: the second replaces
	// the first while d1 runs, and neither runs beside d1.
	waitRunning(t, r, 1)
	if got := q.Enqueue(prJob(1, "d2")); got != webhook.Queued {
		t.Errorf("job while the key runs: %v, want queued", got)
	}
	if got := q.Enqueue(prJob(1, "d3")); got != webhook.Replaced {
		t.Errorf("second job while the key runs: %v, want replaced", got)
	}
	replay := prJob(2, "d4")
	replay.Replay = webhook.ReplayKey{1}
	if got := q.EnqueueAll([]webhook.Job{replay}); got != webhook.Queued {
		t.Errorf("job with a replay key: %v", got)
	}
	replay.Delivery = "d5"
	if got := q.Admits("d5", replay.Replay); got != webhook.Replay {
		t.Errorf("same body under a new delivery id: %v, want replay", got)
	}
	close(r.hold)
	got := r.wait(t, 3, 10*time.Second)
	var deliveries []string
	for _, j := range got {
		deliveries = append(deliveries, j.Delivery)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overlap {
		t.Error("two jobs of one key ran at once")
	}
	want := map[string]bool{"d1": true, "d3": true, "d4": true}
	for _, d := range deliveries {
		if !want[d] {
			t.Errorf("ran %q; want d1, d3 (which replaced d2) and d4, got %v", d, deliveries)
		}
	}
}

func waitRunning(t *testing.T, r *recorder, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		c := 0
		for _, v := range r.running {
			c += v
		}
		r.mu.Unlock()
		if c >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d jobs running after 10s", n)
}

func TestHeldJobOutlivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := openSQLiteState(t, dir, Options{})
	r := newRecorder()
	q := startQueue(t, s, r)
	j := prJob(7, "")
	j.Event = "retry"
	j.NotBefore = time.Now().Add(1500 * time.Millisecond)
	if got := q.Enqueue(j); got != webhook.Queued {
		t.Fatalf("held job: %v", got)
	}
	stopQueue(t, q)
	s.Close()

	s = openSQLiteState(t, dir, Options{})
	defer s.Close()
	q = startQueue(t, s, r)
	defer stopQueue(t, q)
	got := r.wait(t, 1, 10*time.Second)
	if got[0].Event != "retry" || time.Now().Before(j.NotBefore) {
		t.Errorf("after a restart ran %+v at %v; want the retry, not before %v", got[0], time.Now(), j.NotBefore)
	}
}

// TestCrashMidJob leaves a job running as a killed process would (its
// database closed under it, its worker never returning) and starts again
// on the same file: the job runs once more and nothing else is lost.
func TestCrashMidJob(t *testing.T) {
	dir := t.TempDir()
	s := openSQLiteState(t, dir, Options{})
	dead := newRecorder()
	dead.hold = make(chan struct{})
	defer close(dead.hold)
	q := startQueue(t, s, dead)
	q.Enqueue(prJob(1, "d1"))
	waitRunning(t, dead, 1)
	q.Enqueue(prJob(2, "d2")) // queued behind nothing, may run or not
	s.Close()                 // the process is gone: no lease renewed, no job finished

	s = openSQLiteState(t, dir, Options{})
	defer s.Close()
	r := newRecorder()
	start := time.Now()
	q = startQueue(t, s, r)
	defer stopQueue(t, q)
	defer func() { t.Logf("both ran %s after the start", time.Since(start).Round(10*time.Millisecond)) }()
	seen := map[int]bool{}
	// The takeover is at once (the state's lock is free); the bound is
	// how long a busy machine may take to show it, not a measure.
	for _, j := range r.wait(t, 2, 60*time.Second) {
		seen[j.Key.PR] = true
	}
	if !seen[1] || !seen[2] {
		t.Errorf("after the crash ran %v; want both pull requests", seen)
	}
}

// TestEnqueueResults: what EnqueueAll answers, as webhook.Queue answers
// it, step by step on one key with no worker running.
func TestEnqueueResults(t *testing.T) {
	s := openSQLiteState(t, t.TempDir(), Options{})
	defer s.Close()
	q, err := s.Queue(newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	held := func(d time.Duration) webhook.Job {
		j := prJob(1, "")
		j.NotBefore = later.Add(d)
		return j
	}
	steps := []struct {
		name string
		job  webhook.Job
		want webhook.EnqueueResult
	}{
		{"a held job for a new key", held(0), webhook.Queued},
		{"another held job replaces it", held(time.Minute), webhook.Replaced},
		{"a job due now supersedes the held one", prJob(1, "d1"), webhook.Queued},
		{"a held job beside a queued one", held(0), webhook.Replaced},
		{"a job due now replaces the queued one", prJob(1, "d2"), webhook.Replaced},
		{"a delivery seen before", prJob(1, "d2"), webhook.Duplicate},
		{"another key", prJob(2, "d3"), webhook.Queued},
	}
	for _, st := range steps {
		if got := q.Enqueue(st.job); got != st.want {
			t.Errorf("%s: %v, want %v", st.name, got, st.want)
		}
	}
	if n := q.Len(); n != 2 {
		t.Errorf("Len = %d, want 2 keys with queued work", n)
	}
}

// TestDrainLeavesQueuedWork: a drain finishes the running job and leaves
// the key's newer work queued in the state, where the next start runs it.
func TestDrainLeavesQueuedWork(t *testing.T) {
	dir := t.TempDir()
	s := openSQLiteState(t, dir, Options{})
	r := newRecorder()
	r.hold = make(chan struct{})
	q := startQueue(t, s, r)
	q.Enqueue(prJob(1, "d1"))
	waitRunning(t, r, 1)
	drained := make(chan error, 1)
	go func() { drained <- q.Drain(context.Background()) }()
	// Queued after the drain began: it goes to the state (the processor's
	// own follow-up work would, too), not to this replica.
	for !q.Draining() {
		time.Sleep(time.Millisecond)
	}
	if got := q.enqueue(prJob(1, "d2")); got != webhook.Queued {
		t.Fatalf("work for the running key during the drain: %v", got)
	}
	close(r.hold)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if got := r.wait(t, 1, 5*time.Second); got[0].Delivery != "d1" {
		t.Fatalf("ran %v before the drain ended, want d1 only", got)
	}
	s.Close()

	s = openSQLiteState(t, dir, Options{})
	defer s.Close()
	r2 := newRecorder()
	q = startQueue(t, s, r2)
	defer stopQueue(t, q)
	if got := r2.wait(t, 1, 10*time.Second); got[0].Delivery != "d2" {
		t.Errorf("after the restart ran %v, want d2", got)
	}
	select {
	case j := <-r.done:
		t.Errorf("the drained replica ran %v", j)
	default:
	}
}
