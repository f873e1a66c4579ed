package publish_test

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/catalogbot/catalogbot/checks/catalogfs"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// randomRepo is a repository tree of a few roots, each with packages of
// distinct names (so that the catalog they make is valid), files nested in
// package directories, .indexignore files, and the repository's own files
// beside the roots.
func randomRepo(r *rand.Rand) (fstest.MapFS, []string) {
	tree := fstest.MapFS{
		".catalogbot.yaml":         {Data: []byte("catalog: {}\n")},
		".github/workflows/x.yaml": {Data: []byte("on: push\n")},
		"README.md":                {Data: []byte("# repo\n")},
	}
	all := []string{"catalog", "incubator", "extra/community", "extra/certified"}
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	roots := all[:1+r.IntN(3)]
	n := 0
	for _, root := range roots {
		for range 1 + r.IntN(3) {
			n++
			pkg := fmt.Sprintf("pkg%d", n)
			cat := strings.ReplaceAll(fbctest.Foo, "foo", pkg)
			dir := path.Join(root, pkg)
			if r.IntN(2) == 0 {
				tree[dir+"/catalog.yaml"] = &fstest.MapFile{Data: []byte(cat)}
			} else {
				// The package split over a nested directory.
				i := strings.Index(cat, "---\nschema: olm.bundle")
				tree[dir+"/package.yaml"] = &fstest.MapFile{Data: []byte(cat[:i])}
				tree[dir+"/bundles/bundles.yaml"] = &fstest.MapFile{Data: []byte(cat[i:])}
			}
			if r.IntN(3) == 0 {
				tree[dir+"/.indexignore"] = &fstest.MapFile{Data: []byte("*.md\n")}
				tree[dir+"/NOTES.md"] = &fstest.MapFile{Data: []byte("notes\n")}
			}
		}
		if r.IntN(3) == 0 {
			tree[root+"/.indexignore"] = &fstest.MapFile{Data: []byte("README.md\n")}
			tree[root+"/README.md"] = &fstest.MapFile{Data: []byte("about this root\n")}
		}
	}
	return tree, roots
}

// configs reads the regular files under /configs of a published OCI
// layout, keyed by their path below /configs.
func configs(t *testing.T, dir string) map[string]string {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) == 0 {
		t.Fatalf("layout %s has no image: %v", dir, err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(h.Name, "/")
		rest, ok := strings.CutPrefix(name, "configs/")
		if !ok || h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[rest] = string(data)
	}
	return out
}

// TestPublishedIsChecked: for any repository tree, the published image's
// /configs holds, file by file and byte for byte, the catalog the pull
// request check validates (catalogfs), nothing more and nothing less.
func TestPublishedIsChecked(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 1))
		tree, roots := randomRepo(r)
		t.Run(fmt.Sprintf("seed %d roots %s", seed, strings.Join(roots, ",")), func(t *testing.T) {
			checked, err := catalogfs.New(tree, roots)
			if err != nil {
				t.Fatal(err)
			}
			files, err := catalogfs.Files(checked)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, f := range files {
				data, err := fs.ReadFile(checked, f)
				if err != nil {
					t.Fatal(err)
				}
				want[f] = string(data)
			}
			out := filepath.Join(t.TempDir(), "image")
			res, err := publish.Publish(ctx, publish.Source{Tree: tree, Roots: roots}, options("oci:"+out))
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != publish.Published {
				t.Fatalf("status %s: %+v", res.Status, res.Findings)
			}
			if got := configs(t, out); !reflect.DeepEqual(got, want) {
				t.Errorf("/configs differs from the checked catalog:\n got %v\nwant %v", keys(got), keys(want))
			}
		})
	}
}

// TestPublishRootsDoNotOverlay: the attacks on a catalog of two roots. A
// package of one root defined again in another is refused, not published
// in place of the first; an .indexignore in one root leaves the other's
// package in the image.
func TestPublishRootsDoNotOverlay(t *testing.T) {
	ctx := context.Background()
	bar := strings.ReplaceAll(fbctest.Foo, "foo", "bar")
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

	overlay := fstest.MapFS{
		"catalog/bar/catalog.yaml":   file(bar),
		"incubator/bar/catalog.yaml": file(strings.Replace(bar, "bar.v1.0.0", "bar.v9.9.9", -1)),
	}
	res, err := publish.Publish(ctx, publish.Source{Tree: overlay, Roots: []string{"catalog", "incubator"}}, options("oci:"+filepath.Join(t.TempDir(), "overlay")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.Invalid {
		t.Errorf("a package in two roots of one catalog: status %s; want invalid, never one root's copy in place of the other", res.Status)
	}

	hide := fstest.MapFS{
		"catalog/bar/catalog.yaml":   file(bar),
		"incubator/bar/.indexignore": file("*\n"),
	}
	out := filepath.Join(t.TempDir(), "hide")
	res, err = publish.Publish(ctx, publish.Source{Tree: hide, Roots: []string{"catalog", "incubator"}}, options("oci:"+out))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.Published {
		t.Fatalf("status %s", res.Status)
	}
	got := configs(t, out)
	if got["catalog/bar/catalog.yaml"] != bar {
		t.Errorf("bob's package is not in the image as it is in the repository: %v", keys(got))
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
