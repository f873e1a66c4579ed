package durable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook"
)

// TestFailedJobRetried: a job that fails for a passing reason (GitHub's
// 502) is held in the state and runs again after its backoff, with no
// new delivery and no resync; a permanent failure (404) is not.
func TestFailedJobRetried(t *testing.T) {
	s := openSQLiteState(t, t.TempDir(), Options{Retry: webhook.RetryPolicy{Min: 200 * time.Millisecond, Max: 200 * time.Millisecond}})
	defer s.Close()
	var mu sync.Mutex
	var ran []webhook.Job
	done := make(chan webhook.Job, 10)
	p := webhook.ProcessorFunc(func(_ context.Context, j webhook.Job) (webhook.Result, error) {
		mu.Lock()
		ran = append(ran, j)
		mu.Unlock()
		defer func() { done <- j }()
		resp := func(code int) error {
			return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "GET"}}}
		}
		switch {
		case j.Key.PR == 1 && j.Attempt < 2:
			return webhook.Result{}, resp(http.StatusBadGateway)
		case j.Key.PR == 2:
			return webhook.Result{}, errors.Join(errors.New("read"), resp(http.StatusNotFound))
		}
		return webhook.Result{}, nil
	})
	q := startQueue(t, s, p)
	defer stopQueue(t, q)
	q.Enqueue(prJob(1, "d1"))
	q.Enqueue(prJob(2, "d2"))
	attempts := map[int][]int{}
	deadline := time.After(30 * time.Second)
	for len(attempts[1]) < 3 {
		select {
		case j := <-done:
			attempts[j.Key.PR] = append(attempts[j.Key.PR], j.Attempt)
		case <-deadline:
			t.Fatalf("ran %v within 30s; want #1 three times", attempts)
		}
	}
	time.Sleep(500 * time.Millisecond) // a retry of the 404 would have come by now
	mu.Lock()
	defer mu.Unlock()
	if got := attempts[1]; got[0] != 0 || got[1] != 1 || got[2] != 2 {
		t.Errorf("attempts of #1: %v, want 0 1 2", got)
	}
	n := 0
	for _, j := range ran {
		if j.Key.PR == 2 {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the 404 ran %d times, want once", n)
	}
}

// TestStoppedJobRunsAgain: a job stopped by the process's shutdown (its
// context cancelled, as catalogbot serve's stop does to work under way)
// is not a failure to give up on: its work goes back in the state and the
// next start runs it, with no resync.
func TestStoppedJobRunsAgain(t *testing.T) {
	dir := t.TempDir()
	s := openSQLiteState(t, dir, Options{})
	started := make(chan struct{}, 1)
	p := webhook.ProcessorFunc(func(ctx context.Context, j webhook.Job) (webhook.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		return webhook.Result{}, fmt.Errorf("list the files of o/r#%d: %w", j.Key.PR, ctx.Err())
	})
	q, err := s.Queue(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	q.Enqueue(prJob(1, "d1"))
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job never started")
	}
	cancel()
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	q.Drain(dctx)
	dcancel()
	s.Close()

	s = openSQLiteState(t, dir, Options{})
	defer s.Close()
	r := newRecorder()
	q = startQueue(t, s, r)
	defer stopQueue(t, q)
	got := r.wait(t, 1, 20*time.Second)
	if got[0].Key.PR != 1 || got[0].Delivery != "d1" {
		t.Errorf("after the restart ran %+v, want the stopped job", got[0])
	}
}
