package ghapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Hooks report what the transport sees. Either may be nil.
type Hooks struct {
	// Call is told of every HTTP exchange, retries included: the method
	// and the status code, or "error" when no response came.
	Call func(method, code string)
	// RateLimit is told the X-RateLimit-Remaining of every response that
	// carries one.
	RateLimit func(remaining int)
}

// TransportOptions configure a Transport. The zero value is usable.
type TransportOptions struct {
	// Base carries the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Retries is how many times a request is repeated after a server
	// error, a transport error or a rate limit; 0 means 4, negative none.
	Retries int
	// MinBackoff and MaxBackoff bound the exponential backoff between
	// retries of server and transport errors; 0 means 200ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// MaxWait is the longest a rate limit is waited out before a retry;
	// a limit that resets later is returned to the caller at once, since
	// holding a worker for longer helps nobody (the periodic resync picks
	// the work up again). 0 means 90s.
	MaxWait time.Duration
	// ETagEntries bounds the conditional-request cache; 0 means 512,
	// negative disables it.
	ETagEntries int
	// ETagMaxBody is the largest response body that is cached; 0 means
	// 1 MiB.
	ETagMaxBody int
	// AttemptTimeout bounds one attempt, from sending the request to the
	// last byte of its response body read: an answer that never comes
	// (a connection GitHub or a proxy holds open and silent) is given up
	// and retried like a transport error, instead of holding the job,
	// its worker and its lease for good. 0 means DefaultAttemptTimeout,
	// negative no bound.
	AttemptTimeout time.Duration
	Hooks          Hooks

	// sleep waits d or until ctx ends; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// now is the clock for X-RateLimit-Reset; tests replace it.
	now func() time.Time
}

// Transport is an http.RoundTripper for the GitHub API. It is the base under
// ghinstallation's transports, so it sees the final Authorization header:
// the conditional-request cache is keyed by it, and the token requests
// ghinstallation makes are retried like any other.
//
// Retried: transport errors and 500, 502, 503 and 504, with capped
// exponential backoff and jitter; secondary rate limits (403 or 429 with
// Retry-After, or a 403 whose body says so) and exhausted primary limits
// (403 or 429 with X-RateLimit-Remaining: 0), after waiting as long as
// GitHub asks, up to MaxWait. Every method is retried, POST and PATCH
// included: request bodies are buffered so they can be sent again, and the
// reconciler's writes are idempotent (it finds its check run and comment
// before creating them, and a merge names the commit it merges).
type Transport struct {
	o    TransportOptions
	etag *etagCache
}

// DefaultAttemptTimeout is TransportOptions.AttemptTimeout's default:
// GitHub itself ends a REST request that takes longer than 10 s, so an
// attempt still unanswered after three times that is not coming.
const DefaultAttemptTimeout = 30 * time.Second

// NewTransport returns a Transport with o's settings.
func NewTransport(o TransportOptions) *Transport {
	if o.AttemptTimeout == 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.Base == nil {
		o.Base = http.DefaultTransport
	}
	if o.Retries == 0 {
		o.Retries = 4
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 200 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 90 * time.Second
	}
	if o.ETagMaxBody <= 0 {
		o.ETagMaxBody = 1 << 20
	}
	if o.sleep == nil {
		o.sleep = sleepCtx
	}
	if o.now == nil {
		o.now = time.Now
	}
	t := &Transport{o: o}
	switch {
	case o.ETagEntries == 0:
		t.etag = newETagCache(512)
	case o.ETagEntries > 0:
		t.etag = newETagCache(o.ETagEntries)
	}
	return t
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := bufferBody(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()

	// Conditional GET: a 304 costs no rate limit and no body.
	var cached *etagEntry
	var key string
	if t.etag != nil && req.Method == http.MethodGet && req.Header.Get("If-None-Match") == "" && req.Header.Get("Range") == "" {
		key = etagKey(req)
		cached = t.etag.get(key)
	}

	for attempt := 0; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if t.o.AttemptTimeout > 0 {
			actx, cancel = context.WithTimeout(ctx, t.o.AttemptTimeout)
		}
		r := req.Clone(actx)
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		if cached != nil {
			r.Header.Set("If-None-Match", cached.etag)
		}
		resp, err := t.o.Base.RoundTrip(r)
		if err != nil {
			cancel()
			if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
				err = &AttemptTimeoutError{Method: req.Method, URL: req.URL.Redacted(), After: t.o.AttemptTimeout, Err: err}
			}
			t.call(req.Method, "error")
			if ctx.Err() != nil || attempt >= t.o.Retries {
				return nil, err
			}
			if err := t.o.sleep(ctx, t.backoff(attempt)); err != nil {
				return nil, err
			}
			continue
		}
		// The attempt's bound lasts until its body is closed: a body
		// that stops coming in the middle is given up too.
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		t.call(req.Method, strconv.Itoa(resp.StatusCode))
		if rem, ok := headerInt(resp.Header, "X-RateLimit-Remaining"); ok && t.o.Hooks.RateLimit != nil {
			t.o.Hooks.RateLimit(int(rem))
		}

		wait, retry := t.retryAfter(resp, attempt)
		if !retry || attempt >= t.o.Retries {
			return t.finish(req, key, cached, resp)
		}
		drain(resp)
		if err := t.o.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// AttemptTimeoutError is an attempt that had no complete answer within
// TransportOptions.AttemptTimeout. It is a net.Error that says it timed
// out, so callers class it with the other network errors.
type AttemptTimeoutError struct {
	Method, URL string
	After       time.Duration
	Err         error
}

func (e *AttemptTimeoutError) Error() string {
	return fmt.Sprintf("%s %s: no answer within %s: %v", e.Method, e.URL, e.After, e.Err)
}

func (e *AttemptTimeoutError) Unwrap() error   { return e.Err }
func (e *AttemptTimeoutError) Timeout() bool   { return true }
func (e *AttemptTimeoutError) Temporary() bool { return true }

// cancelOnClose ends an attempt's context once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *Transport) call(method, code string) {
	if t.o.Hooks.Call != nil {
		t.o.Hooks.Call(method, code)
	}
}

// finish turns a 304 into the cached 200 and caches a 200 that has an ETag.
func (t *Transport) finish(req *http.Request, key string, cached *etagEntry, resp *http.Response) (*http.Response, error) {
	if key == "" {
		return resp, nil
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		drain(resp)
		out := &http.Response{
			Status:        "200 OK",
			StatusCode:    http.StatusOK,
			Proto:         resp.Proto,
			ProtoMajor:    resp.ProtoMajor,
			ProtoMinor:    resp.ProtoMinor,
			Header:        cached.header.Clone(),
			Body:          io.NopCloser(bytes.NewReader(cached.body)),
			ContentLength: int64(len(cached.body)),
			Request:       req,
		}
		// The rate limit headers and the Date of the 304 are current;
		// those stored with the body are not. The Date says when the
		// body was still GitHub's answer (freshness is decided on it).
		for k, v := range resp.Header {
			if k := http.CanonicalHeaderKey(k); strings.HasPrefix(k, "X-Ratelimit-") || k == "Date" {
				out.Header[k] = v
			}
		}
		return out, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		data, err := io.ReadAll(io.LimitReader(resp.Body, int64(t.o.ETagMaxBody)+1))
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("read %s %s: %w", req.Method, req.URL.Redacted(), err)
		}
		if len(data) <= t.o.ETagMaxBody {
			resp.Body.Close()
			t.etag.put(key, &etagEntry{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: data})
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return resp, nil
		}
		// Too large to keep: hand it on whole, read part and rest.
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		return resp, nil
	}
	return resp, nil
}

// retryAfter says whether resp is worth another attempt and after how long.
func (t *Transport) retryAfter(resp *http.Response, attempt int) (time.Duration, bool) {
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := retryAfterHeader(resp.Header); ok {
			return t.capWait(d)
		}
		return t.backoff(attempt), true
	case http.StatusForbidden, http.StatusTooManyRequests:
		if d, ok := retryAfterHeader(resp.Header); ok {
			return t.capWait(d)
		}
		if rem, ok := headerInt(resp.Header, "X-RateLimit-Remaining"); ok && rem == 0 {
			if reset, ok := headerInt(resp.Header, "X-RateLimit-Reset"); ok {
				// A second of slack: GitHub's clock and ours differ.
				return t.capWait(time.Unix(reset, 0).Sub(t.o.now()) + time.Second)
			}
			return t.capWait(time.Minute)
		}
		if resp.StatusCode == http.StatusTooManyRequests || secondaryLimitBody(resp) {
			// GitHub documents "wait at least one minute" when a
			// secondary limit comes without a header.
			return t.capWait(time.Minute)
		}
	}
	return 0, false
}

// capWait retries after d unless d exceeds MaxWait.
func (t *Transport) capWait(d time.Duration) (time.Duration, bool) {
	if d < 0 {
		d = 0
	}
	if d > t.o.MaxWait {
		return 0, false
	}
	return d, true
}

// backoff is the wait before retry attempt+1: exponential from MinBackoff,
// capped at MaxBackoff, with half of it random so that many clients that
// failed together do not come back together.
func (t *Transport) backoff(attempt int) time.Duration {
	d := t.o.MinBackoff << min(attempt, 20)
	if d <= 0 || d > t.o.MaxBackoff {
		d = t.o.MaxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

// secondaryLimitBody reports whether a 403's body is GitHub's secondary
// rate limit message, restoring the body for the caller either way.
func secondaryLimitBody(resp *http.Response) bool {
	if resp.StatusCode != http.StatusForbidden || resp.Body == nil {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), rest), rest}
	if err != nil {
		return false
	}
	s := strings.ToLower(string(data))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "abuse detection")
}

func retryAfterHeader(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return time.Until(at), true
	}
	return 0, false
}

func headerInt(h http.Header, name string) (int64, bool) {
	v := h.Get(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// bufferBody reads the request body once so that every attempt can send it.
func bufferBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	data, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("read the body of %s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	return data, nil
}

// drain reads a little of a discarded response so its connection can be
// reused, then closes it.
func drain(resp *http.Response) {
	if resp.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
