package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/webhook/webhooktest"
)

// prTemplate splits a real pull_request payload around its PR number, so a
// benchmark can make distinct keys without keeping thousands of bodies.
type prTemplate struct{ before, after []byte }

func newPRTemplate(b *testing.B) prTemplate {
	var doc map[string]any
	if err := json.Unmarshal(readPayload(b, "pull_request.synchronize.22.json"), &doc); err != nil {
		b.Fatal(err)
	}
	const sentinel = 987654321
	doc["pull_request"].(map[string]any)["number"] = sentinel
	body, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	before, after, ok := bytes.Cut(body, []byte(strconv.Itoa(sentinel)))
	if !ok {
		b.Fatal("sentinel not found")
	}
	return prTemplate{before, after}
}

func (t prTemplate) body(pr int) []byte {
	out := make([]byte, 0, len(t.before)+len(t.after)+10)
	out = append(out, t.before...)
	out = strconv.AppendInt(out, int64(pr), 10)
	return append(out, t.after...)
}

func benchService(b *testing.B, p Processor, qo QueueOptions) (*Server, *Queue, context.CancelFunc) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	qo.Metrics, qo.Logger = m, discard
	q := NewQueue(p, qo)
	ctx, cancel := context.WithCancel(context.Background())
	q.Start(ctx)
	srv, err := NewServer(ServerOptions{Secrets: [][]byte{testSecret}, Queue: q, Metrics: m, Gatherer: reg, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	return srv, q, cancel
}

// BenchmarkWebhookAccept posts signed pull_request deliveries (distinct ids,
// 1,000 PRs) over loopback to a real server and queue with a no-op
// processor, from parallel clients. It reports the accept latency
// percentiles and the deliveries per second. Client and server share the
// machine's CPUs. Each client waits for its reply before sending again, so
// with more clients than CPUs the latency includes their queueing.
func BenchmarkWebhookAccept(b *testing.B) {
	for _, clients := range []int{4, 16} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchAccept(b, clients) })
	}
}

func benchAccept(b *testing.B, clients int) {
	tmpl := newPRTemplate(b)
	const keys = 1000
	bodies := make([][]byte, keys)
	sigs := make([]string, keys)
	for i := range bodies {
		bodies[i] = tmpl.body(i + 1)
		sigs[i] = sign(testSecret, bodies[i])
	}
	srv, _, cancel := benchService(b, ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }), QueueOptions{})
	defer cancel()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	webhooktest.PostDeliveries(b, ts.URL+"/webhook", bodies, sigs, clients)
}

// BenchmarkWebhookHandler measures the server's own work per delivery
// (headers, body, signature, routing, enqueue) without a network or a
// client: its ns/op is the CPU cost of one accept.
func BenchmarkWebhookHandler(b *testing.B) {
	tmpl := newPRTemplate(b)
	body := tmpl.body(2)
	sig := sign(testSecret, body)
	srv, _, cancel := benchService(b, ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }), QueueOptions{})
	defer cancel()
	h := srv.Handler()
	var seq atomic.Int64
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
			r.Header.Set("X-GitHub-Event", "pull_request")
			r.Header.Set("X-GitHub-Delivery", "h-"+strconv.FormatInt(seq.Add(1), 10))
			r.Header.Set("X-Hub-Signature-256", sig)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusAccepted {
				b.Errorf("status %d", w.Code)
				return
			}
		}
	})
}

// BenchmarkRoute compares the routing reader with decoding the same fields
// through encoding/json.
func BenchmarkRoute(b *testing.B) {
	body := readPayload(b, "pull_request.synchronize.22.json")
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := parseRoutePayload(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var p stdPayload
			if err := json.Unmarshal(body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWebhookFlood sends distinct deliveries for many PRs (fewer keys
// than deliveries, more than the queue holds) straight into the handler,
// while a slow processor drains 4 jobs at a time. It reports the peak heap
// in use (sampled) and the live heap after the flood with the queue full,
// against the bound the queue promises: MaxPendingBytes of payloads plus
// DedupeMax remembered ids and as many replay keys. Use -benchtime=1x: one
// iteration is one flood.
func BenchmarkWebhookFlood(b *testing.B) {
	for _, deliveries := range []int{100_000, 200_000} {
		b.Run(fmt.Sprintf("deliveries=%d", deliveries), func(b *testing.B) {
			for range b.N {
				flood(b, deliveries)
			}
		})
	}
}

func flood(b *testing.B, deliveries int) {
	b.StopTimer()
	tmpl := newPRTemplate(b)
	slow := ProcessorFunc(func(ctx context.Context, _ Job) (Result, error) {
		time.Sleep(2 * time.Millisecond) // a reconcile's GitHub round trips
		return Result{}, nil
	})
	srv, q, cancel := benchService(b, slow, QueueOptions{Workers: 4})
	defer cancel()
	h := srv.Handler()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			}
		}
	}()

	var next atomic.Int64
	var accepted, overloaded, maxQueued atomic.Int64
	var wg sync.WaitGroup
	b.StartTimer()
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1))
				if n > deliveries {
					return
				}
				body := tmpl.body(n%50_000 + 1)
				r := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
				r.Header.Set("X-GitHub-Event", "pull_request")
				r.Header.Set("X-GitHub-Delivery", "flood-"+strconv.Itoa(n))
				r.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				switch w.Code {
				case http.StatusAccepted:
					accepted.Add(1)
				case http.StatusServiceUnavailable:
					overloaded.Add(1)
				default:
					b.Errorf("status %d", w.Code)
					return
				}
				if n%1000 == 0 {
					if l := int64(q.Len()); l > maxQueued.Load() {
						maxQueued.Store(l)
					}
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	<-sampled
	runtime.GC()
	runtime.ReadMemStats(&ms)
	live := ms.HeapAlloc
	cancel()

	mb := func(v uint64) float64 { return float64(v) / (1 << 20) }
	// Per remembered delivery id, and per remembered replay key: the key,
	// its time, the map's overhead and the order entry, roughly.
	idBytes := uint64(DefaultDedupeMax) * (150 + 150)
	b.ReportMetric(mb(peak.Load()), "peak_heap_inuse_MB")
	b.ReportMetric(mb(live), "live_heap_after_MB")
	b.ReportMetric(mb(base), "heap_before_MB")
	b.ReportMetric(mb(uint64(DefaultMaxPendingBytes)+idBytes), "bound_MB")
	b.ReportMetric(float64(accepted.Load()), "accepted")
	b.ReportMetric(float64(overloaded.Load()), "overloaded")
	b.ReportMetric(float64(maxQueued.Load()), "max_queued")
	b.ReportMetric(float64(deliveries)/elapsed.Seconds(), "deliveries/s")
	if overloaded.Load() == 0 {
		b.Error("the flood never filled the queue; it shows nothing about the bound")
	}
}

// BenchmarkWebhookHostile measures the intake latency of genuine signed
// deliveries (one client, a new connection each, as GitHub sends them)
// while 0, 10 or 50 hostile connections are open: a third slowloris
// headers, a third bodies sent a byte every 100 ms, a third bodies that
// claim 25 MiB and send one byte. The server's timeouts are stretched so
// that the hostile connections stay open for the whole run, as if their
// sender reopened each one the moment it is dropped. It reports p50 and
// p99 accept latency and fails on any reply but 202.
func BenchmarkWebhookHostile(b *testing.B) {
	for _, n := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("hostile=%d", n), func(b *testing.B) { benchHostile(b, n) })
	}
}

func benchHostile(b *testing.B, hostiles int) {
	tmpl := newPRTemplate(b)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	q := NewQueue(ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }), QueueOptions{Metrics: m, Logger: discard})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q.Start(ctx)
	srv, err := NewServer(ServerOptions{Secrets: [][]byte{testSecret}, Queue: q, Metrics: m, Gatherer: reg, Logger: discard, BodyGrace: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	s := &testService{srv: srv, q: q, reg: reg, h: srv.Handler()}
	addr := s.listen(b, func(hs *http.Server) { hs.ReadHeaderTimeout = time.Hour })

	h := newHostile(b, addr, 100*time.Millisecond)
	defer h.close()
	for i := range hostiles {
		switch i % 3 {
		case 0:
			h.slowloris()
		case 1:
			h.slowBody(DefaultMaxBody)
		default:
			h.claim(DefaultMaxBody, 1)
		}
	}
	bodies := int64(hostiles - (hostiles+2)/3) // the ones past their headers
	waitFor(b, "the hostile bodies to be read", func() bool { return srv.bodies.Load() == bodies })

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		body := tmpl.body(i + 1)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", "hostile-bench-"+strconv.Itoa(i))
		req.Header.Set("X-Hub-Signature-256", sign(testSecret, body))
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		latencies = append(latencies, time.Since(t0))
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("genuine delivery %d: status %d with %d hostile connections open", i, resp.StatusCode, h.open())
		}
	}
	b.StopTimer()
	if open := h.open(); open != int64(hostiles) {
		b.Fatalf("%d of %d hostile connections were open at the end", open, hostiles)
	}
	slices.Sort(latencies)
	b.ReportMetric(webhooktest.Percentile(latencies, 0.50), "p50_ms")
	b.ReportMetric(webhooktest.Percentile(latencies, 0.99), "p99_ms")
}
