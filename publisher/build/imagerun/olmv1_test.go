package imagerun_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/publisher/build"
)

// TestOLMv1Catalog publishes onto scratch and reads the image as catalogd
// does: only the directory the configs label names, from the layers in
// order. It must hold exactly the catalog's files.
func TestOLMv1Catalog(t *testing.T) {
	res, err := build.Build(context.Background(), catalogDir, build.Options{Base: build.BaseScratch})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := res.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	dir, ok := cfg.Config.Labels["operators.operatorframework.io.index.configs.v1"]
	if !ok {
		t.Fatalf("no configs label in %v", cfg.Config.Labels)
	}
	prefix := strings.TrimPrefix(path.Clean(dir), "/") + "/"

	got := map[string][]byte{}
	layers, err := res.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name, ok := strings.CutPrefix(path.Clean(h.Name), prefix)
			if !ok {
				continue
			}
			if base := path.Base(name); strings.HasPrefix(base, ".wh.") {
				delete(got, path.Join(path.Dir(name), strings.TrimPrefix(base, ".wh.")))
				continue
			}
			if h.Typeflag == tar.TypeReg {
				data, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				got[name] = data
			}
		}
		rc.Close()
	}

	want := map[string][]byte{}
	err = filepath.WalkDir(catalogDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(catalogDir, p)
		data, err := os.ReadFile(p)
		want[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: missing from the image", name)
		} else if !bytes.Equal(g, data) {
			t.Errorf("%s: %d bytes in the image differ from the catalog's %d", name, len(g), len(data))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: in the image, not in the catalog", name)
		}
	}
	if len(want) == 0 {
		t.Fatal("the catalog is empty")
	}
}
