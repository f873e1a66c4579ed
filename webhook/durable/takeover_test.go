package durable

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
)

// TestPokedKeyIsTakenOver: a worker fetched a key's River job and stopped
// before it took the key's lease (a process killed there), while new work
// for the key keeps coming, every fifth of the lease. The key is taken
// over within the stated bound (LeaseTTL plus a reaper round), not once
// the deliveries stop: newer work does not postpone when the key's work
// became due.
func TestPokedKeyIsTakenOver(t *testing.T) {
	const ttl = time.Second
	s := openSQLiteState(t, t.TempDir(), Options{LeaseTTL: ttl, Workers: 2})
	defer s.Close()
	r := newRecorder()
	q, err := s.Queue(r)
	if err != nil {
		t.Fatal(err)
	}
	stuck := make(chan struct{})
	release := make(chan struct{})
	var first atomic.Bool
	q.beforeTake = func(workArgs) {
		// Only the first fetch stops; sync.Once would hold the others
		// while it waits.
		if first.CompareAndSwap(false, true) {
			close(stuck)
			<-release
		}
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { close(release); stopQueue(t, q) }()
	q.Enqueue(prJob(1, "d1"))
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the job was never fetched")
	}
	start := time.Now()
	stop := make(chan struct{})
	var pokes sync.WaitGroup
	pokes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(ttl / 5):
			}
			q.Enqueue(prJob(1, "poke-"+string(rune('a'+i%26))+string(rune('a'+i/26%26))))
		}
	})
	defer func() { close(stop); pokes.Wait() }()
	// The bound: LeaseTTL, then the reaper's round (LeaseTTL/3), with a
	// busy machine's slack.
	got := r.wait(t, 1, 10*ttl)
	took := time.Since(start)
	t.Logf("taken over after %s while poked every %s (bound %s)", took.Round(10*time.Millisecond), ttl/5, ttl+ttl/3)
	if got[0].Key.PR != 1 {
		t.Errorf("ran %+v", got[0])
	}
}

// TestSkewedReplicaTakesNoLiveLease: two replicas on one PostgreSQL, one
// with a clock five seconds ahead and a lease of three. The lease is told
// by the database's clock, so the skewed replica never finds the other's
// live lease lapsed: the job runs to its end once, on the replica that
// took it.
func TestSkewedReplicaTakesNoLiveLease(t *testing.T) {
	url := durabletest.Postgres(t)
	const ttl = 3 * time.Second
	var running, ran, cancelled atomic.Int32
	overlap := atomic.Bool{}
	started := make(chan string, 4)
	work := func(id string) webhook.Processor {
		return webhook.ProcessorFunc(func(ctx context.Context, j webhook.Job) (webhook.Result, error) {
			if running.Add(1) > 1 {
				overlap.Store(true)
			}
			defer running.Add(-1)
			started <- id
			select {
			case <-time.After(3 * ttl): // three leases, renewed meanwhile
				ran.Add(1)
			case <-ctx.Done():
				cancelled.Add(1)
			}
			return webhook.Result{}, nil
		})
	}
	sa := openPostgresState(t, url, Options{ID: "a", LeaseTTL: ttl})
	defer sa.Close()
	qa := startQueue(t, sa, work("a"))
	defer stopQueue(t, qa)
	qa.Enqueue(prJob(1, "d1"))
	select {
	case id := <-started:
		if id != "a" {
			t.Fatalf("ran on %s", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the job never started")
	}

	ahead := func() time.Time { return time.Now().Add(5 * time.Second) }
	sb := openPostgresState(t, url, Options{ID: "b", LeaseTTL: ttl, Now: ahead})
	defer sb.Close()
	qb := startQueue(t, sb, work("b"))
	defer stopQueue(t, qb)

	deadline := time.After(6 * ttl)
	for ran.Load()+cancelled.Load() == 0 {
		select {
		case id := <-started:
			t.Fatalf("the key started again on %s while a held its live lease", id)
		case <-deadline:
			t.Fatal("the job did not end")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if cancelled.Load() != 0 || overlap.Load() {
		t.Errorf("the running job was cancelled (%d) or overlapped (%v): its lease was taken", cancelled.Load(), overlap.Load())
	}
	var m dto.Metric
	if err := qb.m.Takeovers.WithLabelValues("lease").Write(&m); err != nil {
		t.Fatal(err)
	}
	if n := m.GetCounter().GetValue(); n != 0 {
		t.Errorf("the skewed replica took %v leases over", n)
	}
	if err := sb.Ready(); err != nil {
		t.Errorf("a replica on a live PostgreSQL is not ready: %v", err)
	}
}
