package reconcile

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/webhook"
)

// BenchmarkTagToCheckedPR measures the App's part of "a new tag becomes an
// open, checked pull request": from a registry's push notification on
// /hooks/registry to the pull request open, labelled and its check run
// completed, through RunProposer as serve runs it, against the fake GitHub
// and an in-process registry (both in this process: their CPU is counted
// too). With polling instead of a notification the wait for the next poll
// (at most the interval, webhook.DefaultProposeInterval) comes on top of
// the round, which is the same work. Each iteration starts from a fresh
// repository, App and registry, outside the timer.
//
// BenchmarkTagToCheckedPRPolling is the worst case of polling at the
// default interval: the tag is pushed just after a round, so the next
// round finds it a whole interval later. It takes a minute per iteration;
// run it with -benchtime=1x.
func BenchmarkTagToCheckedPR(b *testing.B) { benchTagToCheckedPR(b, true) }

func BenchmarkTagToCheckedPRPolling(b *testing.B) { benchTagToCheckedPR(b, false) }

func benchTagToCheckedPR(b *testing.B, notify bool) {
	const secret = "a-registry-secret-of-some-length"
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		reg := registrytest.New(b)
		clk := &clock{now: time.Now()}
		e := newBenchEnv(b, reg, clk)
		if !notify {
			// The default interval, on the real clock.
			e.app.prop.o.Interval = webhook.DefaultProposeInterval
			e.app.clock = time.Now
		}
		srv, err := webhook.NewServer(webhook.ServerOptions{
			Secrets: [][]byte{[]byte(serveSecret)}, Queue: webhook.NewQueue(e.app, webhook.QueueOptions{}),
			RegistryHook: webhook.RegistryHookOptions{Secret: secret, Notify: e.app.NotifyRegistry},
		})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv.Handler())
		ctx, cancel := context.WithCancel(context.Background())
		jobs := make(chan webhook.Job, 4)
		first := make(chan struct{})
		go e.app.RunProposer(ctx, func(j webhook.Job) { jobs <- j })
		// The first round, at start, finds nothing and learns what is
		// watched.
		go func() {
			for e.counter(e.metrics.ProposeRounds, "unchanged") < 1 {
				time.Sleep(time.Millisecond)
			}
			close(first)
		}()
		<-first
		proposetest.PushBundle(b, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
		body := []byte(`{"events":[{"action":"push","target":{"repository":"acme/foo-bundle","tag":"1.1.0"},"request":{"host":"` + reg.Host + `"}}]}`)

		before := cpuTime()
		b.StartTimer()
		if notify {
			req, _ := http.NewRequest(http.MethodPost, hs.URL+"/hooks/registry", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusAccepted {
				b.Fatalf("notification: %v %v", resp, err)
			}
			resp.Body.Close()
		}
		j := <-jobs
		if err := processAll(ctx, e.app, j); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime() - before
		pr := e.repo.PR(j.Key.PR)
		if run := e.run(pr.HeadSHA(), CheckRunName); run.Status != "completed" {
			b.Fatalf("check run %s", run.Status)
		}
		cancel()
		hs.Close()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// newBenchEnv is newEnvWith for a benchmark.
func newBenchEnv(b *testing.B, reg *registrytest.Registry, clk *clock) *env {
	return newEnvWith(b, proposeRepo(reg), proposeOptions(b, reg, clk, nil))
}
