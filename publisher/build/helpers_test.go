package build_test

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// countingRegistry is an in-memory registry on 127.0.0.1 that counts the
// requests it serves, so tests can tell what a push wrote.
type countingRegistry struct {
	host string
	mu   sync.Mutex
	reqs []string // "METHOD /path"
}

func newRegistry(t testing.TB) *countingRegistry {
	t.Helper()
	r := &countingRegistry{}
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req.Method+" "+req.URL.Path)
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

// reset forgets the requests counted so far.
func (r *countingRegistry) reset() {
	r.mu.Lock()
	r.reqs = nil
	r.mu.Unlock()
}

// writes are the requests that changed something: uploads and puts.
func (r *countingRegistry) writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []string
	for _, q := range r.reqs {
		if !strings.HasPrefix(q, "GET ") && !strings.HasPrefix(q, "HEAD ") {
			w = append(w, q)
		}
	}
	return w
}

// blobUploads are the blob upload requests.
func (r *countingRegistry) blobUploads() []string {
	var b []string
	for _, q := range r.writes() {
		if strings.Contains(q, "/blobs/") {
			b = append(b, q)
		}
	}
	return b
}

func (r *countingRegistry) ref(s string) string { return r.host + "/" + s }

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

func push(t testing.TB, ref string, x any) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	var d v1.Hash
	switch x := x.(type) {
	case v1.Image:
		err = remote.Write(r, x)
		if err == nil {
			d, err = x.Digest()
		}
	case v1.ImageIndex:
		err = remote.WriteIndex(r, x)
		if err == nil {
			d, err = x.Digest()
		}
	}
	if err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return d
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
