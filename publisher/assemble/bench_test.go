package assemble

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/publisher/render"
)

// benchDelay is added to every registry request in the benchmark. The
// in-process registry answers in microseconds, and the speed-up of
// assembling in parallel comes from overlapping registry round trips (a
// real registry is tens of milliseconds away), not from more CPU.
const benchDelay = 20 * time.Millisecond

// BenchmarkAssemble renders 50 catalog images from a loopback registry one
// after another, as the OLM docs' script does, and with Assemble at two
// concurrencies; the parallel runs report their speed-up over the
// sequential one. "rerun-cached" is a no-change re-run with a warm cache
// and reports the layer bytes it downloaded, which should be 0.
//
//	go test ./publisher/assemble -run '^$' -bench Assemble -benchtime 3x
func BenchmarkAssemble(b *testing.B) {
	reg := newTestRegistry(b, 0)
	f := pushCatalogs(b, reg, 50)
	reg.delay.Store(int64(benchDelay))
	ctx := context.Background()
	var sequential time.Duration // per op

	b.Run("sequential", func(b *testing.B) {
		r, err := render.New(render.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for b.Loop() {
			for _, ref := range f.References {
				cfg, err := r.RenderOne(ctx, ref.Image)
				if err != nil {
					b.Fatal(err)
				}
				var buf bytes.Buffer
				if err := render.WriteYAML(&buf, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}
		sequential = time.Since(start) / time.Duration(b.N)
	})

	for _, c := range []int{4, DefaultConcurrency} {
		b.Run(fmt.Sprintf("parallel-c%d", c), func(b *testing.B) {
			a := newAssembler(b, Options{Concurrency: c})
			out := filepath.Join(b.TempDir(), "out")
			start := time.Now()
			for b.Loop() {
				if _, err := a.Assemble(ctx, f, out); err != nil {
					b.Fatal(err)
				}
			}
			if per := time.Since(start) / time.Duration(b.N); sequential > 0 && per > 0 {
				b.ReportMetric(float64(sequential)/float64(per), "speedup")
			}
		})
	}

	b.Run("rerun-cached", func(b *testing.B) {
		a := newAssembler(b, Options{Concurrency: 16, CacheDir: b.TempDir()})
		out := filepath.Join(b.TempDir(), "out")
		if _, err := a.Assemble(ctx, f, out); err != nil {
			b.Fatal(err)
		}
		reg.reset()
		for b.Loop() {
			if _, err := a.Assemble(ctx, f, out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(reg.blobBytes.Load())/float64(b.N), "layer-bytes/op")
		b.ReportMetric(float64(reg.blobGets.Load())/float64(b.N), "blob-gets/op")
		b.ReportMetric(float64(reg.requests.Load())/float64(b.N), "requests/op")
	})
}
