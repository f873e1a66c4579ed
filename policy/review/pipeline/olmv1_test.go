package pipeline

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy"
)

// v1Bundle is a bundle of foo at version v, with OLM v1's install mode and
// extra properties (YAML list items).
func v1Bundle(v, extra string) string {
	return "---\nschema: olm.bundle\npackage: foo\nname: foo.v" + v + "\nimage: quay.io/example/foo-bundle:v" + v +
		"\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: " + v + "}\n" +
		"  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: true}]}\n" + extra
}

const v1GVKRequired = "  - type: olm.gvk.required\n    value: {group: g, kind: K, version: v1}\n"

// v1Base: foo's 1.0.0 is installable; 1.1.0 requires a GVK already.
var v1Base = map[string]string{
	"catalog/foo/catalog.yaml": releasePackage + releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}) +
		v1Bundle("1.0.0", "") + v1Bundle("1.1.0", v1GVKRequired),
	"catalog/other/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "other"),
}

// TestOLMv1 runs the readiness on a change to foo under each olmv1 value:
// a new 1.2.0 that requires a GVK too and whose skipRange makes OLM v1
// jump over 1.1.0 from 1.0.0, where OLM v0 follows replaces to 1.1.0.
func TestOLMv1(t *testing.T) {
	head := maps.Clone(v1Base)
	head["catalog/foo/catalog.yaml"] = releasePackage +
		releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0", skipRange: "<1.1.0"}) +
		v1Bundle("1.0.0", "") + v1Bundle("1.1.0", v1GVKRequired) + v1Bundle("1.2.0", v1GVKRequired)
	input := func(mode string) *Input {
		pol := policy.Default()
		pol.OLMv1 = mode
		return &Input{Change: diff(v1Base, head, nil), Base: tree(v1Base), Head: tree(head), Policy: pol}
	}

	rs, err := OLMv1Readiness(context.Background(), input(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Package != "foo" || rs[0].Root != "catalog" {
		t.Fatalf("readiness %+v, want foo in catalog alone: other is untouched", rs)
	}
	r := rs[0]
	// The default bundle is the highest semver: 1.1.0 on the base, 1.2.0
	// on the head, each requiring a GVK. The verdict is the same; the
	// divergence is new.
	if got := Verdict(r.Base); got != "not installable: V3 declares olm.gvk.required" {
		t.Errorf("base verdict %q", got)
	}
	if r.Head.Bundle != "foo.v1.2.0" || len(r.Head.Divergences) != 1 || !r.Changed() {
		t.Errorf("head %+v; want 1.2.0 with one divergence, changed", r.Head)
	}
	var got []string
	for i, f := range r.Findings {
		got = append(got, f.Rule+" "+f.Bundle+" "+f.File+map[bool]string{true: " new", false: ""}[r.Introduced[i]])
	}
	want := []string{
		"V4 foo.v1.0.0 catalog/foo/catalog.yaml new",
		"V3 foo.v1.1.0 catalog/foo/catalog.yaml",
		"V3 foo.v1.2.0 catalog/foo/catalog.yaml new",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%q\nwant\n%q", got, want)
	}

	// The storefront cards read the same load: foo's stable channel has
	// a new head.
	cards, err := Cards(context.Background(), input(""))
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 1 || cards[0].Base == nil || cards[0].Head == nil ||
		!slices.Equal(cards[0].Head.Channels, []string{"stable: foo.v1.2.0"}) || !slices.Equal(cards[0].Base.Channels, []string{"stable: foo.v1.1.0"}) {
		t.Errorf("cards %+v; want foo's, stable's head moving from 1.1.0 to 1.2.0", cards)
	}

	if slices.ContainsFunc(Checks(input("")), func(c checks.Check[*Input]) bool { return c.Name() == OLMv1Name }) {
		t.Error("under report, the default, there is an olmv1 check")
	}
	for _, tc := range []struct {
		mode       string
		conclusion checks.Conclusion
		severities []checks.Severity
	}{
		{policy.OLMv1Warning, checks.Success, []checks.Severity{checks.SeverityNote, checks.SeverityWarning, checks.SeverityWarning}},
		// Only the bundle the change brings in fails; 1.1.0's V3 is the
		// base's.
		{policy.OLMv1Error, checks.Failure, []checks.Severity{checks.SeverityNote, checks.SeverityWarning, checks.SeverityError}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			in := input(tc.mode)
			if !slices.ContainsFunc(Checks(in), func(c checks.Check[*Input]) bool { return c.Name() == OLMv1Name }) {
				t.Fatal("no olmv1 check")
			}
			res := OLMv1{}.Run(context.Background(), in)
			if res.Conclusion != tc.conclusion {
				t.Errorf("conclusion %s, want %s: %s", res.Conclusion, tc.conclusion, res.Summary)
			}
			var sev []checks.Severity
			for _, f := range res.Findings {
				sev = append(sev, f.Severity)
				if f.File == "" || f.Line == 0 {
					t.Errorf("finding %s is not placed", f.Rule)
				}
			}
			if !slices.Equal(sev, tc.severities) {
				t.Errorf("severities %v, want %v", sev, tc.severities)
			}
		})
	}
}
