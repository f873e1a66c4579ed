// Command gen writes the demo's catalog images: one small catalog image per
// package of a File-Based Catalog directory, each in its own OCI image
// layout, so that `make demo` assembles and publishes a catalog.yaml without
// a registry, a network or credentials.
//
//	go run ./publisher/demo/gen [-from testdata/catalogs/valid] [-tag v1] [-revision N] OUTDIR
//
// OUTDIR/<package> becomes an OCI layout holding one image tagged -tag:
// /configs/<package>/<files> with the label
// operators.operatorframework.io.index.configs.v1=/configs, as opm's
// generated Dockerfile builds it. Every time in the image is the Unix
// epoch and the layer is written in a fixed order, so the same input gives
// the same digests on every machine: the layouts are generated rather than
// committed. -revision N (N > 0) adds a label to every image, which gives
// them new digests under the same tag: a re-pushed tag, as drift shows it.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	configsLabel = "operators.operatorframework.io.index.configs.v1"
	revLabel     = "io.catalogbot.demo.revision"
	refName      = "org.opencontainers.image.ref.name"
)

// epoch is every time in the images, for reproducibility.
var epoch = time.Unix(0, 0).UTC()

func main() {
	from := flag.String("from", "testdata/catalogs/valid", "the catalog `DIR` whose packages become images")
	tag := flag.String("tag", "v1", "the `TAG` of each image in its layout")
	rev := flag.Int("revision", 0, "when above 0, label the images with this revision, changing their digests")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: gen [flags] OUTDIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := generate(*from, flag.Arg(0), *tag, *rev); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

// generate writes one layout per package directory of from into out.
func generate(from, out, tag string, rev int) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		img, err := packageImage(os.DirFS(from), e.Name(), rev)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		digest, err := writeLayout(filepath.Join(out, e.Name()), tag, img)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		fmt.Printf("%s %s:%s\n", digest, filepath.Join(out, e.Name()), tag)
		n++
	}
	if n == 0 {
		return errors.New(from + " has no package directories")
	}
	return nil
}

// packageImage is the catalog image of package dir pkg of fsys.
func packageImage(fsys fs.FS, pkg string, rev int) (v1.Image, error) {
	layer, err := configsLayer(fsys, pkg)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{configsLabel: "/configs"}
	if rev > 0 {
		labels[revLabel] = strconv.Itoa(rev)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "catalogbot demo gen"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: "amd64",
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config:       v1.Config{Labels: labels},
		RootFS:       v1.RootFS{Type: "layers"},
		History:      []v1.History{{Created: v1.Time{Time: epoch}, CreatedBy: "catalogbot demo gen"}},
	})
}

// configsLayer is a gzipped tar of configs/<pkg>/..., its entries sorted
// and with fixed modes, owners and times.
func configsLayer(fsys fs.FS, pkg string) (v1.Layer, error) {
	var files []string
	err := fs.WalkDir(fsys, pkg, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, f := range files {
		// Parent directories first, each once.
		var parents []string
		for d := path.Dir(path.Join("configs", f)); d != "."; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: path.Join("configs", f), Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// writeLayout replaces dir with an OCI layout holding img under tag.
func writeLayout(dir, tag string, img v1.Image) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refName: tag})); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}
