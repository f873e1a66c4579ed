// Package rendertest builds small bundle and catalog images from tar
// entries, files on disk and labels, for tests of code that renders or
// inspects them. Tests serve and push them with registrytest.
package rendertest

import (
	"archive/tar"
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// BundleLabels are the labels operator-sdk's bundle Dockerfile gives a
// registry+v1 bundle image of package pkg.
func BundleLabels(pkg, channels string) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   pkg,
		"operators.operatorframework.io.bundle.channels.v1":  channels,
	}
}

// Entry is one tar entry of a layer. A Name ending in "/" is a directory;
// Link makes a symlink, HardLink a hard link. Whiteouts are plain files
// named ".wh.<name>" or ".wh..wh..opq".
type Entry struct {
	Name     string
	Body     string
	Link     string
	HardLink string
}

// Layer builds an uncompressed-tar layer from entries, in order.
func Layer(t testing.TB, entries ...Entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.Body))}
		switch {
		case strings.HasSuffix(e.Name, "/"):
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeDir, 0o755, 0
		case e.Link != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.Link, 0
		case e.HardLink != "":
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, e.HardLink, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			if _, err := io.WriteString(tw, e.Body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return layer
}

// DirEntries lists the files under dir as entries named prefix/<path>,
// directories first in walk order, so a bundle or catalog on disk can
// become a layer.
func DirEntries(t testing.TB, dir, prefix string) []Entry {
	t.Helper()
	var entries []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		if d.IsDir() {
			if name != "" && name != "." {
				entries = append(entries, Entry{Name: name + "/"})
			}
			return nil
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		entries = append(entries, Entry{Name: name, Body: string(body)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// Image stacks layers, in order, on an empty linux image with labels.
func Image(t testing.TB, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
