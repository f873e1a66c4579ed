package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// Backoff spaces out retries: the n-th retry waits about
// Initial * Factor^(n-1), at most Max. Half of each wait is random (equal
// jitter), so that clients that failed together do not retry together.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Factor  float64
}

// DefaultBackoff waits about 0.5 s, 1 s, 2 s, ... up to 10 s.
var DefaultBackoff = Backoff{Initial: 500 * time.Millisecond, Max: 10 * time.Second, Factor: 2}

// wait is the backoff before retry n (1 for the first retry); r is a random
// number in [0, 1).
func (b Backoff) wait(n int, r float64) time.Duration {
	d := float64(b.Initial) * math.Pow(b.Factor, float64(n-1))
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	return time.Duration(d/2 + r*d/2)
}

// Clock is the time source of retries. Tests replace it so that waits take
// no time and can be asserted.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx.Err() in the latter case.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryOptions configure NewRetryTransport.
type RetryOptions struct {
	// Attempts is how often a request is tried in all, the first
	// included.
	Attempts int
	// Timeout bounds each attempt, until the response headers and body
	// are read.
	Timeout time.Duration
	Backoff Backoff
	// MaxRetryAfter caps how long a Retry-After is waited for; a registry
	// asking for longer gets its answer passed on instead, as a failure.
	MaxRetryAfter time.Duration
	// Clock and Jitter replace the time source and the random part of
	// backoffs, for tests (default: real time, math/rand).
	Clock  Clock
	Jitter func() float64
	// Log receives a debug record per attempt (default: discard).
	Log *slog.Logger
}

// NewRetryTransport gives every request through next a timeout and retries
// the ones that failed for reasons that may pass: timeouts, dropped
// connections, 408, 429, 500, 502, 503 and 504. It honours Retry-After on
// 429 and 503 and otherwise backs off exponentially with jitter.
//
// It belongs below go-containerregistry's authentication, so token
// requests are retried the same way, and it replaces go-containerregistry's
// own retries, which neither honour Retry-After nor can be observed.
func NewRetryTransport(next http.RoundTripper, o RetryOptions) http.RoundTripper {
	t := &retryTransport{
		next:          next,
		attempts:      o.Attempts,
		timeout:       o.Timeout,
		backoff:       o.Backoff,
		maxRetryAfter: o.MaxRetryAfter,
		clock:         o.Clock,
		jitter:        o.Jitter,
		log:           o.Log,
	}
	if t.clock == nil {
		t.clock = realClock{}
	}
	if t.jitter == nil {
		t.jitter = rand.Float64
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

type retryTransport struct {
	next          http.RoundTripper
	attempts      int
	timeout       time.Duration
	backoff       Backoff
	maxRetryAfter time.Duration
	clock         Clock
	jitter        func() float64
	log           *slog.Logger
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.Body != nil && req.Body != http.NoBody {
			// Only requests whose body can be replayed are retried;
			// see retryable.
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(req.Context())
			r.Body = body
		}
		ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
		start := t.clock.Now()
		resp, err := t.next.RoundTrip(r.WithContext(ctx))
		if err != nil && ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			err = &timeoutError{method: req.Method, url: redactURL(req.URL.String()), after: t.timeout}
		}
		wait, retry := t.retryable(req, resp, err, attempt)
		last := !retry || attempt >= t.attempts
		t.logAttempt(req, resp, err, attempt, t.clock.Now().Sub(start), last, wait)
		if last {
			if err != nil {
				cancel()
				return nil, err
			}
			// The timeout covers reading the body too; it is released
			// when the caller closes it.
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		if resp != nil {
			// Drain a little so the connection can be reused.
			io.CopyN(io.Discard, resp.Body, 4096)
			resp.Body.Close()
		}
		cancel()
		if err := t.clock.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// retryable decides whether a request is tried again after attempt, and
// after how long.
func (t *retryTransport) retryable(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if req.Context().Err() != nil {
		return 0, false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return 0, false
	}
	if err != nil {
		return t.backoff.wait(attempt, t.jitter()), temporary(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), t.clock.Now()); ok {
			return d, d <= t.maxRetryAfter
		}
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
	default:
		return 0, false
	}
	return t.backoff.wait(attempt, t.jitter()), true
}

// temporary reports whether a failed round trip may succeed if tried again:
// timeouts and connections that were refused, reset or cut short. TLS and
// protocol errors, such as an https request to a plain-HTTP registry, are
// permanent; go-containerregistry relies on them failing fast to fall back
// to http for local registries.
func temporary(err error) bool {
	var te *timeoutError
	var rh tls.RecordHeaderError
	var nerr net.Error
	var silent *timeout.Error
	switch {
	case errors.As(err, &silent) && silent.Timeout():
		// A registry that stayed silent for the timeout package's whole wait
		// is not asked again: retrying would multiply the time a
		// command takes to give up on it.
		return false
	case errors.As(err, &te):
		return true
	case errors.As(err, &rh):
		return false
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &nerr):
		return nerr.Timeout()
	}
	return false
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

func (t *retryTransport) logAttempt(req *http.Request, resp *http.Response, err error, attempt int, took time.Duration, last bool, wait time.Duration) {
	if !t.log.Enabled(req.Context(), slog.LevelDebug) {
		return
	}
	// Only the method and the URL without its query: headers carry
	// credentials and token queries may too.
	attrs := []any{"method", req.Method, "url", redactURL(req.URL.String()), "attempt", attempt, "took", took}
	if err != nil {
		attrs = append(attrs, "error", redactError(err))
	} else {
		attrs = append(attrs, "status", resp.StatusCode)
	}
	if !last {
		attrs = append(attrs, "retry_in", wait)
	}
	t.log.Debug("registry request", attrs...)
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// timeoutError is an attempt that ran out of its time.
type timeoutError struct {
	method, url string
	after       time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s %s: no answer within %s", e.method, e.url, e.after)
}

func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
func (e *timeoutError) Unwrap() error   { return context.DeadlineExceeded }
