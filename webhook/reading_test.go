package webhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestServerBoundsUnverifiedBodies: bodies are read before their signature
// can be checked, so the bytes being read at once are bounded. While one
// client holds nearly the whole budget with bytes it has sent, another
// delivery is refused with 503 and Retry-After; once the first is done
// (here refused for its signature) the budget is free again.
func TestServerBoundsUnverifiedBodies(t *testing.T) {
	body := readPayload(t, "pull_request.opened.12.json")
	rec := &recorder{}
	const budget = 64 << 10
	s := newService(t, rec, QueueOptions{}, ServerOptions{MaxBody: budget, MaxReading: budget})
	s.start(t)

	// The slow client announces the largest body the budget allows and
	// sends all of it but a few bytes. Once the server has charged those,
	// its handler is reading and holds them.
	sent := budget - len(body)/2
	pr, pw := io.Pipe()
	slow := slowRequest(pr, budget)
	slowDone := make(chan *httptest.ResponseRecorder)
	go func() { slowDone <- s.do(slow) }()
	if _, err := pw.Write(make([]byte, sent)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow body to be charged", func() bool { return s.srv.reading.Load() == int64(sent) })

	w := s.do(delivery("pull_request", "d1", body))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("while the budget is taken: status %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if got := s.srv.reading.Load(); got != int64(sent) {
		t.Fatalf("after the refusal %d bytes are charged, want the slow body's %d", got, sent)
	}

	if _, err := pw.Write(make([]byte, budget-sent)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if w := <-slowDone; w.Code != http.StatusUnauthorized {
		t.Fatalf("the slow delivery: status %d, want 401", w.Code)
	}
	if got := s.srv.reading.Load(); got != 0 {
		t.Fatalf("%d bytes still charged when nothing is being read", got)
	}

	if w := s.do(delivery("pull_request", "d1", body)); w.Code != http.StatusAccepted {
		t.Fatalf("after the budget is free: status %d %q, want 202", w.Code, w.Body)
	}
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.deliveries(); len(got) != 1 || got[0] != "d1" {
		t.Errorf("processed %v, want d1 once", got)
	}
	if !strings.Contains(s.metrics(t), `result="overloaded"} 1`) {
		t.Error("the refused delivery is not counted as overloaded")
	}
}

// TestServerChargesReceivedBytes: the budget is charged with the bytes a
// body has sent, not the size it claims. Clients that each claim the whole
// budget and send one byte leave room for a genuine delivery.
func TestServerChargesReceivedBytes(t *testing.T) {
	body := readPayload(t, "pull_request.opened.12.json")
	rec := &recorder{}
	const budget = 64 << 10
	s := newService(t, rec, QueueOptions{}, ServerOptions{MaxBody: budget, MaxReading: budget})
	s.start(t)

	const claims = 5
	var pipes []*io.PipeWriter
	done := make(chan *httptest.ResponseRecorder, claims)
	for range claims {
		pr, pw := io.Pipe()
		pipes = append(pipes, pw)
		r := slowRequest(pr, budget)
		go func() { done <- s.do(r) }()
		if _, err := pw.Write([]byte(" ")); err != nil {
			t.Fatal(err)
		}
	}
	// Each claim's byte is charged once the server has read it; a
	// charge by Content-Length would be far more and never equal this.
	waitFor(t, "the claims' bytes to be charged", func() bool { return s.srv.reading.Load() == claims })
	if w := s.do(delivery("pull_request", "genuine", body)); w.Code != http.StatusAccepted {
		t.Fatalf("the genuine delivery beside %d clients claiming %d bytes: status %d %q, want 202", claims, budget, w.Code, w.Body)
	}
	for _, pw := range pipes {
		pw.CloseWithError(io.ErrUnexpectedEOF)
	}
	for range claims {
		if w := <-done; w.Code != http.StatusBadRequest {
			t.Errorf("a cut-off claim: status %d, want 400", w.Code)
		}
	}
	if got := s.srv.reading.Load(); got != 0 {
		t.Fatalf("%d bytes still charged when nothing is being read", got)
	}
}

// slowRequest is a delivery whose body comes from r and claims declared
// bytes, signed with a made-up signature.
func slowRequest(r io.Reader, declared int64) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/webhook", r)
	req.ContentLength = declared
	req.Header.Set("X-GitHub-Event", "pull_request")
	req.Header.Set("X-GitHub-Delivery", "slow")
	req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
	return req
}

func TestServerReadingBelowBody(t *testing.T) {
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }), QueueOptions{})
	if _, err := NewServer(ServerOptions{Secrets: [][]byte{testSecret}, Queue: q, MaxBody: 2 << 20, MaxReading: 1 << 20}); err == nil {
		t.Error("a reading budget below one body was accepted")
	}
}
