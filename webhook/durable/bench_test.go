package durable

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
	"github.com/catalogbot/catalogbot/webhook/webhooktest"
)

const benchSecret = "bench-secret-0123456789"

// BenchmarkIntake posts signed pull_request deliveries (distinct ids, 1,000
// pull requests, GitHub's 28 KB example body) over loopback to the real
// server from 4 parallel clients, as webhook's BenchmarkWebhookAccept does,
// with the in-memory queue and with the durable one on SQLite and on
// PostgreSQL, and a no-op processor. Each delivery is answered once its
// job is committed to the state. It reports deliveries per second, the
// accept latency percentiles, and, since the machine's load moves every
// figure: the process's CPU time (user+system) per delivery (clients,
// server and queue together), the PostgreSQL server's beside it, the
// load average before and after, and each durable engine's rate as a
// share of the in-memory queue's in the same run.
func BenchmarkIntake(b *testing.B) {
	var memoryRate float64
	for _, engine := range []string{"memory", "sqlite", "postgres"} {
		b.Run("engine="+engine, func(b *testing.B) {
			rate := benchIntake(b, engine, 4)
			if engine == "memory" {
				memoryRate = rate
			} else if memoryRate > 0 {
				b.ReportMetric(rate/memoryRate, "x_memory")
			}
		})
	}
}

// benchIntake runs one engine and returns its deliveries per second.
func benchIntake(b *testing.B, engine string, clients int) float64 {
	noop := webhook.ProcessorFunc(func(context.Context, webhook.Job) (webhook.Result, error) { return webhook.Result{}, nil })
	reg := prometheus.NewRegistry()
	m := webhook.NewMetrics(reg)
	var (
		intake webhook.Intake
		pg     *durabletest.Server
	)
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
			pg = durabletest.Start(b)
			o.DatabaseURL = pg.URL
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
	load0 := loadAverage()
	cpu0, pg0 := processCPU(b), serverCPU(b, pg)
	start := time.Now()
	webhooktest.PostDeliveries(b, ts.URL+"/webhook", bodies, sigs, clients)
	elapsed := time.Since(start)
	cpu, pgCPU := processCPU(b)-cpu0, serverCPU(b, pg)-pg0
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu_us/delivery")
	if pg != nil {
		b.ReportMetric(float64(pgCPU.Microseconds())/n, "pg_cpu_us/delivery")
	}
	b.ReportMetric(float64(elapsed.Microseconds())/n, "wall_us/delivery")
	if load0 >= 0 {
		b.ReportMetric(load0, "load_start")
		b.ReportMetric(loadAverage(), "load_end")
	}
	return n / elapsed.Seconds()
}

// processCPU is the user and system time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the PostgreSQL server's CPU time, 0 without one.
func serverCPU(b *testing.B, s *durabletest.Server) time.Duration {
	if s == nil {
		return 0
	}
	d, err := s.CPU()
	if err != nil {
		b.Fatalf("the PostgreSQL server's CPU time: %v", err)
	}
	return d
}

// loadAverage is the machine's load average over the last minute, -1
// where /proc/loadavg is not there.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
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
