package imagerun_test

// BenchmarkPublishCache publishes the ~100 MB synthetic catalog of the
// publisher/build benchmarks (checks/fbc/fbcgen, cached under
// os.TempDir()/catalogbot-bench with the same key, so the two share it)
// onto the opm base built from opm v1.65.0, to an in-process registry on
// loopback, and reports what the cache step costs:
//
//   - build-no-cache: the image without the cache (Options.NoServeCache);
//   - build: with the cache step (opm taken out of the base, run, and its
//     cache packed as a layer);
//   - publish: build and push to a new repository;
//   - opm: the base's opm alone building the cache, as the step runs it.
//
// peak-MB is the highest resident size of this process during the
// sub-benchmark (VmHWM, reset before it), opm-peak-MB that of opm.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

func BenchmarkPublishCache(b *testing.B) {
	dir := benchCatalog(b, fbcgen.SpecForSize(100<<20, "yaml"))
	host := registrytest.New(b).Host
	base := host + "/operator-framework/opm:bench"
	registrytest.Push(b, base, opmBaseImage(b))
	ctx := context.Background()

	b.Run("build-no-cache", func(b *testing.B) {
		peak := resetPeak()
		for b.Loop() {
			if _, err := build.Build(ctx, dir, build.Options{OPMImage: base, NoServeCache: true}); err != nil {
				b.Fatal(err)
			}
		}
		peak(b)
	})
	b.Run("build", func(b *testing.B) {
		peak := resetPeak()
		var res *build.Result
		for b.Loop() {
			var err error
			if res, err = build.Build(ctx, dir, build.Options{OPMImage: base}); err != nil {
				b.Fatal(err)
			}
		}
		peak(b)
		if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "cache built") {
			b.Fatalf("notes %q, want a cache built", res.Notes)
		}
		m, err := res.Image.Manifest()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(m.Layers[len(m.Layers)-1].Size)/1e6, "MB-cache-layer")
	})
	b.Run("publish", func(b *testing.B) {
		peak := resetPeak()
		i := 0
		for b.Loop() {
			i++
			res, err := build.Build(ctx, dir, build.Options{OPMImage: base})
			if err != nil {
				b.Fatal(err)
			}
			got, err := build.Push(ctx, res, fmt.Sprintf("%s/bench/new%d:latest", host, i), build.PushOptions{})
			if err != nil || got.Unchanged {
				b.Fatalf("%+v %v", got, err)
			}
		}
		peak(b)
	})
	b.Run("opm", func(b *testing.B) {
		var maxKB float64
		for b.Loop() {
			cache := filepath.Join(b.TempDir(), "cache")
			if err := os.MkdirAll(filepath.Join(cache, "cache"), 0o750); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cache, "digest"), nil, 0o640); err != nil {
				b.Fatal(err)
			}
			cmd := exec.Command(opmBin, "serve", dir, "--cache-dir="+cache, "--cache-only", "--pprof-addr=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			// The child's rusage would report this process's size, which
			// it shares until exec; its own VmHWM, polled, does not.
			done, peak := make(chan struct{}), make(chan float64)
			go func() {
				var kb float64
				for {
					select {
					case <-done:
						peak <- kb
						return
					case <-time.After(20 * time.Millisecond):
						kb = max(kb, vmHWM(cmd.Process.Pid))
					}
				}
			}()
			err := cmd.Wait()
			close(done)
			maxKB = max(maxKB, <-peak)
			if err != nil {
				b.Fatalf("%v: %s", err, out.String())
			}
		}
		b.ReportMetric(maxKB/1024, "opm-peak-MB")
	})
}

// resetPeak resets this process's peak resident size; the function it
// returns reports the peak since.
func resetPeak() func(*testing.B) {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	return func(b *testing.B) {
		b.ReportMetric(vmHWM(os.Getpid())/1024, "peak-MB")
	}
}

// vmHWM is the peak resident size of process pid in KiB, 0 if unknown.
func vmHWM(pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb
		}
	}
	return 0
}

// benchCatalog returns the cached catalog for spec, generating it into a
// temporary sibling renamed into place, as publisher/build's benchmark
// does and with its key.
func benchCatalog(b *testing.B, spec fbcgen.Spec) string {
	b.Helper()
	root := filepath.Join(os.TempDir(), "catalogbot-bench")
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	key := fmt.Sprintf("synthetic-v%s-%s-%s-p%d-b%d-c%d-s%d", fbcgen.Version, spec.Format, spec.Payload,
		spec.Packages, spec.BundlesPerPackage, spec.ChannelsPerPackage, spec.Seed)
	final := filepath.Join(root, key)
	if _, err := os.Stat(final); err == nil {
		return final
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	st, err := fbcgen.Write(tmp, spec)
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(st)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, key+".stats.json"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr != nil {
			b.Fatal(err)
		}
	}
	return final
}
