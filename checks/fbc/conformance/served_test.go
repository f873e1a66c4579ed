package conformance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/conformance/mutate"
)

// catalogdAll is what catalogd stores for a catalog and serves at
// /api/v1/all: it walks the configs directory with opm's
// declcfg.WalkMetasFS, one file at a time, and writes each meta's Blob.
// It returns the first error of the walk, as catalogd fails the unpack.
func catalogdAll(fsys fs.FS) ([]byte, error) {
	var buf bytes.Buffer
	err := declcfg.WalkMetasFS(context.Background(), fsys, func(path string, meta *declcfg.Meta, err error) error {
		if err != nil {
			return err
		}
		buf.Write(meta.Blob)
		return nil
	}, declcfg.WithConcurrency(1))
	return buf.Bytes(), err
}

// servedCompare holds fbc.Served to catalogd's own walk on one catalog:
// the same bytes, size and digest when catalogd stores it, an error when
// catalogd refuses it.
func servedCompare(t *testing.T, name string, fsys fs.FS) (stored bool) {
	t.Helper()
	want, werr := catalogdAll(fsys)
	var got bytes.Buffer
	view, gerr := fbc.Served(context.Background(), fsys, &got)
	switch {
	case werr != nil && gerr != nil:
		return false
	case werr != nil:
		t.Errorf("%s: catalogd refuses the catalog (%v); fbc.Served wrote %d bytes", name, werr, got.Len())
		return false
	case gerr != nil:
		t.Errorf("%s: catalogd stores the catalog; fbc.Served fails: %v", name, gerr)
		return false
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s: served view differs from catalogd's:\n%s", name, firstDiff("catalogd", "catalogbot", want, got.Bytes()))
		return true
	}
	if view.Size != int64(len(want)) || view.Digest != fmt.Sprintf("sha256:%x", sha256.Sum256(want)) || view.Objects != bytes.Count(want, []byte("\n")) {
		t.Errorf("%s: view %+v does not describe the %d bytes written", name, view, len(want))
	}
	return true
}

// TestServedParity holds catalogd's view of a catalog, as the publish step
// records it, to catalogd's own code on the real corpus (every OpenShift
// version of community-operators-prod, both bundle payload styles) and on
// every case of the mutation generator, valid or not.
func TestServedParity(t *testing.T) {
	t.Run("mutations", func(t *testing.T) {
		seeds := loadSeeds(t)
		cases := mutate.Generate(seeds, mutate.Options{Seed: mutationSeed, Reps: 1, Combos: 20})
		stored := 0
		for _, c := range cases {
			if servedCompare(t, c.Name, mapFS(c.Files)) {
				stored++
			}
		}
		t.Logf("%d mutation cases: catalogd stores %d, refuses %d; the view agrees on all", len(cases), stored, len(cases)-stored)
		if stored == 0 || stored == len(cases) {
			t.Fatalf("the cases do not exercise both outcomes (%d of %d stored)", stored, len(cases))
		}
	})
	t.Run("corpus", func(t *testing.T) {
		versions := corpusVersions(t)
		for _, v := range versions {
			if testing.Short() && filepath.Base(v) != "v4.12" && filepath.Base(v) != "v4.22" {
				continue
			}
			if !servedCompare(t, filepath.Base(v), os.DirFS(v)) {
				t.Errorf("%s: catalogd refuses a published catalog", filepath.Base(v))
				continue
			}
			start := time.Now()
			view, err := fbc.Served(context.Background(), os.DirFS(v), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: catalogd serves %d bytes in %d objects (%s); computed in %v", filepath.Base(v), view.Size, view.Objects, view.Digest, time.Since(start).Round(time.Millisecond))
		}
	})
}

// TestServedGolden holds the golden file of checks/fbc's TestServed to
// catalogd's own output for its catalog, so that the unit test, which runs
// without operator-registry, compares with catalogd and not with itself.
// CONFORMANCE_UPDATE=1 rewrites the golden from catalogd's output.
func TestServedGolden(t *testing.T) {
	const dir = "../testdata/served"
	want, err := catalogdAll(os.DirFS(filepath.Join(dir, "catalog")))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(dir, "served.jsonl.golden")
	if os.Getenv("CONFORMANCE_UPDATE") != "" {
		if err := os.WriteFile(golden, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not catalogd's output:\n%s", golden, firstDiff("catalogd", "golden", want, got))
	}
	servedCompare(t, "testdata/served", os.DirFS(filepath.Join(dir, "catalog")))
}
