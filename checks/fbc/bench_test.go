package fbc_test

// Benchmarks of Validate on synthetic catalogs (package fbcgen) and on the
// real community-operators corpus.
//
//	go test -run='^$' -bench=Validate -benchtime=3x ./checks/fbc
//	go test -run='^$' -bench='ValidateSynthetic/110MB' -count=5 ./checks/fbc
//
// Inputs are prepared once and cached under $TMPDIR/catalogbot-bench (the
// synthetic catalogs keyed by their fbcgen.Spec and fbcgen.Version, the
// corpus by the tarball's size and time), so repeated -count runs and later
// invocations do not regenerate them. Nothing is generated unless the
// benchmark runs: `go test ./...` runs no benchmarks, and -short skips the
// 110 MB catalog. Delete $TMPDIR/catalogbot-bench to free the space.
//
// Each benchmark validates its input once untimed (which must succeed: the
// inputs are valid catalogs) and then reports, besides ns/op and allocs,
// MB/s of catalog input, the bundle count and bundles/s.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
)

// benchCorpusTarball is the community-operators snapshot, relative to this
// package's directory (checks/fbc) in the project checkout.
const benchCorpusTarball = "../../../shared/corpus/community-operators-prod.tar.zst"

func benchCacheRoot(b *testing.B) string {
	root := filepath.Join(os.TempDir(), "catalogbot-bench")
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	return root
}

// benchPrepare returns root/key, creating it with fill (into a temporary
// sibling, renamed into place when complete) unless it already exists.
func benchPrepare(b *testing.B, key string, fill func(dir string) error) string {
	b.Helper()
	root := benchCacheRoot(b)
	final := filepath.Join(root, key)
	if _, err := os.Stat(final); err == nil {
		return final
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp) // no-op once renamed
	if err := fill(tmp); err != nil {
		b.Fatalf("preparing %s: %v", key, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr != nil {
			b.Fatal(err)
		} // else another process won the race; use its copy
	}
	return final
}

// benchSynthetic returns a cached catalog generated for spec and its stats.
// The stats live next to the catalog, not in it (Validate reads every file).
func benchSynthetic(b *testing.B, spec fbcgen.Spec) (string, fbcgen.Stats) {
	b.Helper()
	key := fmt.Sprintf("synthetic-v%s-%s-%s-p%d-b%d-c%d-s%d", fbcgen.Version, spec.Format, spec.Payload,
		spec.Packages, spec.BundlesPerPackage, spec.ChannelsPerPackage, spec.Seed)
	statsFile := filepath.Join(benchCacheRoot(b), key+".stats.json")
	dir := benchPrepare(b, key, func(tmp string) error {
		b.Logf("generating %s (once; cached in %s)", key, filepath.Dir(tmp))
		st, err := fbcgen.Write(tmp, spec)
		if err != nil {
			return err
		}
		data, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return os.WriteFile(statsFile, data, 0o644)
	})
	var st fbcgen.Stats
	data, err := os.ReadFile(statsFile)
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		b.Fatalf("stats of cached catalog %s: %v (delete %s to regenerate)", dir, err, dir)
	}
	return dir, st
}

func BenchmarkValidateSynthetic(b *testing.B) {
	for _, c := range []struct {
		name string
		size int64
	}{{"5MB", 5e6}, {"20MB", 20e6}, {"110MB", 110e6}} {
		b.Run(c.name, func(b *testing.B) {
			if c.size > 50e6 && testing.Short() {
				b.Skip("-short: skipping the 110MB catalog")
			}
			dir, st := benchSynthetic(b, fbcgen.SpecForSize(c.size, "yaml"))
			benchValidate(b, dir, st.Bytes, st.Bundles)
		})
	}
}

// BenchmarkValidateCorpus validates each catalogs/v4.x directory of the
// community-operators snapshot (spec §14), one sub-benchmark per version.
func BenchmarkValidateCorpus(b *testing.B) {
	tarball, err := filepath.Abs(benchCorpusTarball)
	if err != nil {
		b.Fatal(err)
	}
	info, err := os.Stat(tarball)
	if err != nil {
		b.Skipf("corpus not available: %v (expected the project's shared/ directory next to the checkout)", err)
	}
	for _, tool := range []string{"tar", "zstd"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("corpus benchmark needs %s to unpack %s: %v", tool, tarball, err)
		}
	}
	key := fmt.Sprintf("corpus-community-operators-prod-%d-%d", info.Size(), info.ModTime().Unix())
	root := benchPrepare(b, key, func(tmp string) error {
		b.Logf("unpacking %s (once; cached in %s)", tarball, filepath.Dir(tmp))
		out, err := exec.Command("tar", "--zstd", "-xf", tarball, "-C", tmp).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tar: %v: %s", err, out)
		}
		return nil
	})
	versions, _ := filepath.Glob(filepath.Join(root, "*", "catalogs", "v*"))
	sort.Slice(versions, func(i, j int) bool { return benchVersionLess(filepath.Base(versions[i]), filepath.Base(versions[j])) })
	if len(versions) == 0 {
		b.Fatalf("no catalogs/v* directories in %s", root)
	}
	for _, dir := range versions {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			size, bundles := benchCount(b, dir)
			benchValidate(b, dir, size, bundles)
		})
	}
}

// benchVersionLess orders "v4.9" before "v4.12".
func benchVersionLess(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			if len(pa[i]) != len(pb[i]) {
				return len(pa[i]) < len(pb[i])
			}
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

// benchCount returns the bytes under dir and the number of olm.bundle blobs
// (the corpus is `opm render -o yaml` output: one top-level
// "schema: olm.bundle" line per bundle).
func benchCount(b *testing.B, dir string) (int64, int) {
	var size int64
	bundles := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		size += int64(len(data))
		bundles += bytes.Count(data, []byte("\nschema: olm.bundle\n")) + bytes.Count(data, []byte(`"schema": "olm.bundle"`))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return size, bundles
}

func benchValidate(b *testing.B, dir string, size int64, bundles int) {
	b.Helper()
	ctx := context.Background()
	fsys := os.DirFS(dir)
	// One untimed run: the inputs are valid, so anything else is a bug
	// worth stopping for; it also warms the page cache.
	res, err := fbc.Validate(ctx, fsys, fbc.Options{})
	if err != nil {
		b.Fatalf("Validate(%s): %v", dir, err)
	}
	if !res.Valid() {
		msg := res.OPMMessage
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		b.Fatalf("Validate(%s) reports a valid catalog as invalid:\n%s", dir, msg)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fbc.Validate(ctx, fsys, fbc.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	if sec := b.Elapsed().Seconds() / float64(b.N); sec > 0 {
		b.ReportMetric(float64(size)/1e6/sec, "MB/s")
		b.ReportMetric(float64(bundles)/sec, "bundles/s")
	}
	b.ReportMetric(float64(bundles), "bundles")
}
