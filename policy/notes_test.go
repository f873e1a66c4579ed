package policy_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/policy"
)

// TestBlindSpots: each case is a tree whose policy is valid but cannot see
// something (a clean one has no note); the notes are golden.
func TestBlindSpots(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	pkg := "schema: olm.package\nname: foo\n"
	for _, tc := range []struct {
		name string
		tree fstest.MapFS
	}{
		{"clean", fstest.MapFS{
			".catalogbot.yaml":                file("conventions: operator-pipelines\n"),
			"config.yaml":                     file("maintainers: [alice]\n"),
			"operators/foo/ci.yaml":           file("reviewers: [bob]\n"),
			"catalogs/v4.18/foo/catalog.yaml": file(pkg),
		}},
		{"no-maintainers", fstest.MapFS{
			".catalogbot.yaml":      file("conventions: operator-pipelines\n"),
			"config.yaml":           file("allowed_bundle_registries: [quay.io/example/]\n"),
			"operators/foo/ci.yaml": file("reviewers: [bob]\n"),
		}},
		{"no-reviewers", fstest.MapFS{
			".catalogbot.yaml":      file("conventions: operator-pipelines\n"),
			"config.yaml":           file("maintainers: [alice]\n"),
			"operators/bar/ci.yaml": file("updateGraph: replaces-mode\n"),
			"operators/baz/ci.yaml": file("reviewers: []\n"),
			"operators/foo/ci.yaml": file("reviewers: [bob]\n"),
		}},
		{"no-one-approves", fstest.MapFS{
			".catalogbot.yaml":      file("owners:\n  sources: [ci.yaml]\n"),
			"operators/bar/ci.yaml": file("updateGraph: replaces-mode\n"),
		}},
		{"roots-of-one-catalog", fstest.MapFS{
			".catalogbot.yaml":                file("catalog:\n  roots: [catalogs/v4.17, catalogs/v4.18, catalogs/v4.19]\n"),
			"catalogs/v4.17/foo/catalog.yaml": file(pkg),
			"catalogs/v4.18/foo/catalog.yaml": file(pkg),
			"catalogs/v4.18/bar/catalog.yaml": file("schema: olm.package\nname: bar\n"),
			"catalogs/v4.19/bar/catalog.yaml": file("schema: olm.package\nname: bar\n"),
		}},
		{"roots-of-distinct-packages", fstest.MapFS{
			".catalogbot.yaml":           file("catalog:\n  roots: [catalog, incubator]\n"),
			"catalog/foo/catalog.yaml":   file(pkg),
			"incubator/bar/catalog.yaml": file("schema: olm.package\nname: bar\n"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, findings, err := policy.Load(tc.tree)
			if err != nil || len(findings) > 0 {
				t.Fatalf("Load: %v %+v", err, findings)
			}
			var b bytes.Buffer
			if err := checks.WriteText(&b, pol.BlindSpots(tc.tree), ""); err != nil {
				t.Fatal(err)
			}
			checkstest.Golden(t, filepath.Join("testdata", "blindspots", tc.name+".golden"), b.Bytes())
		})
	}
}
