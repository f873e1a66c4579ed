package policy

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/publisher/build"
)

func TestPublishInput(t *testing.T) {
	roots := fstest.MapFS{"catalog/foo/index.yaml": &fstest.MapFile{}}
	withList := fstest.MapFS{"catalog.yaml": &fstest.MapFile{}, "catalog/foo/index.yaml": &fstest.MapFile{}}
	ready := func() *Policy {
		p := Default()
		p.Publish.Image = "quay.io/example/catalog:latest"
		return p
	}
	type want struct {
		list, image string
		roots       []string
		build       build.Options
	}
	base := want{image: "quay.io/example/catalog:latest", roots: []string{"catalog"}, build: build.Options{Base: BaseOPM}}
	for _, tc := range []struct {
		name   string
		tree   fstest.MapFS
		change func(*Policy)
		want   func(*want)
	}{
		{"the catalog roots", roots, func(*Policy) {}, func(*want) {}},
		{"catalog.yaml at the root", withList, func(*Policy) {}, func(w *want) { w.list = "catalog.yaml" }},
		{"the policy's reference list", roots, func(p *Policy) { p.Catalog.ReferenceList = "lists/catalog.yaml" },
			func(w *want) { w.list = "lists/catalog.yaml" }},
		{"other roots", roots, func(p *Policy) { p.Catalog.Roots = []string{"v4.16", "v4.17"} },
			func(w *want) { w.roots = []string{"v4.16", "v4.17"} }},
		{"no image", roots, func(p *Policy) { p.Publish.Image = "" }, func(w *want) { w.image = "" }},
		{"scratch", roots, func(p *Policy) { p.Publish.Base = BaseScratch }, func(w *want) { w.build.Base = BaseScratch }},
		{"a pinned opm image", roots, func(p *Policy) { p.Publish.OPMImage = "quay.io/operator-framework/opm@sha256:0" },
			func(w *want) { w.build.OPMImage = "quay.io/operator-framework/opm@sha256:0" }},
		{"platforms", roots, func(p *Policy) { p.Publish.Platforms = []string{"linux/amd64", "linux/arm64"} },
			func(w *want) { w.build.Platforms = []string{"linux/amd64", "linux/arm64"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ready()
			tc.change(p)
			w := base
			w.roots = append([]string(nil), base.roots...)
			tc.want(&w)
			src, opts := p.PublishInput(tc.tree)
			if !reflect.DeepEqual(src.Tree, tc.tree) || src.Dir != "" || src.List != nil {
				t.Errorf("the source is not the tree alone: %+v", src)
			}
			if src.ReferenceList != w.list || !reflect.DeepEqual(src.Roots, w.roots) {
				t.Errorf("source: list %q, roots %q; want %q, %q", src.ReferenceList, src.Roots, w.list, w.roots)
			}
			if opts.Image != w.image || !reflect.DeepEqual(opts.Build, w.build) {
				t.Errorf("options: image %q, build %+v; want %q, %+v", opts.Image, opts.Build, w.image, w.build)
			}
		})
	}
}
