// Package webhooktest drives a webhook receiver the way GitHub does, for
// the benchmarks of the receiver and of its durable queue: signed
// deliveries posted over loopback from parallel clients.
package webhooktest

import (
	"bytes"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// PostDeliveries posts b.N pull_request deliveries to url from clients
// parallel clients, each waiting for its reply before sending again: the
// i-th of bodies with the i-th of sigs (its X-Hub-Signature-256), in
// turn, each under a delivery id of its own. It fails b on any answer but
// 202 and reports the accept latency's p50 and p99 and the deliveries per
// second.
func PostDeliveries(b *testing.B, url string, bodies [][]byte, sigs []string, clients int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
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
			i := int(n % int64(len(bodies)))
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
	b.ReportMetric(Percentile(latencies, 0.50), "p50_ms")
	b.ReportMetric(Percentile(latencies, 0.99), "p99_ms")
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "deliveries/s")
}

// Percentile is the p-th (0 to 1) of sorted, in milliseconds; 0 for none.
func Percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return float64(sorted[int(float64(len(sorted)-1)*p)]) / float64(time.Millisecond)
}
