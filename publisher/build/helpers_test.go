package build_test

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// countingRegistry is registrytest's registry, asked what a push wrote.
type countingRegistry struct{ *registrytest.Registry }

func newRegistry(t testing.TB) countingRegistry {
	t.Helper()
	return countingRegistry{registrytest.New(t)}
}

// writes are the requests that changed something, "METHOD /path": uploads
// and puts.
func (r countingRegistry) writes() []string {
	var w []string
	for _, q := range r.Requests() {
		if q.Method != http.MethodGet && q.Method != http.MethodHead {
			w = append(w, q.Method+" "+q.Path)
		}
	}
	return w
}

// blobUploads are the blob upload requests.
func (r countingRegistry) blobUploads() []string {
	var b []string
	for _, q := range r.writes() {
		if strings.Contains(q, "/blobs/") {
			b = append(b, q)
		}
	}
	return b
}

// baseImage is a random one-layer image for platform p, in Docker media
// types as most bases are, with a label and an entrypoint of its own.
func baseImage(t testing.TB, p string) v1.Image {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	return configured(t, img, p, func(c *v1.Config) {
		c.Labels = map[string]string{"vendor": "base"}
		c.Entrypoint = []string{"/bin/sh"}
	})
}

// configured is img for platform p, its config changed by edit.
func configured(t testing.TB, img v1.Image, p string, edit func(*v1.Config)) v1.Image {
	t.Helper()
	pl, err := v1.ParsePlatform(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = pl.OS, pl.Architecture, pl.Variant
	edit(&cfg.Config)
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// baseIndex is an index of baseImage for each platform plus an
// attestation manifest (unknown/unknown), as buildx pushes them.
func baseIndex(t testing.TB, platforms ...string) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.DockerManifestList)
	for _, p := range platforms {
		pl, _ := v1.ParsePlatform(p)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: baseImage(t, p), Descriptor: v1.Descriptor{Platform: pl}})
	}
	att, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	return mutate.AppendManifests(idx, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
		Platform: &v1.Platform{OS: "unknown", Architecture: "unknown"},
	}})
}

// copyTree copies the directory src to dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// tarListing lists a layer's entries one a line: type, mode, uid/gid,
// user/group names, mtime, size, name.
func tarListing(t testing.TB, l v1.Layer) string {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var b strings.Builder
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%c %04o %d/%d %q/%q %d %6d %s\n", h.Typeflag, h.Mode, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime.Unix(), h.Size, h.Name)
	}
	return b.String()
}
