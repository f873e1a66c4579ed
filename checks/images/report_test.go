package images_test

import (
	"bytes"
	"github.com/catalogbot/catalogbot/checks/registry"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/images"
)

const digestA = "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"

// canned is one result of every class, with the kinds of location a report
// meets.
var canned = []images.Result{
	{Image: "quay.io/example/foo-bundle:v1.0.0", Class: registry.ClassOK, Digest: digestA,
		Locations: []images.Location{{Kind: images.KindBundle, File: "catalog/foo/catalog.yaml", Line: 14, Package: "foo", Bundle: "foo.v1.0.0"}}},
	{Image: "quay.io/example/foo-bundle:v1.1.0", Class: registry.ClassNotFound, Message: "no such image in the registry (404 Not Found)",
		Locations: []images.Location{{Kind: images.KindBundle, File: "catalog/foo/catalog.yaml", Line: 30, Package: "foo", Bundle: "foo.v1.1.0"}}},
	{Image: "quay.io/private/operator@" + digestA, Class: registry.ClassUnauthorized, Message: "the registry refused access (401 Unauthorized); check the credentials for it",
		Locations: []images.Location{
			{Kind: images.KindRelated, File: "catalog/foo/catalog.yaml", Line: 20, Package: "foo", Bundle: "foo.v1.0.0", Name: "operator"},
			{Kind: images.KindRelated, File: "catalog/foo/catalog.yaml", Line: 36, Package: "foo", Bundle: "foo.v1.1.0", Name: "operator"},
			{Kind: images.KindRelated, File: "catalog/bar/catalog.yaml", Line: 12, Package: "bar", Bundle: "bar.v2.0.0"},
			{Kind: images.KindRelated, File: "catalog/bar/catalog.yaml", Line: 40, Package: "bar", Bundle: "bar.v2.1.0"},
			{Kind: images.KindRelated, File: "catalog/bar/catalog.yaml", Line: 68, Package: "bar", Bundle: "bar.v2.2.0"},
		}},
	{Image: "docker.io/library/busybox:1.36", Class: registry.ClassRateLimited, Message: "the registry is rate limiting requests (429 Too Many Requests) and kept doing so after every retry",
		Locations: []images.Location{{Kind: images.KindRelated, File: "catalog/bar/catalog.yaml", Line: 13, Package: "bar", Bundle: "bar.v2.0.0"}}},
	{Image: "registry.example.com/team/baz-catalog:latest", Class: registry.ClassTransport, Message: "the registry did not answer in time",
		Locations: []images.Location{{Kind: images.KindReference, File: "catalog.yaml", Line: 9, Name: "baz"}}},
	{Image: "quay.io/example/bar-catalog:v2", Class: registry.ClassPolicy, Digest: digestA,
		Message:   "it is not pinned by digest; pin it as quay.io/example/bar-catalog@" + digestA,
		Locations: []images.Location{{Kind: images.KindReference, File: "catalog.yaml", Line: 7, Name: "bar"}}},
	{Image: "quay.io/operator-framework/opm:latest", Class: registry.ClassPolicy, Digest: digestA,
		Message:   "it does not provide linux/s390x (it provides linux/amd64, linux/arm64)",
		Locations: []images.Location{{Kind: images.KindBase}}},
}

var cannedFindings = []checks.Finding{{Rule: "CY6", Severity: checks.SeverityError, File: "catalog.yaml", Line: 11,
	Message: `duplicate reference name "bar", first used at line 6`}}

func TestReportGolden(t *testing.T) {
	for _, tt := range []struct {
		name     string
		results  []images.Result
		findings []checks.Finding
	}{
		{"mixed", canned, cannedFindings},
		{"all-ok", canned[:1], nil},
		{"empty", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var text, js bytes.Buffer
			if err := images.WriteText(&text, tt.results, tt.findings); err != nil {
				t.Fatal(err)
			}
			if err := images.WriteJSON(&js, tt.results, tt.findings); err != nil {
				t.Fatal(err)
			}
			checkstest.Golden(t, filepath.Join("testdata", "report-"+tt.name+".text.golden"), text.Bytes())
			checkstest.Golden(t, filepath.Join("testdata", "report-"+tt.name+".json.golden"), js.Bytes())
		})
	}
}

func TestFindings(t *testing.T) {
	fs := images.Findings(canned)
	// One per location of every failing result.
	if len(fs) != 1+5+1+1+1+1 {
		t.Fatalf("%d findings: %+v", len(fs), fs)
	}
	rules := map[string]bool{}
	for _, r := range images.Rules {
		rules[r.ID] = true
	}
	for _, f := range fs {
		if !rules[f.Rule] {
			t.Errorf("rule %s not in Rules", f.Rule)
		}
		want := checks.SeverityError
		if f.Rule == images.RuleID(registry.ClassTransport) || f.Rule == images.RuleID(registry.ClassRateLimited) {
			want = checks.SeverityWarning
		}
		if f.Severity != want {
			t.Errorf("%s: severity %s, want %s", f.Rule, f.Severity, want)
		}
	}
	if f := fs[0]; f.File != "catalog/foo/catalog.yaml" || f.Line != 30 || f.Bundle != "foo.v1.1.0" ||
		f.Message != "image quay.io/example/foo-bundle:v1.1.0: no such image in the registry (404 Not Found)" {
		t.Errorf("first finding %+v", f)
	}
}
