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
	"testing"

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
	webhooktest.PostDeliveries(b, ts.URL+"/webhook", bodies, sigs, clients)
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
