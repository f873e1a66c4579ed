package durable

import (
	"context"
	"errors"
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
