package ghapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted answers each request with the next reply of a script and keeps
// what it was sent.
type scripted struct {
	mu      sync.Mutex
	replies []func(w http.ResponseWriter, r *http.Request)
	bodies  []string
	headers []http.Header
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(data))
	s.headers = append(s.headers, r.Header.Clone())
	n := len(s.bodies) - 1
	s.mu.Unlock()
	if n >= len(s.replies) {
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	s.replies[n](w, r)
}

func status(code int, headers ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		if code == http.StatusForbidden && len(headers)%2 == 1 {
			io.WriteString(w, headers[len(headers)-1])
		}
	}
}

func ok(body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }
}

// fakeClock records waits instead of sleeping.
type fakeClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return ctx.Err()
}

func TestTransportRetries(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	reset := strconv.FormatInt(now.Add(30*time.Second).Unix(), 10)
	farReset := strconv.FormatInt(now.Add(2*time.Hour).Unix(), 10)
	tests := []struct {
		name     string
		method   string
		replies  []func(http.ResponseWriter, *http.Request)
		want     int             // final status the caller sees
		calls    int             // requests the server saw
		waits    []time.Duration // exact waits; nil: only count them
		nwaits   int
		wantBody string
	}{
		{name: "502 twice then 200", method: "POST", replies: []func(http.ResponseWriter, *http.Request){status(502), status(502), ok("done")}, want: 200, calls: 3, nwaits: 2, wantBody: "done"},
		{name: "every server error", method: "PATCH", replies: []func(http.ResponseWriter, *http.Request){status(500), status(503), status(504), ok("x")}, want: 200, calls: 4, nwaits: 3},
		{name: "503 with Retry-After", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(503, "Retry-After", "3"), ok("y")}, want: 200, calls: 2, waits: []time.Duration{3 * time.Second}},
		{name: "secondary limit 403 Retry-After", method: "POST", replies: []func(http.ResponseWriter, *http.Request){status(403, "Retry-After", "1", "X-RateLimit-Remaining", "4000"), ok("z")}, want: 200, calls: 2, waits: []time.Duration{time.Second}},
		{name: "secondary limit 429 Retry-After", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(429, "Retry-After", "2"), ok("z")}, want: 200, calls: 2, waits: []time.Duration{2 * time.Second}},
		{name: "secondary limit by body", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(403, `{"message":"You have exceeded a secondary rate limit."}`), ok("z")}, want: 200, calls: 2, waits: []time.Duration{time.Minute}},
		{name: "primary limit waits for reset", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset), ok("z")}, want: 200, calls: 2, waits: []time.Duration{31 * time.Second}},
		{name: "primary limit beyond MaxWait is returned", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", farReset), ok("z")}, want: 403, calls: 1, waits: []time.Duration{}},
		{name: "plain 403 is final", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(403, `{"message":"Resource not accessible by integration"}`), ok("z")}, want: 403, calls: 1, waits: []time.Duration{}, wantBody: `{"message":"Resource not accessible by integration"}`},
		{name: "404 is final", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(404), ok("z")}, want: 404, calls: 1, waits: []time.Duration{}},
		{name: "409 is final", method: "PUT", replies: []func(http.ResponseWriter, *http.Request){status(409), ok("z")}, want: 409, calls: 1, waits: []time.Duration{}},
		{name: "retries run out", method: "GET", replies: []func(http.ResponseWriter, *http.Request){status(502), status(502), status(502), status(502), status(502), ok("z")}, want: 502, calls: 5, nwaits: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{replies: tc.replies}
			srv := httptest.NewServer(s)
			defer srv.Close()
			clock := &fakeClock{}
			var calls []string
			tr := NewTransport(TransportOptions{
				ETagEntries: -1,
				Hooks:       Hooks{Call: func(m, c string) { calls = append(calls, m+" "+c) }},
				sleep:       clock.sleep,
				now:         func() time.Time { return now },
			})
			req, _ := http.NewRequest(tc.method, srv.URL+"/x", strings.NewReader(`{"a":1}`))
			if tc.method == "GET" {
				req, _ = http.NewRequest(tc.method, srv.URL+"/x", nil)
			}
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tc.want)
			}
			if len(s.bodies) != tc.calls || len(calls) != tc.calls {
				t.Errorf("server saw %d requests, hooks %d; want %d", len(s.bodies), len(calls), tc.calls)
			}
			if tc.method != "GET" {
				for i, b := range s.bodies {
					if b != `{"a":1}` {
						t.Errorf("attempt %d sent body %q, want the original", i+1, b)
					}
				}
			}
			if tc.waits != nil {
				if len(clock.waits) != len(tc.waits) {
					t.Fatalf("waits = %v, want %v", clock.waits, tc.waits)
				}
				for i := range tc.waits {
					if clock.waits[i] != tc.waits[i] {
						t.Errorf("wait %d = %v, want %v", i, clock.waits[i], tc.waits[i])
					}
				}
			} else if len(clock.waits) != tc.nwaits {
				t.Errorf("waited %d times, want %d", len(clock.waits), tc.nwaits)
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
		})
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	tr := NewTransport(TransportOptions{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	for attempt, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		for range 50 {
			d := tr.backoff(attempt)
			if d < want/2 || d > want {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
}

// failing fails the first n round trips with a transport error.
type failing struct {
	n    int
	base http.RoundTripper
}

func (f *failing) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return nil, errors.New("connection reset by peer")
	}
	return f.base.RoundTrip(r)
}

func TestTransportErrorsAreRetried(t *testing.T) {
	s := &scripted{replies: []func(http.ResponseWriter, *http.Request){ok("fine")}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	clock := &fakeClock{}
	var codes []string
	tr := NewTransport(TransportOptions{Base: &failing{n: 2, base: http.DefaultTransport}, sleep: clock.sleep,
		Hooks: Hooks{Call: func(_, c string) { codes = append(codes, c) }}})
	resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := strings.Join(codes, ","); got != "error,error,200" {
		t.Errorf("calls = %s, want error,error,200", got)
	}
	if s.bodies[0] != "{}" {
		t.Errorf("body = %q after two failed attempts", s.bodies[0])
	}
}

func TestTransportStopsWithContext(t *testing.T) {
	s := &scripted{replies: []func(http.ResponseWriter, *http.Request){status(502), ok("late")}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	tr := NewTransport(TransportOptions{sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		return sleepCtx(ctx, d)
	}})
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if len(s.bodies) != 1 {
		t.Errorf("server saw %d requests after cancel, want 1", len(s.bodies))
	}
}

func TestRateLimitHook(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", "4321")
	}))
	defer srv.Close()
	got := -1
	tr := NewTransport(TransportOptions{Hooks: Hooks{RateLimit: func(n int) { got = n }}})
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got != 4321 {
		t.Errorf("rate limit hook saw %d, want 4321", got)
	}
}

// etagServer serves a body with an ETag and answers 304 to a matching
// If-None-Match, counting full replies.
type etagServer struct {
	mu          sync.Mutex
	body        string
	full, short int
}

func (e *etagServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	tag := `"` + strconv.Itoa(len(e.body)) + r.Header.Get("Authorization") + r.URL.Path + `"`
	w.Header().Set("X-RateLimit-Remaining", "100")
	if r.Header.Get("If-None-Match") == tag {
		e.short++
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	e.full++
	w.Header().Set("ETag", tag)
	w.Header().Set("Link", `<next>; rel="next"`)
	io.WriteString(w, e.body+r.URL.Path)
}

func TestConditionalRequests(t *testing.T) {
	es := &etagServer{body: "hello"}
	srv := httptest.NewServer(es)
	defer srv.Close()
	tr := NewTransport(TransportOptions{ETagEntries: 2})
	get := func(path, auth string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}

	steps := []struct {
		path, auth  string
		full, short int // server counts after the step
		body        string
	}{
		{"/a", "token 1", 1, 0, "hello/a"},
		{"/a", "token 1", 1, 1, "hello/a"}, // served from the cache on 304
		{"/a", "token 2", 2, 1, "hello/a"}, // another credential: its own entry
		{"/b", "token 1", 3, 1, "hello/b"}, // evicts /a token 1 (capacity 2)
		{"/a", "token 2", 3, 2, "hello/a"}, // still cached
		{"/a", "token 1", 4, 2, "hello/a"}, // was evicted: full reply again
	}
	for i, st := range steps {
		resp, body := get(st.path, st.auth)
		if resp.StatusCode != 200 || body != st.body {
			t.Fatalf("step %d: %d %q, want 200 %q", i, resp.StatusCode, body, st.body)
		}
		if es.full != st.full || es.short != st.short {
			t.Fatalf("step %d: server gave %d full and %d 304 replies, want %d and %d", i, es.full, es.short, st.full, st.short)
		}
		if es.short > 0 && i == 1 {
			if got := resp.Header.Get("X-RateLimit-Remaining"); got != "99" {
				t.Errorf("cached reply carries rate limit %q, want the 304's 99", got)
			}
			if resp.Header.Get("Link") == "" {
				t.Error("cached reply lost its Link header")
			}
		}
	}
	if n := tr.etag.len(); n != 2 {
		t.Errorf("cache holds %d entries, want 2", n)
	}

	// A changed resource gets a new ETag and a full reply.
	es.mu.Lock()
	es.body = "changed!"
	es.mu.Unlock()
	if _, body := get("/a", "token 2"); body != "changed!/a" {
		t.Errorf("after a change: %q", body)
	}
}

// TestAttemptTimeout: an answer that never comes (headers, or the rest of
// a body) is given up after AttemptTimeout and the request tried again,
// instead of holding its caller for good.
func TestAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	silent := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
	halfBody := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"partial":`)
		w.(http.Flusher).Flush()
		silent(w, r)
	}
	tests := []struct {
		name    string
		replies []func(http.ResponseWriter, *http.Request)
		want    string // the body read, or the error's text
		calls   string
	}{
		{"no headers, then an answer", []func(http.ResponseWriter, *http.Request){silent, ok("fine")}, "fine", "error,200"},
		{"never an answer", []func(http.ResponseWriter, *http.Request){silent, silent}, "no answer within 50ms", "error,error"},
		{"a body that stops", []func(http.ResponseWriter, *http.Request){halfBody}, "context deadline exceeded", "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{replies: tt.replies}
			srv := httptest.NewServer(s)
			defer srv.Close()
			var codes []string
			tr := NewTransport(TransportOptions{AttemptTimeout: 50 * time.Millisecond, Retries: 1, sleep: (&fakeClock{}).sleep,
				Hooks: Hooks{Call: func(_, c string) { codes = append(codes, c) }}})
			var got string
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
			if err == nil {
				data, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				got = string(data)
				if rerr != nil {
					got = rerr.Error()
				}
			} else {
				got = err.Error()
				var te *AttemptTimeoutError
				if !errors.As(err, &te) || !te.Timeout() {
					t.Errorf("err = %#v, want an *AttemptTimeoutError", err)
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q in it", got, tt.want)
			}
			if c := strings.Join(codes, ","); c != tt.calls {
				t.Errorf("calls = %s, want %s", c, tt.calls)
			}
		})
	}
}
