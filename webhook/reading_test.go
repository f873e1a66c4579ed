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
// client holds the whole budget with a body it sends slowly, another
// delivery is refused with 503 and Retry-After; once the first is done
// (here refused for its signature) the budget is free again.
func TestServerBoundsUnverifiedBodies(t *testing.T) {
	body := readPayload(t, "pull_request.opened.12.json")
	rec := &recorder{}
	const budget = 64 << 10
	s := newService(t, rec, QueueOptions{}, ServerOptions{MaxBody: budget, MaxReading: budget})
	s.start(t)

	// The slow client announces the largest body the budget allows and
	// sends half of it. Once the server has taken that half, its handler
	// is reading and holds the reservation.
	pr, pw := io.Pipe()
	slow := httptest.NewRequest(http.MethodPost, "/webhook", pr)
	slow.ContentLength = budget
	slow.Header.Set("X-GitHub-Event", "pull_request")
	slow.Header.Set("X-GitHub-Delivery", "slow")
	slow.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
	slowDone := make(chan *httptest.ResponseRecorder)
	go func() { slowDone <- s.do(slow) }()
	if _, err := pw.Write(make([]byte, budget/2)); err != nil {
		t.Fatal(err)
	}

	w := s.do(delivery("pull_request", "d1", body))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("while the budget is taken: status %d (Retry-After %q), want 503 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}

	if _, err := pw.Write(make([]byte, budget/2)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if w := <-slowDone; w.Code != http.StatusUnauthorized {
		t.Fatalf("the slow delivery: status %d, want 401", w.Code)
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

func TestServerReadingBelowBody(t *testing.T) {
	q := NewQueue(ProcessorFunc(func(context.Context, Job, func(Job)) error { return nil }), QueueOptions{})
	if _, err := NewServer(ServerOptions{Secrets: [][]byte{testSecret}, Queue: q, MaxBody: 2 << 20, MaxReading: 1 << 20}); err == nil {
		t.Error("a reading budget below one body was accepted")
	}
}
