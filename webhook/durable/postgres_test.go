package durable

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
)

func openPostgresState(t *testing.T, url string, o Options) *State {
	t.Helper()
	o.DatabaseURL = url
	if o.Logger == nil {
		o.Logger = quiet()
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = -1
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPostgresReplicas: two replicas on one database share the work; a
// key never runs on both at once, and every job runs.
func TestPostgresReplicas(t *testing.T) {
	url := durabletest.Postgres(t)
	r := newRecorder()
	var qs []*Queue
	for i := range 2 {
		s := openPostgresState(t, url, Options{ID: []string{"a", "b"}[i]})
		defer s.Close()
		q := startQueue(t, s, r)
		defer stopQueue(t, q)
		qs = append(qs, q)
	}
	n := 0
	for pr := range 20 {
		for d := range 3 {
			// Alternate replicas, as a load balancer would.
			res := qs[(pr+d)%2].Enqueue(prJob(pr, "d-"+string(rune('a'+pr))+string(rune('a'+d))))
			if res == webhook.Queued {
				n++
			}
		}
	}
	r.wait(t, n, 30*time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.overlap {
		t.Error("two replicas ran one key at once")
	}
}

// TestPostgresFetchedByAReplicaThatStops: a replica that fetched a key's
// River job and stopped before taking the key's lease leaves that job
// running; another replica takes the work over after LeaseTTL, and the
// key runs once.
func TestPostgresFetchedByAReplicaThatStops(t *testing.T) {
	url := durabletest.Postgres(t)
	const ttl = time.Second
	stuck := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	sa := openPostgresState(t, url, Options{ID: "a", Workers: 1, LeaseTTL: ttl})
	defer sa.Close()
	ra := newRecorder()
	qa, err := sa.Queue(ra)
	if err != nil {
		t.Fatal(err)
	}
	qa.beforeTake = func(workArgs) {
		once.Do(func() { close(stuck); <-release })
	}
	if err := qa.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { close(release); stopQueue(t, qa) }()
	qa.Enqueue(prJob(1, "d1"))
	select {
	case <-stuck:
	case <-time.After(10 * time.Second):
		t.Fatal("the first replica never fetched the job")
	}

	sb := openPostgresState(t, url, Options{ID: "b", LeaseTTL: ttl})
	defer sb.Close()
	rb := newRecorder()
	qb := startQueue(t, sb, rb)
	defer stopQueue(t, qb)
	start := time.Now()
	got := rb.wait(t, 1, 20*time.Second)
	t.Logf("taken over after %s", time.Since(start).Round(10*time.Millisecond))
	if got[0].Delivery != "d1" {
		t.Errorf("the second replica ran %+v, want d1", got[0])
	}
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if len(ra.ran) != 0 {
		t.Errorf("the stopped replica ran %d jobs", len(ra.ran))
	}
	// Either replica's sweep may have found it.
	n := 0.0
	for _, q := range []*Queue{qa, qb} {
		var m dto.Metric
		if err := q.m.Takeovers.WithLabelValues("fetched").Write(&m); err != nil {
			t.Fatal(err)
		}
		n += m.GetCounter().GetValue()
	}
	if n != 1 {
		t.Errorf("catalogbot_queue_takeovers_total{why=fetched} = %v, want 1", n)
	}
}

// TestPostgresConcurrentDeliveriesForOneKey: deliveries for one new pull
// request arriving at once on two replicas are all taken (none refused),
// and the key runs at least once after the last of them.
func TestPostgresConcurrentDeliveriesForOneKey(t *testing.T) {
	url := durabletest.Postgres(t)
	r := newRecorder()
	var qs []*Queue
	for _, id := range []string{"a", "b"} {
		s := openPostgresState(t, url, Options{ID: id})
		defer s.Close()
		q := startQueue(t, s, r)
		defer stopQueue(t, q)
		qs = append(qs, q)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		results := make([]webhook.EnqueueResult, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = qs[i%2].Enqueue(prJob(100+round, fmt.Sprintf("r%d-%d", round, i)))
			}()
		}
		wg.Wait()
		for i, res := range results {
			if res != webhook.Queued && res != webhook.Replaced {
				t.Errorf("round %d delivery %d: %v, want queued or replaced", round, i, res)
			}
		}
	}
	r.wait(t, 5, 20*time.Second)
}

// proxy forwards loopback TCP connections to target until cut, which
// closes them all: a replica cut off from the database.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.cut {
				c.Close()
				up.Close()
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.ln.Close()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestPostgresReplicaCutOff: a replica cut off from the database stops
// its running job once it has gone a lease without renewing it, and
// another replica runs the job's work.
func TestPostgresReplicaCutOff(t *testing.T) {
	dbURL := durabletest.Postgres(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = p.ln.Addr().String()
	const ttl = time.Second

	cancelled := make(chan time.Time, 1)
	blocked := webhook.ProcessorFunc(func(ctx context.Context, _ webhook.Job) (webhook.Result, error) {
		<-ctx.Done()
		cancelled <- time.Now()
		return webhook.Result{}, ctx.Err()
	})
	sa := openPostgresState(t, viaProxy.String(), Options{ID: "a", Workers: 1, LeaseTTL: ttl})
	qa, err := sa.Queue(blocked)
	if err != nil {
		t.Fatal(err)
	}
	if err := qa.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	qa.Enqueue(prJob(1, "d1"))
	// Wait until a holds the key's lease.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var owner string
		inTx(context.Background(), sa.db, func(t tx) error {
			return t.queryRow(context.Background(), `SELECT owner FROM catalogbot_key WHERE key = 'o/r#1'`).Scan(&owner)
		})
		if owner == "a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica never took the job")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sb := openPostgresState(t, dbURL, Options{ID: "b", LeaseTTL: ttl})
	defer sb.Close()
	rb := newRecorder()
	qb := startQueue(t, sb, rb)
	defer stopQueue(t, qb)

	cut := time.Now()
	p.close()
	select {
	case at := <-cancelled:
		if d := at.Sub(cut); d > ttl {
			t.Errorf("the cut-off replica stopped its job %s after the cut, want within the lease, %s", d, ttl)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cut-off replica never stopped its job")
	}
	if got := rb.wait(t, 1, 20*time.Second); got[0].Delivery != "d1" {
		t.Errorf("the other replica ran %+v, want d1", got[0])
	}
}
