package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

var testSecret = []byte("test-webhook-secret-0123456789")

// recorder is a processor that records every job it is given.
type recorder struct {
	mu   sync.Mutex
	jobs []Job
}

func (r *recorder) Process(_ context.Context, j Job) (Result, error) {
	r.mu.Lock()
	r.jobs = append(r.jobs, j)
	r.mu.Unlock()
	return Result{}, nil
}

func (r *recorder) deliveries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, j := range r.jobs {
		out = append(out, j.Delivery)
	}
	return out
}

type testService struct {
	srv *Server
	q   *Queue
	reg *prometheus.Registry
	log *bytes.Buffer
	h   http.Handler
}

func newService(t *testing.T, p Processor, qo QueueOptions, so ServerOptions) *testService {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&syncWriter{w: &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	qo.Metrics, qo.Logger = m, log
	q := NewQueue(p, qo)
	if so.Secrets == nil {
		so.Secrets = [][]byte{testSecret}
	}
	so.Queue, so.Metrics, so.Gatherer, so.Logger = q, m, reg, log
	srv, err := NewServer(so)
	if err != nil {
		t.Fatal(err)
	}
	return &testService{srv: srv, q: q, reg: reg, log: &logs, h: srv.Handler()}
}

func (s *testService) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.q.Start(ctx)
}

// delivery builds a signed webhook request.
func delivery(event, id string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", id)
	r.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex(testSecret, body))
	return r
}

func (s *testService) do(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, r)
	return w
}

func (s *testService) metrics(t *testing.T) string {
	t.Helper()
	w := httptest.NewRecorder()
	s.srv.MetricsHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("/metrics: %d", w.Code)
	}
	return w.Body.String()
}

func TestServerRefusesBadSignatures(t *testing.T) {
	body := readPayload(t, "pull_request.opened.12.json")
	tests := []struct {
		name string
		edit func(r *http.Request)
	}{
		{"wrong secret", func(r *http.Request) {
			r.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex([]byte("another-secret-0123456789"), body))
		}},
		{"sha1 header only", func(r *http.Request) {
			r.Header.Del("X-Hub-Signature-256")
			r.Header.Set("X-Hub-Signature", "sha1=0123456789012345678901234567890123456789")
		}},
		{"no signature", func(r *http.Request) { r.Header.Del("X-Hub-Signature-256") }},
		{"malformed signature", func(r *http.Request) { r.Header.Set("X-Hub-Signature-256", "sha256=xyz") }},
		{"signature of another body", func(r *http.Request) {
			r.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex(testSecret, []byte("{}")))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			s := newService(t, rec, QueueOptions{}, ServerOptions{})
			s.start(t)
			r := delivery("pull_request", "d1", body)
			tc.edit(r)
			if w := s.do(r); w.Code != http.StatusUnauthorized {
				t.Fatalf("status %d %q, want 401", w.Code, w.Body)
			}
			if err := s.q.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(rec.deliveries()) != 0 {
				t.Fatalf("processed %v", rec.deliveries())
			}
			if !strings.Contains(s.metrics(t), `catalogbot_webhook_deliveries_total{event="pull_request",result="bad_signature"} 1`) {
				t.Fatal("bad signature not counted")
			}
		})
	}
}

// TestServerBadSignatureRecordsNothing: a forged delivery does not use up
// its id, and a garbage body is refused for the signature, not parsed.
func TestServerBadSignatureRecordsNothing(t *testing.T) {
	rec := &recorder{}
	s := newService(t, rec, QueueOptions{}, ServerOptions{})
	forged := delivery("pull_request", "d1", []byte("{not json"))
	forged.Header.Set("X-Hub-Signature-256", "sha256="+hmacHex([]byte("guess-guess-guess-guess"), []byte("{not json")))
	if w := s.do(forged); w.Code != http.StatusUnauthorized {
		t.Fatalf("forged garbage: %d, want 401 (verify before parsing)", w.Code)
	}
	if w := s.do(delivery("pull_request", "d1", readPayload(t, "pull_request.opened.12.json"))); w.Code != http.StatusAccepted || w.Body.String() != "accepted\n" {
		t.Fatalf("genuine delivery with the forged id: %d %q", w.Code, w.Body)
	}
}

func TestServerRotatedSecret(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{Secrets: [][]byte{[]byte("new-secret-0123456789abcdef"), testSecret}})
	if w := s.do(delivery("pull_request", "d1", readPayload(t, "pull_request.opened.12.json"))); w.Code != http.StatusAccepted {
		t.Fatalf("signed with the older secret: %d", w.Code)
	}
}

func TestServerTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte(" "), 26<<20)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			rec := &recorder{}
			s := newService(t, rec, QueueOptions{}, ServerOptions{})
			r := delivery("push", "d1", big)
			if chunked {
				r.ContentLength = -1 // no length: the cap must stop the read
			}
			if w := s.do(r); w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413", w.Code)
			}
			if s.q.Len() != 0 {
				t.Fatal("queued")
			}
			if !strings.Contains(s.metrics(t), `result="too_large"} 1`) {
				t.Fatal("not counted")
			}
		})
	}
	// Exactly at a smaller cap is fine.
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{MaxBody: 64 << 10})
	body := readPayload(t, "push.event.3.json")
	if w := s.do(delivery("push", "d", body)); w.Code != http.StatusAccepted {
		t.Fatalf("within cap: %d", w.Code)
	}
}

func TestServerReplies(t *testing.T) {
	prBody := readPayload(t, "pull_request.opened.12.json")
	tests := []struct {
		name   string
		req    func() *http.Request
		code   int
		body   string
		result string // deliveries_total result label counted, "" for none
	}{
		{"accepted", func() *http.Request { return delivery("pull_request", "d", prBody) }, 202, "accepted\n", "accepted"},
		{"ping ignored", func() *http.Request { return delivery("ping", "d", readPayload(t, "ping.event.0.json")) }, 202, "ignored\n", "ignored"},
		{"closed PR ignored", func() *http.Request {
			return delivery("pull_request", "d", readPayload(t, "pull_request.closed.3.json"))
		}, 202, "ignored\n", "ignored"},
		{"event outside the allowlist", func() *http.Request { return delivery("star", "d", []byte(`{"action":"created"}`)) }, 202, "ignored\n", "ignored"},
		{"malformed JSON", func() *http.Request { return delivery("pull_request", "d", []byte(`{"action":`)) }, 400, "malformed payload\n", "malformed"},
		{"missing fields", func() *http.Request { return delivery("pull_request", "d", []byte(`{"action":"opened"}`)) }, 400, "malformed payload\n", "malformed"},
		{"no event header", func() *http.Request {
			r := delivery("pull_request", "d", prBody)
			r.Header.Del("X-GitHub-Event")
			return r
		}, 400, "missing X-GitHub-Event or X-GitHub-Delivery header\n", ""},
		{"no delivery header", func() *http.Request {
			r := delivery("pull_request", "", prBody)
			return r
		}, 400, "missing X-GitHub-Event or X-GitHub-Delivery header\n", "malformed"},
		{"delivery id too long", func() *http.Request { return delivery("pull_request", strings.Repeat("x", 200), prBody) }, 400, "malformed X-GitHub-Event or X-GitHub-Delivery header\n", "malformed"},
		{"GET", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/webhook", nil) }, 405, "method not allowed; POST a webhook delivery\n", ""},
		{"PUT", func() *http.Request {
			r := delivery("pull_request", "d", prBody)
			r.Method = http.MethodPut
			return r
		}, 405, "method not allowed; POST a webhook delivery\n", ""},
		{"healthz", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/healthz", nil) }, 200, "ok\n", ""},
		{"readyz", func() *http.Request { return httptest.NewRequest(http.MethodGet, "/readyz", nil) }, 200, "ready\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			s := newService(t, rec, QueueOptions{}, ServerOptions{})
			w := s.do(tc.req())
			if w.Code != tc.code || w.Body.String() != tc.body {
				t.Fatalf("reply %d %q, want %d %q", w.Code, w.Body, tc.code, tc.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Fatalf("Content-Type %q", ct)
			}
			if tc.code == 405 && w.Header().Get("Allow") != "POST" {
				t.Fatalf("Allow %q", w.Header().Get("Allow"))
			}
			wantQueued := 0
			if tc.result == "accepted" {
				wantQueued = 1
			}
			if s.q.Len() != wantQueued {
				t.Fatalf("queued %d, want %d", s.q.Len(), wantQueued)
			}
			if tc.result != "" && !strings.Contains(s.metrics(t), fmt.Sprintf(`result=%q} 1`, tc.result)) {
				t.Fatalf("result %s not counted:\n%s", tc.result, s.metrics(t))
			}
		})
	}
}

// TestServerAcceptsBeforeProcessing: the reply is back while the processor
// is still blocked on the job.
func TestServerAcceptsBeforeProcessing(t *testing.T) {
	g := newGate()
	s := newService(t, g, QueueOptions{Workers: 1}, ServerOptions{})
	s.start(t)
	body := readPayload(t, "pull_request.synchronize.22.json")
	w := s.do(delivery("pull_request", "d-async", body))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d", w.Code)
	}
	j := <-g.started // the work starts after the reply, and is still blocked
	if j.Delivery != "d-async" || j.Key != (Key{"codertocat/hello-world", 2, KindPR}) || !bytes.Equal(j.Payload, body) || j.Installation != 1 {
		t.Fatalf("job %+v", j.Key)
	}
	close(g.release)
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestServerDuplicateProcessedOnce(t *testing.T) {
	rec := &recorder{}
	s := newService(t, rec, QueueOptions{}, ServerOptions{})
	s.start(t)
	body := readPayload(t, "pull_request_review.submitted.2.json")
	first := s.do(delivery("pull_request_review", "same-id", body))
	second := s.do(delivery("pull_request_review", "same-id", body))
	if first.Body.String() != "accepted\n" || second.Code != http.StatusAccepted || second.Body.String() != "duplicate\n" {
		t.Fatalf("replies %q, %d %q", first.Body, second.Code, second.Body)
	}
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.deliveries(); len(got) != 1 {
		t.Fatalf("processed %v, want once", got)
	}
	if !strings.Contains(s.metrics(t), `catalogbot_webhook_deliveries_total{event="pull_request_review",result="duplicate"} 1`) {
		t.Fatal("duplicate not counted")
	}
}

// TestServerObservesEveryJob: the observer sees each delivery's job, also
// one the queue replaces with a newer job for the same pull request before
// it runs: an edit's sender is in that delivery only.
func TestServerObservesEveryJob(t *testing.T) {
	rec := &recorder{}
	var mu sync.Mutex
	var observed []string
	s := newService(t, rec, QueueOptions{}, ServerOptions{Observe: func(j Job) {
		mu.Lock()
		defer mu.Unlock()
		observed = append(observed, j.Delivery+" "+j.Event+"."+j.Action)
	}})
	body := withField(t, "issue_comment.edited.7.json", func(d map[string]any) {
		d["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
	})
	// The second edit is another edit of the same comment: its own body
	// and updated_at (the same body again would be a replay).
	again := withField(t, "issue_comment.edited.7.json", func(d map[string]any) {
		d["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
		c := d["comment"].(map[string]any)
		c["body"], c["updated_at"] = "/approve", "2030-01-01T00:00:00Z"
	})
	for i, b := range [][]byte{body, again} {
		id := fmt.Sprintf("edit-%d", i+1)
		if w := s.do(delivery("issue_comment", id, b)); w.Code != http.StatusAccepted || w.Body.String() != "accepted\n" {
			t.Fatalf("%s: status %d %q", id, w.Code, w.Body)
		}
	}
	if n := s.q.Len(); n != 1 {
		t.Fatalf("%d jobs queued, want the newer one only", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"edit-1 issue_comment.edited", "edit-2 issue_comment.edited"}; !slices.Equal(observed, want) {
		t.Errorf("observed %q, want %q", observed, want)
	}
}

func TestServerCheckSuiteOfSeveralPRs(t *testing.T) {
	rec := &recorder{}
	s := newService(t, rec, QueueOptions{}, ServerOptions{})
	s.start(t)
	body := withField(t, "check_suite.rerequested.7.json", func(d map[string]any) {
		cs := d["check_suite"].(map[string]any)
		cs["pull_requests"] = append(cs["pull_requests"].([]any), map[string]any{"number": 3.0})
	})
	if w := s.do(delivery("check_suite", "cs", body)); w.Code != http.StatusAccepted {
		t.Fatalf("status %d", w.Code)
	}
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	var prs []int
	for _, j := range rec.jobs {
		prs = append(prs, j.Key.PR)
	}
	if len(prs) != 2 || prs[0]+prs[1] != 5 {
		t.Fatalf("processed PRs %v, want 2 and 3", prs)
	}
}

func TestServerOverloaded(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{MaxPending: 1}, ServerOptions{}) // not started
	if w := s.do(delivery("push", "p1", readPayload(t, "push.event.3.json"))); w.Code != http.StatusAccepted {
		t.Fatalf("first: %d", w.Code)
	}
	w := s.do(delivery("pull_request", "p2", readPayload(t, "pull_request.opened.12.json")))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "30" {
		t.Fatalf("full: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	// Same key as the queued push: replaces it, so it fits.
	if w := s.do(delivery("push", "p3", readPayload(t, "push.event.4.json"))); w.Code != http.StatusAccepted {
		t.Fatalf("replacement: %d", w.Code)
	}
	m := s.metrics(t)
	for _, want := range []string{
		`catalogbot_webhook_deliveries_total{event="pull_request",result="overloaded"} 1`,
		`catalogbot_webhook_deliveries_total{event="push",result="replaced"} 1`,
		`catalogbot_webhook_deliveries_total{event="push",result="accepted"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestServerReadyz(t *testing.T) {
	var notReady atomic.Bool
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{Ready: func() error {
		if notReady.Load() {
			return fmt.Errorf("no installation token yet")
		}
		return nil
	}})
	s.start(t)
	get := func() (int, string) {
		w := s.do(httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code, w.Body.String()
	}
	if c, b := get(); c != 200 {
		t.Fatalf("ready: %d %q", c, b)
	}
	notReady.Store(true)
	if c, b := get(); c != 503 || strings.Contains(b, "token") {
		t.Fatalf("not ready: %d %q (the reason stays in the log)", c, b)
	}
	// A NotReadyError's reason is said; its detail stays in the log.
	s.srv.ready = AllReady(nil, func() error {
		return NotReady("the state store cannot be written", errors.New("dial tcp 10.0.0.7:5432: connection refused"))
	})
	if c, b := get(); c != 503 || b != "not ready: the state store cannot be written\n" {
		t.Fatalf("not ready with a reason: %d %q", c, b)
	}
	s.srv.ready = func() error {
		if notReady.Load() {
			return fmt.Errorf("no installation token yet")
		}
		return nil
	}
	notReady.Store(false)
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, b := get(); c != 503 || b != "draining\n" {
		t.Fatalf("draining: %d %q", c, b)
	}
	// Liveness does not depend on readiness.
	if w := s.do(httptest.NewRequest(http.MethodGet, "/healthz", nil)); w.Code != 200 {
		t.Fatalf("healthz: %d", w.Code)
	}
	// A delivery while draining is refused with 503.
	if w := s.do(delivery("push", "late", readPayload(t, "push.event.3.json"))); w.Code != 503 {
		t.Fatalf("delivery while draining: %d", w.Code)
	}
}

func TestServerMetricsEndpoint(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{})
	s.do(delivery("pull_request", "d1", readPayload(t, "pull_request.opened.12.json")))
	s.srv.m.GitHubCalls.WithLabelValues("GET", "200").Inc()
	s.srv.m.Errors.WithLabelValues("panic").Inc()
	s.srv.m.CheckDuration.Observe(1)
	s.srv.m.QueueAge.Observe(1)
	body := s.metrics(t)
	for _, name := range []string{
		"catalogbot_webhook_deliveries_total", "catalogbot_queue_depth 1", "catalogbot_queue_age_seconds_bucket",
		"catalogbot_check_duration_seconds_count", "catalogbot_github_api_calls_total", "catalogbot_github_rate_limit_remaining",
		`catalogbot_merges_total{result="merged"} 0`, `catalogbot_publishes_total{result="pushed"} 0`, "catalogbot_errors_total",
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	w := httptest.NewRecorder()
	s.srv.MetricsHandler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d", w.Code)
	}
}

// TestServerEventLabelBounded: unauthenticated clients choose the event
// header; unknown names share one label value.
func TestServerEventLabelBounded(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{})
	for i := range 5 {
		r := delivery(fmt.Sprintf("made_up_%d", i), "d", []byte("{}"))
		r.Header.Set("X-Hub-Signature-256", "sha256=00")
		s.do(r)
	}
	m := s.metrics(t)
	if strings.Contains(m, "made_up") || !strings.Contains(m, `{event="other",result="bad_signature"} 5`) {
		t.Fatalf("labels:\n%s", m)
	}
}

func TestServerLogsCarryDeliveryContext(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{})
	s.do(delivery("pull_request", "log-d", readPayload(t, "pull_request.synchronize.22.json")))
	var entry map[string]any
	for line := range strings.SplitSeq(s.log.String(), "\n") {
		if strings.Contains(line, "webhook accepted") {
			if err := json.Unmarshal([]byte(line), &entry); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]any{"delivery": "log-d", "event": "pull_request", "action": "synchronize",
		"repo": "codertocat/hello-world", "pr": 2.0, "sha": "ec26c3e57ca3a959ca5aad62de7213c562f8c821"}
	for k, v := range want {
		if entry[k] != v {
			t.Errorf("log %s = %v, want %v (entry %v)", k, entry[k], v, entry)
		}
	}
}

func TestNewServerRefusesNoSecret(t *testing.T) {
	q := NewQueue(&recorder{}, QueueOptions{Logger: discard})
	for _, secrets := range [][][]byte{nil, {}, {{}}} {
		if _, err := NewServer(ServerOptions{Secrets: secrets, Queue: q}); err == nil ||
			!strings.Contains(err.Error(), "refusing to start without a webhook secret") {
			t.Fatalf("secrets %q: err %v", secrets, err)
		}
	}
	if _, err := NewServer(ServerOptions{Secrets: [][]byte{testSecret}}); err == nil {
		t.Fatal("no queue accepted")
	}
}

// TestServerOverLoopback runs one delivery through a real HTTP server, as
// GitHub would send it.
func TestServerOverLoopback(t *testing.T) {
	rec := &recorder{}
	s := newService(t, rec, QueueOptions{}, ServerOptions{})
	s.start(t)
	ts := httptest.NewServer(s.h)
	defer ts.Close()
	body := readPayload(t, "push.event.3.json")
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/webhook", bytes.NewReader(body))
	req.Header = delivery("push", "net-1", body).Header
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || string(b) != "accepted\n" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.deliveries(); len(got) != 1 || got[0] != "net-1" {
		t.Fatalf("processed %v", got)
	}
}
