package build_test

// The benchmark publishes a ~100 MB synthetic catalog (checks/fbc/fbcgen)
// to an in-process registry on loopback. The catalog is generated once and
// cached under os.TempDir()/catalogbot-bench, with the key and stats file
// the fbc benchmarks use, so the two share it. The target is a publish in 5 s.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// benchCatalog returns the cached catalog for spec, generating it into a
// temporary sibling renamed into place, so an interrupted run leaves no
// half catalog behind.
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
	b.Logf("generating %s (once; cached in %s)", key, root)
	st, err := fbcgen.Write(tmp, spec)
	if err != nil {
		b.Fatal(err)
	}
	// The fbc benchmarks expect the stats beside a cached catalog.
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

func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkPublish100MB(b *testing.B) {
	if testing.Short() {
		b.Skip("100 MB catalog")
	}
	dir := benchCatalog(b, fbcgen.SpecForSize(100<<20, "yaml"))
	size := dirSize(b, dir)
	reg := newRegistry(b)
	ctx := context.Background()
	opts := build.Options{Base: build.BaseScratch}

	b.Run("build", func(b *testing.B) {
		b.SetBytes(size)
		var res *build.Result
		for b.Loop() {
			var err error
			if res, err = build.Build(ctx, dir, opts); err != nil {
				b.Fatal(err)
			}
		}
		m, err := res.Image.Manifest()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(m.Layers[0].Size)/1e6, "MB-layer")
	})
	// A new repository each time: every blob is uploaded.
	b.Run("publish", func(b *testing.B) {
		b.SetBytes(size)
		i := 0
		for b.Loop() {
			i++
			res, err := build.Build(ctx, dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			got, err := build.Push(ctx, res, reg.Ref(fmt.Sprintf("bench/new%d:latest", i)), build.PushOptions{})
			if err != nil || got.Unchanged {
				b.Fatalf("%+v %v", got, err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.SetBytes(size)
		target := reg.Ref("bench/same:latest")
		res, err := build.Build(ctx, dir, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := build.Push(ctx, res, target, build.PushOptions{}); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := build.Build(ctx, dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			got, err := build.Push(ctx, res, target, build.PushOptions{})
			if err != nil || !got.Unchanged {
				b.Fatalf("%+v %v", got, err)
			}
		}
	})
	b.Run("layout", func(b *testing.B) {
		b.SetBytes(size)
		root := b.TempDir()
		i := 0
		for b.Loop() {
			i++
			res, err := build.Build(ctx, dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := build.Push(ctx, res, "oci:"+filepath.Join(root, fmt.Sprint(i)), build.PushOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
