package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

func ghError(code int) error {
	return &github.ErrorResponse{Response: &http.Response{StatusCode: code, Request: &http.Request{Method: "GET", URL: &url.URL{Path: "/x"}}}, Message: http.StatusText(code)}
}

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ten := 10 * time.Second
	for _, tc := range []struct {
		name  string
		err   error
		class RetryClass
		after time.Duration
	}{
		{"502", fmt.Errorf("read o/r#1: %w", ghError(502)), Transient, 0},
		{"503", ghError(503), Transient, 0},
		{"429", ghError(429), Transient, 0},
		{"401", fmt.Errorf("wrapped: %w", ghError(401)), Unauthorized, 0},
		{"404", ghError(404), Permanent, 0},
		{"422", ghError(422), Permanent, 0},
		{"403 without a limit", ghError(403), Permanent, 0},
		{"secondary limit", &github.AbuseRateLimitError{Response: &http.Response{StatusCode: 403}, RetryAfter: &ten}, Transient, ten},
		{"secondary limit, no header", &github.AbuseRateLimitError{Response: &http.Response{StatusCode: 403}}, Transient, time.Minute},
		{"primary limit", &github.RateLimitError{Response: &http.Response{StatusCode: 403}, Rate: github.Rate{Reset: github.Timestamp{Time: now.Add(time.Minute)}}}, Transient, time.Minute + time.Second},
		{"network", &url.Error{Op: "Get", URL: "https://api.github.com", Err: errors.New("connection refused")}, Transient, 0},
		{"git", errors.New("git fetch: exit status 128"), Transient, 0},
		{"marked", AsPermanent(errors.New("invalid repository")), Permanent, 0},
		{"marked 502", AsPermanent(ghError(502)), Permanent, 0},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), Canceled, 0},
		{"token refused", fmt.Errorf("installation 7: token: %w", &ghinstallation.HTTPError{Response: &http.Response{StatusCode: 403}}), Permanent, 0},
		{"token server error", &ghinstallation.HTTPError{Response: &http.Response{StatusCode: 502}}, Transient, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, after := Classify(tc.err, now)
			if class != tc.class || after != tc.after {
				t.Fatalf("Classify = %s, %s; want %s, %s", class, after, tc.class, tc.after)
			}
		})
	}
}

func TestRetryPolicy(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	top := RetryPolicy{Min: time.Second, Max: 8 * time.Second, MaxAttempts: 5, rand: func(n int64) int64 { return n - 1 }}
	bottom := top
	bottom.rand = func(int64) int64 { return 0 }
	job := Job{Key: Key{Repo: "o/r", PR: 1, Kind: KindPR}, Event: "pull_request", Delivery: "d", Payload: []byte("{}"), Installation: 7, Replay: ReplayKey{1}}
	five := 5 * time.Minute
	limited := &github.AbuseRateLimitError{Response: &http.Response{StatusCode: 403}, RetryAfter: &five}
	for _, tc := range []struct {
		name    string
		p       RetryPolicy
		attempt int // of the failed job
		err     error
		ok      bool
		wait    time.Duration
	}{
		{"first failure, upper jitter", top, 0, ghError(502), true, time.Second},
		{"first failure, lower jitter", bottom, 0, ghError(502), true, 500 * time.Millisecond},
		{"third failure", top, 2, ghError(502), true, 4 * time.Second},
		{"capped", top, 3, ghError(502), true, 8 * time.Second},
		{"401 retried", top, 0, ghError(401), true, time.Second},
		{"Retry-After beyond the backoff", top, 0, limited, true, five},
		{"last attempt", top, 4, ghError(502), false, 0},
		{"permanent", top, 0, ghError(404), false, 0},
		{"canceled", top, 0, context.Canceled, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := job
			j.Attempt = tc.attempt
			next, _, ok := tc.p.Retry(j, tc.err, now)
			if ok != tc.ok {
				t.Fatalf("retried %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if got := next.NotBefore.Sub(now); got != tc.wait {
				t.Errorf("held for %s, want %s", got, tc.wait)
			}
			if next.Attempt != tc.attempt+1 || next.Key != job.Key || next.Installation != 7 ||
				next.Delivery != "" || next.Payload != nil || !next.Replay.IsZero() {
				t.Errorf("retry job %+v", next)
			}
		})
	}
	// A push's retry keeps what it publishes.
	push := Job{Key: Key{Repo: "o/r", Kind: KindPush}, Event: "push", Delivery: "d", Payload: []byte(`{"after":"abc"}`), Installation: 7}
	if next, _, ok := top.Retry(push, ghError(502), now); !ok || string(next.Payload) != string(push.Payload) || next.Delivery != "" {
		t.Errorf("a push's retry %+v, %v; want its payload kept", next, ok)
	}
}

// TestQueueRetriesFailedJob: a job that failed for a passing reason (a
// 502) is held for its backoff and runs again, without a delivery or a
// resync; one refused for good (a 404) is not.
func TestQueueRetriesFailedJob(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	ft := &fakeTimers{}
	ran := make(chan Job, 4)
	p := ProcessorFunc(func(_ context.Context, j Job) (Result, error) {
		ran <- j
		switch {
		case j.Key.PR == 1 && j.Attempt == 0:
			return Result{}, fmt.Errorf("read o/r#1: %w", ghError(502))
		case j.Key.PR == 2:
			return Result{}, ghError(404)
		}
		return Result{}, nil
	})
	m := NewMetrics(nil)
	q := startQueue(t, p, QueueOptions{Workers: 1, Now: func() time.Time { return now }, AfterFunc: ft.afterFunc, Metrics: m,
		Retry: RetryPolicy{Min: 2 * time.Second, rand: func(n int64) int64 { return n - 1 }}})
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
	q.Enqueue(prJob("o/r", 1, "d1"))
	next()
	// The retry is held before the worker takes another job.
	q.Enqueue(prJob("o/r", 2, "d2"))
	next()
	held := ft.last(t)
	if held.d != 2*time.Second {
		t.Fatalf("retry held for %s, want 2s", held.d)
	}
	held.f()
	if j := next(); j.Key.PR != 1 || j.Event != "retry" || j.Attempt != 1 {
		t.Fatalf("ran %+v, want the retry of #1", j)
	}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(ft.timers); n != 1 {
		t.Fatalf("%d jobs held, want 1: the 404 is not tried again", n)
	}
	if v := counterValue(t, m.Retries.WithLabelValues("transient")); v != 1 {
		t.Fatalf("retries{transient} = %v, want 1", v)
	}
}
