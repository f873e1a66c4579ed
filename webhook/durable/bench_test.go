package durable

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
)

const benchSecret = "bench-secret-0123456789"

// BenchmarkIntake posts signed pull_request deliveries (distinct ids, 1,000
// pull requests, GitHub's 28 KB example body) over loopback to the real
// server from 4 parallel clients, as webhook's BenchmarkWebhookAccept does,
// with the in-memory queue and with the durable one on SQLite and on
// PostgreSQL, and a no-op processor. Each delivery is answered once its
// job is committed to the state. It reports deliveries per second and the
// accept latency percentiles.
func BenchmarkIntake(b *testing.B) {
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		b.Run("engine="+engine, func(b *testing.B) { benchIntake(b, engine, 4) })
	}
}

func benchIntake(b *testing.B, engine string, clients int) {
	noop := webhook.ProcessorFunc(func(context.Context, webhook.Job) (webhook.Result, error) { return webhook.Result{}, nil })
	reg := prometheus.NewRegistry()
	m := webhook.NewMetrics(reg)
	var intake webhook.Intake
	switch engine {
	case "memory":
		q := webhook.NewQueue(noop, webhook.QueueOptions{Metrics: m, Logger: quiet()})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		q.Start(ctx)
		intake = q
	default:
		o := Options{Metrics: m, Logger: quiet(), ResyncInterval: -1}
		if engine == "sqlite" {
			o.StateDir = b.TempDir()
		} else {
			o.DatabaseURL = durabletest.Postgres(b)
		}
		s, err := Open(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		q, err := s.Queue(noop)
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		defer q.Drain(context.Background())
		intake = q
	}
	srv, err := webhook.NewServer(webhook.ServerOptions{Secrets: [][]byte{[]byte(benchSecret)}, Queue: intake, Metrics: m, Gatherer: reg, Logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	const keys = 1000
	bodies, sigs := prBodies(b, keys)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	url := ts.URL + "/webhook"
	var (
		seq       atomic.Int64
		mu        sync.Mutex
		latencies = make([]time.Duration, 0, b.N)
	)
	b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
	b.SetBytes(int64(len(bodies[0])))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var local []time.Duration
		for pb.Next() {
			n := seq.Add(1)
			i := int(n % keys)
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies[i]))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "pull_request")
			req.Header.Set("X-GitHub-Delivery", "bench-"+strconv.FormatInt(n, 10))
			req.Header.Set("X-Hub-Signature-256", sigs[i])
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			local = append(local, time.Since(t0))
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, local...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	pct := func(p float64) float64 {
		if len(latencies) == 0 {
			return 0
		}
		return float64(latencies[int(float64(len(latencies)-1)*p)]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "deliveries/s")
}

// prBodies are GitHub's pull_request.synchronize example with n distinct
// pull request numbers, and their signatures.
func prBodies(b *testing.B, n int) ([][]byte, []string) {
	raw, err := os.ReadFile(filepath.Join("..", "githubtest", "testdata", "webhooks", "pull_request.synchronize.22.json"))
	if err != nil {
		b.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	bodies, sigs := make([][]byte, n), make([]string, n)
	for i := range n {
		doc["pull_request"].(map[string]any)["number"] = i + 1
		doc["number"] = i + 1
		body, err := json.Marshal(doc)
		if err != nil {
			b.Fatal(err)
		}
		m := hmac.New(sha256.New, []byte(benchSecret))
		m.Write(body)
		bodies[i], sigs[i] = body, "sha256="+hex.EncodeToString(m.Sum(nil))
	}
	return bodies, sigs
}
