package images_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// BenchmarkVerify1000 verifies 1,000 distinct references (half by tag, half
// by digest, in 50 repositories, as bundle and related images) against an
// in-process registry on loopback. Each iteration uses a new Verifier, so
// nothing is served from its cache. The budget is 2 s per run and no
// manifest GET at all: existence is HEAD only.
func BenchmarkVerify1000(b *testing.B) {
	reg := registrytest.New(b)
	var uses []images.Use
	for i := range 1000 {
		repo := fmt.Sprintf("team/operator-%02d", i%50)
		ref := reg.Ref(fmt.Sprintf("%s:v%d", repo, i))
		d := reg.PushRandom(b, ref)
		loc := images.Location{Kind: images.KindBundle, File: "catalog.yaml", Line: i + 1}
		if i%2 == 1 {
			ref = reg.Ref(repo + "@" + d.String())
			loc.Kind = images.KindRelated
		}
		uses = append(uses, images.Use{Image: ref, Location: loc})
	}
	refs := images.Dedupe(uses)
	if len(refs) != 1000 {
		b.Fatalf("%d distinct references, want 1000", len(refs))
	}
	reg.Reset()
	o := options(newFakeClock(), nil)

	b.ReportAllocs()
	for b.Loop() {
		res, err := newVerifier(b, o).Verify(context.Background(), refs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if !r.OK() {
				b.Fatalf("%s: %s %s", r.Image, r.Class, r.Message)
			}
		}
	}

	n := float64(b.N)
	b.ReportMetric(float64(reg.Count(http.MethodHead, "manifests"))/n, "HEAD/op")
	b.ReportMetric(float64(reg.Count(http.MethodGet, "manifests"))/n, "GET-manifest/op")
	b.ReportMetric(float64(reg.Count(http.MethodGet, "blobs"))/n, "GET-blob/op")
	b.ReportMetric(float64(reg.Count(http.MethodGet, "ping"))/n, "GET-ping/op")
	if gets := reg.Count(http.MethodGet, "manifests") + reg.Count(http.MethodGet, "blobs"); gets != 0 {
		b.Errorf("%d GETs of manifests or blobs, want none", gets)
	}
	if perOp := b.Elapsed().Seconds() / n; perOp > 2 {
		b.Errorf("%.2f s per 1,000 references, budget 2 s", perOp)
	}
}
