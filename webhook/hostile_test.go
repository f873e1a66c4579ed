package webhook

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostile holds connections to the intake the way an unauthenticated
// attacker would, and counts what became of them: opened, and dropped by
// the server (closed, or answered and closed).
type hostile struct {
	t       testing.TB
	addr    string
	tick    time.Duration
	opened  atomic.Int64
	dropped atomic.Int64
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newHostile(t testing.TB, addr string, tick time.Duration) *hostile {
	h := &hostile{t: t, addr: addr, tick: tick, stop: make(chan struct{})}
	t.Cleanup(h.close)
	return h
}

func (h *hostile) close() {
	select {
	case <-h.stop:
	default:
		close(h.stop)
	}
	h.wg.Wait()
}

// open is the number of connections open and not dropped.
func (h *hostile) open() int64 { return h.opened.Load() - h.dropped.Load() }

// conn dials, writes head at once, then writes each of trickle's bytes
// one tick apart (all of it when tick is 0), then stays silent. The
// connection counts as dropped when the server closes it or answers.
func (h *hostile) conn(head string, trickle []byte) {
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		h.t.Errorf("hostile client: %v", err)
		return
	}
	h.opened.Add(1)
	if _, err := io.WriteString(c, head); err != nil {
		h.t.Errorf("hostile client: %v", err)
	}
	gone := make(chan struct{})
	h.wg.Add(2)
	go func() {
		defer h.wg.Done()
		defer close(gone)
		// Anything from the server (a reply, EOF, a reset) ends the
		// connection for the attacker.
		c.Read(make([]byte, 1))
		h.dropped.Add(1)
	}()
	go func() {
		defer h.wg.Done()
		defer c.Close()
		t := time.NewTicker(max(h.tick, time.Millisecond))
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-h.stop:
				return
			case <-gone:
				return
			case <-t.C:
			}
			if i < len(trickle) {
				if _, err := c.Write(trickle[i : i+1]); err != nil {
					<-gone
					return
				}
			}
		}
	}()
}

// slowloris sends a request line and one header, then a header byte per
// tick, never ending the headers.
func (h *hostile) slowloris() {
	h.conn("POST /webhook HTTP/1.1\r\nHost: catalogbot\r\nX-Padding: ", bytes.Repeat([]byte("a"), 1<<20))
}

// slowBody sends complete headers that claim a body of declared bytes,
// then the body one byte per tick.
func (h *hostile) slowBody(declared int64) {
	h.conn(hostileHead(declared, h.opened.Load()), bytes.Repeat([]byte(" "), 1<<20))
}

// claim sends complete headers that claim a body of declared bytes, sends
// sent bytes of it and then nothing.
func (h *hostile) claim(declared int64, sent int) {
	h.conn(hostileHead(declared, h.opened.Load())+strings.Repeat(" ", sent), nil)
}

func hostileHead(declared, n int64) string {
	return fmt.Sprintf("POST /webhook HTTP/1.1\r\nHost: catalogbot\r\nContent-Type: application/json\r\n"+
		"X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: hostile-%d\r\nX-Hub-Signature-256: sha256=%s\r\n"+
		"Content-Length: %d\r\n\r\n", n, strings.Repeat("0", 64), declared)
}

// listen serves s's handler on loopback through NewHTTPServer, with edit
// applied to the http.Server, and returns its address.
func (s *testService) listen(t testing.TB, edit func(*http.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := NewHTTPServer(ln.Addr().String(), s.h)
	if edit != nil {
		edit(hs)
	}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// post sends a signed delivery over a fresh connection and returns the
// status.
func post(t testing.TB, addr, event, id string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = delivery(event, id, body).Header
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("delivering %s: %v", id, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitFor polls cond until it holds, failing the test after a generous
// bound: the wait is for an event, not a measure of speed.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIntakeOutlastsHostileClients: with 50 hostile connections open
// (slowloris headers, bodies sent a byte at a time, and bodies that claim
// 25 MiB and send one byte), a genuine signed delivery is accepted, with
// the default budget of unverified bytes. The budget is charged on bytes
// received; charged on the declared lengths, ten of these connections
// would take all of it. The timeouts are stretched here so that every
// hostile connection stays open for the whole test; that they are dropped
// is TestIntakeDropsSlowConnections's part.
func TestIntakeOutlastsHostileClients(t *testing.T) {
	rec := &recorder{}
	s := newService(t, rec, QueueOptions{}, ServerOptions{BodyGrace: 10 * time.Minute})
	s.start(t)
	addr := s.listen(t, func(hs *http.Server) { hs.ReadHeaderTimeout = 10 * time.Minute })

	h := newHostile(t, addr, 100*time.Millisecond)
	const loris, slow, claims = 20, 15, 15
	for range loris {
		h.slowloris()
	}
	for range slow {
		h.slowBody(DefaultMaxBody)
	}
	for range claims {
		h.claim(DefaultMaxBody, 1)
	}
	// Every body-sending connection is either being read or was answered.
	waitFor(t, "the hostile bodies to be read or refused", func() bool {
		return s.srv.bodies.Load()+h.dropped.Load() >= slow+claims
	})

	body := readPayload(t, "pull_request.opened.12.json")
	if code := post(t, addr, "pull_request", "genuine-1", body); code != http.StatusAccepted {
		t.Fatalf("the genuine delivery: status %d, want 202 (%d hostile connections open, %d dropped)", code, h.open(), h.dropped.Load())
	}
	if n := h.open(); n < loris+slow+claims {
		t.Fatalf("only %d hostile connections were open at the genuine delivery, want %d", n, loris+slow+claims)
	}
	if err := s.q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := rec.deliveries(); len(got) != 1 || got[0] != "genuine-1" {
		t.Fatalf("processed %v, want genuine-1", got)
	}
}

// TestIntakeDropsSlowConnections: a connection that sends its headers or
// its body more slowly than the minimum rate is closed, and a body that is
// slow but within the rate is accepted.
func TestIntakeDropsSlowConnections(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{BodyGrace: 200 * time.Millisecond, MinBodyRate: 1 << 10})
	s.start(t)
	addr := s.listen(t, func(hs *http.Server) { hs.ReadHeaderTimeout = 300 * time.Millisecond })

	h := newHostile(t, addr, 50*time.Millisecond) // 20 bytes/s, well under 1 KiB/s
	const loris, slow, claims = 5, 5, 5
	for range loris {
		h.slowloris()
	}
	for range slow {
		h.slowBody(DefaultMaxBody)
	}
	for range claims {
		h.claim(DefaultMaxBody, 100)
	}
	waitFor(t, "the slow connections to be dropped", func() bool { return h.dropped.Load() == loris+slow+claims })
	if !strings.Contains(s.metrics(t), fmt.Sprintf(`catalogbot_webhook_deliveries_total{event="pull_request",result="too_slow"} %d`, slow+claims)) {
		t.Errorf("the slow bodies are not counted as too_slow:\n%s", s.metrics(t))
	}
	if n := s.srv.reading.Load(); n != 0 {
		t.Errorf("%d unverified bytes still charged after the connections were dropped", n)
	}
}

// TestIntakeSlowWithinRate: a body that pauses within the grace and then
// arrives is read and accepted.
func TestIntakeSlowWithinRate(t *testing.T) {
	s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{BodyGrace: 20 * time.Second, MinBodyRate: 1 << 10})
	s.start(t)
	addr := s.listen(t, nil)
	body := readPayload(t, "pull_request.opened.12.json")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var head strings.Builder
	fmt.Fprintf(&head, "POST /webhook HTTP/1.1\r\nHost: catalogbot\r\nContent-Length: %d\r\n", len(body))
	for k, v := range delivery("pull_request", "paused", body).Header {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v[0])
	}
	head.WriteString("\r\n")
	io.WriteString(c, head.String())
	c.Write(body[:len(body)/2])
	time.Sleep(300 * time.Millisecond) // a pause well within the grace
	c.Write(body[len(body)/2:])
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d, want 202", resp.StatusCode)
	}
}

// TestHTTPServerTimeouts: every timeout of the public listener is set.
func TestHTTPServerTimeouts(t *testing.T) {
	hs := NewHTTPServer(":0", http.NotFoundHandler())
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": hs.ReadHeaderTimeout, "ReadTimeout": hs.ReadTimeout,
		"WriteTimeout": hs.WriteTimeout, "IdleTimeout": hs.IdleTimeout} {
		if d <= 0 || d > 2*time.Minute {
			t.Errorf("%s = %s, want a bound of at most 2m", name, d)
		}
	}
	if hs.ReadHeaderTimeout > 10*time.Second {
		t.Errorf("ReadHeaderTimeout = %s: a slowloris client holds a connection that long", hs.ReadHeaderTimeout)
	}
	if hs.WriteTimeout <= MaxBodyTime {
		t.Errorf("WriteTimeout %s ends before a body may finish (%s)", hs.WriteTimeout, MaxBodyTime)
	}
}
