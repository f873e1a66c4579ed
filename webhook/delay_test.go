package webhook

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

// fakeTimers records the timers a queue sets, to fire them by hand.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) func() bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{d: d, f: f}
	ft.timers = append(ft.timers, t)
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// last is the newest timer set.
func (ft *fakeTimers) last(t *testing.T) *fakeTimer {
	t.Helper()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if len(ft.timers) == 0 {
		t.Fatal("no timer was set")
	}
	return ft.timers[len(ft.timers)-1]
}

// TestQueueHoldsJobUntilNotBefore: a job due later waits for its time
// without a worker, then runs as any job; a later retry of its key
// replaces it, a job due at once drops it, and Drain drops it too.
func TestQueueHoldsJobUntilNotBefore(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ft := &fakeTimers{}
	g := newGate()
	q := startQueue(t, g, QueueOptions{Workers: 2, Now: func() time.Time { return now }, AfterFunc: ft.afterFunc})
	later := func(pr int, d time.Duration) Job {
		return Job{Key: Key{Repo: "o/r", PR: pr, Kind: KindPR}, Event: "retry", NotBefore: now.Add(d)}
	}
	noneStarted := func() {
		t.Helper()
		select {
		case j := <-g.started:
			t.Fatalf("job %s (%s) started before its time", j.Key, j.Event)
		default:
		}
	}

	if r := q.Enqueue(later(1, 2*time.Minute)); r != Queued {
		t.Fatalf("held job: %v", r)
	}
	first := ft.last(t)
	if first.d != 2*time.Minute || q.Held() != 1 || q.Len() != 0 {
		t.Fatalf("timer %s, held %d, queued %d; want 2m, 1, 0", first.d, q.Held(), q.Len())
	}
	// A later retry of the same key replaces the held one.
	if r := q.Enqueue(later(1, 4*time.Minute)); r != Replaced {
		t.Fatalf("second held job: %v", r)
	}
	second := ft.last(t)
	if !first.stopped || second.d != 4*time.Minute || q.Held() != 1 {
		t.Fatalf("first stopped %v, second %s, held %d", first.stopped, second.d, q.Held())
	}
	first.f() // a timer that fires as it is stopped does nothing
	noneStarted()

	second.f()
	j := <-g.started
	if j.Key.PR != 1 || j.Event != "retry" || !j.NotBefore.IsZero() || q.Held() != 0 {
		t.Fatalf("started %+v, held %d; want the retry of #1, due now", j, q.Held())
	}
	g.release <- struct{}{}

	// A job due at once replaces a held job of its key.
	q.Enqueue(later(2, time.Minute))
	held := ft.last(t)
	q.Enqueue(prJob("o/r", 2, "comment"))
	if j := <-g.started; j.Delivery != "comment" || !held.stopped || q.Held() != 0 {
		t.Fatalf("started %s, held stopped %v, held %d; want the comment's job and nothing held", j.Delivery, held.stopped, q.Held())
	}
	g.release <- struct{}{}
	held.f()
	noneStarted()

	// Drain does not wait for held jobs: it drops them.
	q.Enqueue(later(3, time.Hour))
	held = ft.last(t)
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !held.stopped || q.Held() != 0 {
		t.Errorf("after Drain: held stopped %v, held %d", held.stopped, q.Held())
	}
	held.f()
	noneStarted()
}

func TestResultNext(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	job := Job{Key: Key{Repo: "o/r", PR: 1, Kind: KindPR}, Event: "pull_request", Action: "synchronize",
		Delivery: "d1", Installation: 7, Payload: []byte("{}"), Received: now.Add(-time.Minute), Replay: ReplayKey{1}}
	found := Job{Key: Key{Repo: "o/r", PR: 2, Kind: KindPR}, Event: "resync", Delivery: "resync-1-o/r-2", Installation: 7, Replay: ReplayKey{2}}
	retry := Job{Key: job.Key, Event: "retry", Installation: 7, Received: now, NotBefore: now.Add(time.Minute)}
	foundOwn := found
	foundOwn.Replay = ReplayKey{}
	for _, tc := range []struct {
		name string
		res  Result
		want []Job
	}{
		{"nothing", Result{}, []Job{}},
		// The retry is a copy of the key alone: no delivery id (it
		// would be dropped as a duplicate of the job), no payload.
		{"a retry", Result{RetryAt: now.Add(time.Minute)}, []Job{retry}},
		// Work found is the processor's own: no replay key.
		{"more jobs", Result{Jobs: []Job{found}}, []Job{foundOwn}},
		{"both, the retry first", Result{RetryAt: now.Add(time.Minute), Jobs: []Job{found}}, []Job{retry, foundOwn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.res.Next(job, now); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Next = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestQueueActsOnResult: the queue holds the retry a processor asks for
// until its time, and takes the jobs it returns, even beside an error.
func TestQueueActsOnResult(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ft := &fakeTimers{}
	ran := make(chan Job, 4)
	p := ProcessorFunc(func(_ context.Context, j Job) (Result, error) {
		ran <- j
		switch j.Delivery {
		case "pending":
			return Result{RetryAt: now.Add(time.Minute)}, nil
		case "resync":
			found := Job{Key: Key{Repo: "o/r", PR: 2, Kind: KindPR}, Event: "resync"}
			return Result{Jobs: []Job{found}}, errors.New("one repository could not be listed")
		}
		return Result{}, nil
	})
	q := startQueue(t, p, QueueOptions{Workers: 1, Now: func() time.Time { return now }, AfterFunc: ft.afterFunc, Logger: discard})
	next := func() Job {
		t.Helper()
		select {
		case j := <-ran:
			return j
		case <-time.After(10 * time.Second):
			t.Fatal("no job ran")
			return Job{}
		}
	}

	q.Enqueue(prJob("o/r", 1, "pending"))
	next()
	held := ft.last(t)
	if held.d != time.Minute {
		t.Fatalf("retry held for %s, want 1m", held.d)
	}
	held.f()
	if j := next(); j.Key.PR != 1 || j.Event != "retry" || j.Delivery != "" {
		t.Fatalf("ran %+v, want the retry of #1", j)
	}

	q.Enqueue(Job{Key: Key{Kind: KindResync}, Delivery: "resync"})
	next()
	if j := next(); j.Key.PR != 2 || j.Event != "resync" {
		t.Fatalf("ran %+v, want the pull request the failed resync found", j)
	}
}
