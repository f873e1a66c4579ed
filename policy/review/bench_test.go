package review

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/checks/images"
)

// bigBundle is one olm.bundle blob of about size bytes, nearly all of it
// one olm.bundle.object manifest: the shape of a real bundle with a large
// CRD, and the most work per byte for the checks (the manifest is decoded
// from base64 and read as JSON).
func bigBundle(pkg, name string, size int) string {
	pad := size * 3 / 4
	manifest := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"blob":"` + strings.Repeat("x", pad) + `"}}`
	return fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":%q,"image":"quay.io/example/%s:v1",`+
		`"properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.0"}},`+
		`{"type":"olm.bundle.object","value":{"data":%q}}]}`+"\n",
		name, pkg, name, pkg, base64.StdEncoding.EncodeToString([]byte(manifest)))
}

// bigPR is a repository whose pull request adds one 40 MB and one 200 MB
// catalog file to package foo. It is built once per process.
var bigPR struct {
	once sync.Once
	dir  string
	// base has the default limits; raised raises them so that both files
	// are read; head is raised plus the two files.
	base, raised, head string
}

func setupBigPR(b *testing.B) {
	bigPR.once.Do(func() {
		r := changetest.NewRepo(b)
		bigPR.dir = r.Dir
		bigPR.base = r.Commit("base", map[string]string{
			".catalogbot.yaml":         "images:\n  allowRegistries: [registry.invalid]\n",
			"OWNERS":                   "approvers: [root-owner]\n",
			"catalog/foo/OWNERS":       "approvers: [alice]\n",
			"catalog/foo/catalog.yaml": fbctest.Foo,
			"catalog/foo/.indexignore": "OWNERS\n",
		})
		bigPR.raised = r.Commit("raise the limits", map[string]string{
			".catalogbot.yaml": "limits:\n  fileBytes: 300M\n  catalogBytes: 1Gi\nimages:\n  allowRegistries: [registry.invalid]\n",
		})
		bigPR.head = r.Commit("add big bundles", map[string]string{
			"catalog/foo/big-40.json":  bigBundle("foo", "foo.v40", 40_000_000),
			"catalog/foo/big-200.json": bigBundle("foo", "foo.v200", 200_000_000),
		})
	})
}

// BenchmarkCheckBigFiles is a pull request check, as `catalogbot check`
// runs it, of a change adding one 40 MB and one 200 MB file: every check,
// the images check included (its allowlist refuses every image, so no
// registry is contacted and only reading costs). It reports the peak RSS
// of the process above what it held before (VmHWM, reset before each
// check) and the high-water mark of the heap in use, sampled every
// millisecond, both in MiB.
//
// raised-limits reads both files (limits.fileBytes raised to 300 MB):
// the peak is bounded by the largest file read. default-limits is the
// same pull request under the default limits, where the 200 MB file is
// a finding and never read.
func BenchmarkCheckBigFiles(b *testing.B) {
	setupBigPR(b)
	b.Run("raised-limits", func(b *testing.B) { checkBigFiles(b, bigPR.raised) })
	b.Run("default-limits", func(b *testing.B) { checkBigFiles(b, bigPR.base) })
}

func checkBigFiles(b *testing.B, baseRev string) {
	var rss, heap float64
	for b.Loop() {
		r, h := peakDuring(b, func() {
			c, base, head, err := change.FromGit(bigPR.dir, baseRev, bigPR.head)
			if err != nil {
				b.Fatal(err)
			}
			c.Author = "alice"
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head,
				ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain()}})
			if err != nil {
				b.Fatal(err)
			}
			if !o.Valid() {
				b.Fatalf("policy: %+v", o.PolicyFindings)
			}
		})
		rss, heap = max(rss, r), max(heap, h)
	}
	b.ReportMetric(rss, "peak-RSS-MiB")
	b.ReportMetric(heap, "peak-heap-MiB")
}

// peakDuring runs f and returns the growth of the process's peak RSS over
// its RSS before f, and the high-water mark of the heap in use during f,
// in MiB.
func peakDuring(b *testing.B, f func()) (rss, heap float64) {
	b.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets VmHWM to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(b, "VmRSS")
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64()+sample[1].Value.Uint64())
			select {
			case <-stop:
				done <- peak
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	peak := <-done
	const mib = 1 << 20
	return float64(procStatus(b, "VmHWM")-before) / mib, float64(peak) / mib
}

// procStatus reads a size field of /proc/self/status, in bytes.
func procStatus(b *testing.B, field string) uint64 {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
