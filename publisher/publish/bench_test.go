package publish_test

// The benchmark publishes the ~100 MB synthetic catalog of
// publisher/build's BenchmarkPublish100MB through the whole flow, to an
// in-process registry on loopback, so that the two can be compared: the
// flow must cost no more than building and pushing. The catalog is
// generated once and cached under os.TempDir()/catalogbot-bench with the
// same key, so the benchmarks share it.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

func benchCatalog(b *testing.B, spec fbcgen.Spec) string {
	b.Helper()
	root := filepath.Join(os.TempDir(), "catalogbot-bench")
	key := fmt.Sprintf("synthetic-v%s-%s-%s-p%d-b%d-c%d-s%d", fbcgen.Version, spec.Format, spec.Payload,
		spec.Packages, spec.BundlesPerPackage, spec.ChannelsPerPackage, spec.Seed)
	final := filepath.Join(root, key)
	if _, err := os.Stat(final); err == nil {
		return final
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if _, err := fbcgen.Write(tmp, spec); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr != nil {
			b.Fatal(err)
		}
	}
	return final
}

// valid stands in for the validator where only the build and push are
// measured, as publisher/build's benchmark measures them.
func valid(context.Context, fs.FS, fbc.Options) (*fbc.Result, error) { return &fbc.Result{}, nil }

func BenchmarkPublish100MB(b *testing.B) {
	if testing.Short() {
		b.Skip("100 MB catalog")
	}
	dir := benchCatalog(b, fbcgen.SpecForSize(100<<20, "yaml"))
	host := registrytest.New(b).Host
	ctx := context.Background()
	opts := func(target string) publish.Options {
		return publish.Options{Image: host + "/" + target, Build: build.Options{Base: build.BaseScratch}, Keychain: authn.NewMultiKeychain(), Validate: valid}
	}
	// A new repository each time: every blob is uploaded.
	b.Run("publish", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			res, err := publish.Publish(ctx, publish.Source{Dir: dir}, opts(fmt.Sprintf("bench/new%d:latest", i)))
			if err != nil || res.Status != publish.Published {
				b.Fatalf("%v %v", res, err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		o := opts("bench/same:latest")
		if _, err := publish.Publish(ctx, publish.Source{Dir: dir}, o); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
			if err != nil || res.Status != publish.Unchanged {
				b.Fatalf("%v %v", res, err)
			}
		}
	})
	// The whole flow as the commands run it, validation included.
	b.Run("validated", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			o := opts(fmt.Sprintf("bench/validated%d:latest", i))
			o.Validate = nil
			res, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
			if err != nil || res.Status != publish.Published {
				b.Fatalf("%v %v", res, err)
			}
		}
	})
}
