package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

var discard = slog.New(slog.DiscardHandler)

func counterValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	close(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		t.Fatal(err)
	}
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	t.Fatalf("not a counter or gauge: %v", &m)
	return 0
}

func prJob(repo string, pr int, delivery string) Job {
	return Job{Key: Key{Repo: repo, PR: pr, Kind: KindPR}, Event: "pull_request", Delivery: delivery, Payload: []byte("{}")}
}

// gate is a processor whose jobs report their start and then wait for a
// release, so tests can hold a job "running" for as long as they need.
type gate struct {
	started chan Job
	release chan struct{}
}

func newGate() *gate { return &gate{started: make(chan Job, 100), release: make(chan struct{})} }

func (g *gate) Process(ctx context.Context, j Job) (Result, error) {
	g.started <- j
	<-g.release
	return Result{}, nil
}

func startQueue(t *testing.T, p Processor, o QueueOptions) *Queue {
	t.Helper()
	if o.Logger == nil {
		o.Logger = discard
	}
	q := NewQueue(p, o)
	ctx, cancel := context.WithCancel(context.Background())
	q.Start(ctx)
	t.Cleanup(cancel)
	return q
}

func TestQueueNewerJobReplacesQueuedOlder(t *testing.T) {
	g := newGate()
	q := startQueue(t, g, QueueOptions{Workers: 2})

	if r := q.Enqueue(prJob("o/r", 1, "a")); r != Queued {
		t.Fatalf("a: %v", r)
	}
	if j := <-g.started; j.Delivery != "a" {
		t.Fatalf("started %s, want a", j.Delivery)
	}
	// a is running; b queues behind it, and c replaces b.
	if r := q.Enqueue(prJob("o/r", 1, "b")); r != Queued {
		t.Fatalf("b: %v", r)
	}
	if r := q.Enqueue(prJob("o/r", 1, "c")); r != Replaced {
		t.Fatalf("c: %v", r)
	}
	if q.Len() != 1 {
		t.Fatalf("Len = %d, want 1", q.Len())
	}
	g.release <- struct{}{}
	if j := <-g.started; j.Delivery != "c" {
		t.Fatalf("started %s, want c (b was replaced)", j.Delivery)
	}
	g.release <- struct{}{}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-g.started:
		t.Fatalf("replaced job %s ran", j.Delivery)
	default:
	}
}

// TestQueueKeyWaitsForItsRunningJob: while a key's job runs, its next job
// waits even though a worker is free, and another key's job goes ahead.
func TestQueueKeyWaitsForItsRunningJob(t *testing.T) {
	g := newGate()
	q := startQueue(t, g, QueueOptions{Workers: 2})
	q.Enqueue(prJob("o/r", 1, "k1-first"))
	<-g.started
	q.Enqueue(prJob("o/r", 1, "k1-second"))
	q.Enqueue(prJob("o/r", 2, "k2"))
	if j := <-g.started; j.Delivery != "k2" {
		t.Fatalf("started %s while k1-first runs; want k2", j.Delivery)
	}
	g.release <- struct{}{} // one of k1-first, k2 ends
	g.release <- struct{}{} // the other
	if j := <-g.started; j.Delivery != "k1-second" {
		t.Fatalf("started %s, want k1-second", j.Delivery)
	}
	g.release <- struct{}{}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestQueuePerKeySerialisation floods a few keys from many goroutines and
// counts, per key, the jobs inside Process at once. It must never exceed 1.
func TestQueuePerKeySerialisation(t *testing.T) {
	const keys = 3
	var inside [keys]atomic.Int32
	var overlap, maxParallel, parallel atomic.Int32
	var done atomic.Int64
	p := ProcessorFunc(func(ctx context.Context, j Job) (Result, error) {
		n := parallel.Add(1)
		for {
			m := maxParallel.Load()
			if n <= m || maxParallel.CompareAndSwap(m, n) {
				break
			}
		}
		if inside[j.Key.PR].Add(1) > 1 {
			overlap.Add(1)
		}
		for range 20 {
			runtime.Gosched() // give other workers the chance to overlap
		}
		inside[j.Key.PR].Add(-1)
		parallel.Add(-1)
		done.Add(1)
		return Result{}, nil
	})
	q := startQueue(t, p, QueueOptions{Workers: 8})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				q.Enqueue(prJob("o/r", i%keys, fmt.Sprintf("w%d-%d", w, i)))
			}
		}()
	}
	wg.Wait()
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := overlap.Load(); n != 0 {
		t.Fatalf("%d times two jobs of one key ran at once", n)
	}
	if done.Load() < keys {
		t.Fatalf("only %d jobs ran", done.Load())
	}
	t.Logf("%d jobs ran, at most %d at once", done.Load(), maxParallel.Load())
}

func TestQueueRecoversPanic(t *testing.T) {
	m := NewMetrics(nil)
	ran := make(chan string, 2)
	p := ProcessorFunc(func(ctx context.Context, j Job) (Result, error) {
		if j.Delivery == "boom" {
			var nilMap map[string]int
			//lint:ignore SA5000 the panic is the point of the test
			nilMap["x"] = 1 // a real runtime panic
		}
		ran <- j.Delivery
		return Result{}, nil
	})
	var logs strings.Builder
	q := startQueue(t, p, QueueOptions{Workers: 1, Metrics: m, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))})
	q.Enqueue(prJob("o/r", 1, "boom"))
	q.Enqueue(prJob("o/r", 2, "after"))
	if got := <-ran; got != "after" {
		t.Fatalf("ran %s", got)
	}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := counterValue(t, m.Errors.WithLabelValues("panic")); v != 1 {
		t.Fatalf("errors{stage=panic} = %v, want 1", v)
	}
	if !strings.Contains(logs.String(), "job panicked") || !strings.Contains(logs.String(), "delivery=boom") {
		t.Fatalf("panic not logged with its delivery:\n%s", logs.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func TestQueueFull(t *testing.T) {
	m := NewMetrics(nil)
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }),
		QueueOptions{MaxPending: 2, Metrics: m, Logger: discard}) // not started: nothing leaves
	for i, want := range []EnqueueResult{Queued, Queued, Full} {
		if r := q.Enqueue(prJob("o/r", i, fmt.Sprint("d", i))); r != want {
			t.Fatalf("job %d: %v, want %v", i, r, want)
		}
	}
	// A job for a queued key takes no room, so it still gets in.
	if r := q.Enqueue(prJob("o/r", 0, "d0-newer")); r != Replaced {
		t.Fatalf("replacement when full: %v", r)
	}
	// A refused delivery was not remembered: once there is room it is taken.
	if r := q.Enqueue(prJob("o/r", 1, "d2")); r != Replaced {
		t.Fatalf("redelivery of refused d2: %v", r)
	}
	// All or nothing: two PRs of one delivery, one new key, no room.
	two := []Job{prJob("o/r", 1, "multi"), prJob("o/r", 9, "multi")}
	if r := q.EnqueueAll(two); r != Full {
		t.Fatalf("EnqueueAll: %v", r)
	}
	if q.Len() != 2 || counterValue(t, m.QueueDepth) != 2 {
		t.Fatalf("Len %d, depth %v; want 2", q.Len(), counterValue(t, m.QueueDepth))
	}
}

func TestQueueMaxPendingBytes(t *testing.T) {
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }),
		QueueOptions{MaxPendingBytes: 10, Logger: discard})
	big := func(pr int, n int, d string) Job {
		j := prJob("o/r", pr, d)
		j.Payload = make([]byte, n)
		return j
	}
	if r := q.Enqueue(big(1, 6, "a")); r != Queued {
		t.Fatal(r)
	}
	if r := q.Enqueue(big(2, 5, "b")); r != Full {
		t.Fatalf("over the byte bound: %v", r)
	}
	if r := q.Enqueue(big(2, 4, "c")); r != Queued {
		t.Fatalf("within the byte bound: %v", r)
	}
	if r := q.Enqueue(big(1, 2, "d")); r != Replaced { // shrinks: 2+4
		t.Fatalf("replacement: %v", r)
	}
	if r := q.Enqueue(big(3, 4, "e")); r != Queued { // 2+4+4
		t.Fatalf("after the replacement freed bytes: %v", r)
	}
}

func TestQueueDrainWaitsForRunningAndQueued(t *testing.T) {
	g := newGate()
	q := startQueue(t, g, QueueOptions{Workers: 1})
	q.Enqueue(prJob("o/r", 1, "running"))
	<-g.started
	q.Enqueue(prJob("o/r", 2, "queued"))

	drained := make(chan error, 1)
	go func() { drained <- q.Drain(context.Background()) }()
	for !q.Draining() {
		runtime.Gosched()
	}
	if r := q.Enqueue(prJob("o/r", 3, "late")); r != Closed {
		t.Fatalf("Enqueue while draining: %v", r)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v with a job running", err)
	default:
	}
	g.release <- struct{}{}
	if j := <-g.started; j.Delivery != "queued" {
		t.Fatalf("started %s, want the queued job", j.Delivery)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v with a job running", err)
	default:
	}
	g.release <- struct{}{}
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if r := q.Enqueue(prJob("o/r", 4, "after")); r != Closed {
		t.Fatalf("Enqueue after Drain: %v", r)
	}
}

func TestQueueDrainTimeout(t *testing.T) {
	g := newGate()
	q := startQueue(t, g, QueueOptions{Workers: 1})
	q.Enqueue(prJob("o/r", 1, "stuck"))
	<-g.started
	q.Enqueue(prJob("o/r", 2, "waiting"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := q.Drain(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 queued and 1 running") {
		t.Fatalf("Drain = %v", err)
	}
	close(g.release)
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestQueueDedupeTTL(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }),
		QueueOptions{DedupeTTL: time.Hour, Now: clock.Now, Logger: discard})
	if r := q.Enqueue(prJob("o/r", 1, "d1")); r != Queued {
		t.Fatal(r)
	}
	clock.Add(59 * time.Minute)
	if r := q.Enqueue(prJob("o/r", 2, "d1")); r != Duplicate {
		t.Fatalf("within TTL: %v", r)
	}
	if r := q.Enqueue(prJob("o/r", 3, "d2")); r != Queued {
		t.Fatal(r)
	}
	clock.Add(time.Minute)
	if r := q.Enqueue(prJob("o/r", 4, "d1")); r != Queued {
		t.Fatalf("after TTL: %v", r)
	}
	if r := q.Enqueue(prJob("o/r", 5, "d2")); r != Duplicate {
		t.Fatalf("d2 within its TTL: %v", r)
	}
	// Jobs without a delivery id (resync) are never duplicates.
	for range 2 {
		if r := q.Enqueue(Job{Key: Key{Kind: KindResync}}); r == Duplicate {
			t.Fatal("resync job deduplicated")
		}
	}
	// Expired ids are swept, not just ignored.
	clock.Add(2 * time.Hour)
	q.Enqueue(prJob("o/r", 6, "d3"))
	q.mu.Lock()
	n := len(q.seen)
	q.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d delivery ids remembered after expiry, want 1", n)
	}
}

func TestQueueDedupeCap(t *testing.T) {
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }),
		QueueOptions{DedupeMax: 100, MaxPending: 1 << 20, Logger: discard})
	for i := range 10000 {
		q.Enqueue(prJob("o/r", i%50, fmt.Sprint("d", i)))
	}
	q.mu.Lock()
	n, order := len(q.seen), q.seenOrder.len()
	q.mu.Unlock()
	if n != 100 || order != 100 {
		t.Fatalf("remembered %d ids (%d in order), want the cap of 100", n, order)
	}
	if r := q.Enqueue(prJob("o/r", 1, "d9999")); r != Duplicate {
		t.Fatalf("newest id: %v, want Duplicate", r)
	}
	if r := q.Enqueue(prJob("o/r", 1, "d0")); r == Duplicate {
		t.Fatal("oldest id was not evicted")
	}
}

// TestQueueFailedDeliveryMayBeRedelivered: a job that failed or panicked
// leaves its delivery id free, so a manual redelivery is processed.
func TestQueueFailedDeliveryMayBeRedelivered(t *testing.T) {
	for _, mode := range []string{"error", "panic"} {
		t.Run(mode, func(t *testing.T) {
			m := NewMetrics(nil)
			ran := make(chan string, 3)
			p := ProcessorFunc(func(_ context.Context, j Job) (Result, error) {
				ran <- j.Delivery
				if j.Action == "first" {
					if mode == "panic" {
						panic("first attempt")
					}
					return Result{}, errors.New("first attempt")
				}
				return Result{}, nil
			})
			q := startQueue(t, p, QueueOptions{Workers: 1, Metrics: m})
			first := prJob("o/r", 1, "d")
			first.Action = "first"
			q.Enqueue(first)
			// One worker: once the probe runs, the failed job's bookkeeping
			// (forgetting its id) is done.
			q.Enqueue(prJob("o/r", 2, "probe"))
			if a, b := <-ran, <-ran; a != "d" || b != "probe" {
				t.Fatalf("ran %s, %s", a, b)
			}
			if r := q.Enqueue(prJob("o/r", 1, "d")); r != Queued {
				t.Fatalf("redelivery after %s: %v, want Queued", mode, r)
			}
			if got := <-ran; got != "d" {
				t.Fatalf("ran %s", got)
			}
			if err := q.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			stage := map[string]string{"error": "process", "panic": "panic"}[mode]
			if v := counterValue(t, m.Errors.WithLabelValues(stage)); v != 1 {
				t.Fatalf("errors{stage=%s} = %v", stage, v)
			}
		})
	}
}

// TestQueueSucceededDeliveryStaysSeen: success keeps the id remembered.
func TestQueueSucceededDeliveryStaysSeen(t *testing.T) {
	ran := make(chan string, 2)
	q := startQueue(t, ProcessorFunc(func(_ context.Context, j Job) (Result, error) { ran <- j.Delivery; return Result{}, nil }), QueueOptions{Workers: 1})
	q.Enqueue(prJob("o/r", 1, "d"))
	q.Enqueue(prJob("o/r", 2, "probe"))
	<-ran
	<-ran
	if r := q.Enqueue(prJob("o/r", 1, "d")); r != Duplicate {
		t.Fatalf("after success: %v", r)
	}
}

func TestQueueStopsWhenContextEnds(t *testing.T) {
	ran := make(chan string, 10)
	q := NewQueue(ProcessorFunc(func(_ context.Context, j Job) (Result, error) { ran <- j.Delivery; return Result{}, nil }),
		QueueOptions{Workers: 2, Logger: discard})
	ctx, cancel := context.WithCancel(context.Background())
	q.Start(ctx)
	q.Enqueue(prJob("o/r", 1, "before"))
	<-ran
	cancel()
	q.wg.Wait() // the workers exit
	q.Enqueue(prJob("o/r", 2, "after"))
	if q.Len() != 1 {
		t.Fatalf("Len = %d; the job should wait, unprocessed", q.Len())
	}
}

func TestQueueAgeObserved(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := NewMetrics(nil)
	done := make(chan struct{})
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { close(done); return Result{}, nil }),
		QueueOptions{Workers: 1, Metrics: m, Now: clock.Now, Logger: discard})
	j := prJob("o/r", 1, "d")
	j.Received = clock.Now()
	q.Enqueue(j)
	clock.Add(3 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q.Start(ctx)
	<-done
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 1)
	m.QueueAge.Collect(ch)
	var d dto.Metric
	if err := (<-ch).Write(&d); err != nil {
		t.Fatal(err)
	}
	if h := d.Histogram; h.GetSampleCount() != 1 || h.GetSampleSum() != 3 {
		t.Fatalf("queue age: count %d sum %v, want 1 and 3", h.GetSampleCount(), h.GetSampleSum())
	}
}
