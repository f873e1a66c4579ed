package release

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

func TestSeries(t *testing.T) {
	tests := []struct {
		names []string
		want  []string
		ok    bool
	}{
		{names: []string{"v4.18", "v4.9", "v4.17"}, want: []string{"v4.9", "v4.17", "v4.18"}, ok: true},
		{names: []string{"4.12", "v4.13"}, want: []string{"4.12", "v4.13"}, ok: true},
		{names: []string{"v4.17", "latest"}, ok: false},
		{names: []string{"v4.17", ""}, ok: false},
		// The same version twice says nothing of which follows which.
		{names: []string{"v4.17", "4.17.0"}, ok: false},
		{names: []string{"v4.17"}, want: []string{"v4.17"}, ok: true},
	}
	for _, tt := range tests {
		got, ok := Series(tt.names)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("Series(%q) = %q, %v; want %q, %v", tt.names, got, ok, tt.want, tt.ok)
		}
	}
}

// chans writes channels of package foo: each "name: a, b<a, c<<b" lists
// entries, "x<y" meaning x replaces y and "x<<y" x skips y; "x~R" gives x
// the skipRange R.
func chans(spec ...string) string {
	var b strings.Builder
	for _, s := range spec {
		name, entries, _ := strings.Cut(s, ":")
		fmt.Fprintf(&b, "---\nschema: olm.channel\npackage: foo\nname: %s\nentries:\n", name)
		for _, e := range strings.Split(entries, ",") {
			e = strings.TrimSpace(e)
			e, rng, _ := strings.Cut(e, "~")
			switch {
			case strings.Contains(e, "<<"):
				n, s, _ := strings.Cut(e, "<<")
				fmt.Fprintf(&b, "  - name: foo.v%s\n    skips: [foo.v%s]\n", n, s)
			case strings.Contains(e, "<"):
				n, r, _ := strings.Cut(e, "<")
				fmt.Fprintf(&b, "  - name: foo.v%s\n    replaces: foo.v%s\n", n, r)
			default:
				fmt.Fprintf(&b, "  - name: foo.v%s\n", e)
			}
			if rng != "" {
				fmt.Fprintf(&b, "    skipRange: '%s'\n", rng)
			}
		}
	}
	return b.String()
}

// bundles writes the olm.bundles of package foo at the versions, after
// its olm.package.
func bundles(versions ...string) string {
	b := strings.Builder{}
	b.WriteString("---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n")
	for _, v := range versions {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: foo\nname: foo.v%s\nimage: quay.io/x/foo:v%s\nproperties:\n  - type: olm.package\n    value:\n      packageName: foo\n      version: %s\n", v, v, v)
	}
	return b.String()
}

// heldBundle writes foo's bundle at version v with the property
// olm.maxOpenShiftVersion: max.
func heldBundle(v, max string) string {
	return fmt.Sprintf("---\nschema: olm.bundle\npackage: foo\nname: foo.v%s\nimage: quay.io/x/foo:v%s\nproperties:\n  - type: olm.package\n    value:\n      packageName: foo\n      version: %s\n  - type: olm.maxOpenShiftVersion\n    value: %q\n", v, v, v, max)
}

func TestContinuity(t *testing.T) {
	v1 := bundles("1.0.0", "1.1.0")
	from := v1 + chans("stable: 1.0.0, 1.1.0<1.0.0")
	type want struct {
		bundle string
		line   int
		sev    checks.Severity
		says   []string
	}
	tests := []struct {
		name string
		// base and head hold catalogs From and To, "-" for absent.
		baseFrom, baseTo, headFrom, headTo string
		opts                               ContinuityOptions
		want                               []want
	}{
		{
			name:     "the same bundles in the next catalog",
			baseFrom: from, baseTo: from, headFrom: from, headTo: from,
		},
		{
			name:     "a newer bundle that replaces the installed head",
			baseFrom: from, baseTo: from, headFrom: from,
			headTo: bundles("1.2.0") + chans("stable: 1.2.0<1.1.0~<1.1.0"),
		},
		{
			name:     "a newer bundle that replaces only the head strands the bundle below it",
			baseFrom: from, baseTo: from, headFrom: from,
			headTo: bundles("1.2.0") + chans("stable: 1.2.0<1.1.0"),
			want: []want{{bundle: "foo.v1.0.0", line: 6, sev: checks.SeverityWarning, says: []string{
				"a cluster upgraded from OpenShift 4.17 to 4.18 with foo.v1.0.0 (version 1.0.0) installed from channel stable finds no upgrade in catalog v4.18",
				"channel stable of catalog v4.18 has neither it nor an entry that replaces or skips it",
			}}},
		},
		{
			name:     "a skip covers it",
			baseFrom: from, baseTo: from, headFrom: from,
			headTo: bundles("1.2.0") + chans("stable: 1.2.0<<1.0.0", "fast: 1.2.0"),
			want:   []want{{bundle: "foo.v1.1.0", line: 16}},
		},
		{
			name:     "the policy makes it an error",
			baseFrom: from, baseTo: from, headFrom: from,
			headTo: bundles("1.1.0") + chans("stable: 1.1.0"),
			opts:   ContinuityOptions{Severity: checks.SeverityError},
			want:   []want{{bundle: "foo.v1.0.0", line: 6, sev: checks.SeverityError}},
		},
		{
			name:     "a channel the next catalog lacks",
			baseFrom: from, baseTo: from, headFrom: from,
			headTo: v1 + chans("fast: 1.0.0, 1.1.0<1.0.0"),
			want: []want{
				{bundle: "foo.v1.0.0", line: 6, says: []string{"catalog v4.18 has no channel stable"}},
				{bundle: "foo.v1.1.0", line: 16},
			},
		},
		{
			name:     "a break the base has already is pre-existing",
			baseFrom: from, baseTo: bundles("1.1.0") + chans("stable: 1.1.0"),
			headFrom: from, headTo: bundles("1.1.0") + chans("stable: 1.1.0"),
			opts: ContinuityOptions{Severity: checks.SeverityError},
			want: []want{{bundle: "foo.v1.0.0", line: 6, sev: checks.SeverityWarning, says: []string{"(pre-existing: also on the base branch)"}}},
		},
		{
			name:     "a package dropped from the newer catalog before the change",
			baseFrom: from, baseTo: "", headFrom: from, headTo: "",
		},
		{
			name:     "a package the change takes out of the newer catalog",
			baseFrom: from, baseTo: from, headFrom: from, headTo: "",
			opts: ContinuityOptions{Severity: checks.SeverityError},
			want: []want{
				{bundle: "foo.v1.0.0", line: 6, sev: checks.SeverityError, says: []string{"package foo is in catalog v4.18 on the base branch and this change takes it out", "root approver"}},
				{bundle: "foo.v1.1.0", line: 16, sev: checks.SeverityError},
			},
		},
		{
			name:     "the newer catalog removed whole",
			baseFrom: from, baseTo: from, headFrom: from, headTo: "-",
			want: []want{{bundle: "foo.v1.0.0", line: 6}, {bundle: "foo.v1.1.0", line: 16}},
		},
		{
			name:     "a new newer catalog without the package",
			baseFrom: from, baseTo: "-", headFrom: from, headTo: "",
		},
		{
			name:     "a bundle that holds the cluster at 4.17",
			baseFrom: from, baseTo: from,
			headFrom: bundles("1.1.0") + heldBundle("1.0.0", "4.17") + chans("stable: 1.0.0, 1.1.0<1.0.0"),
			headTo:   bundles("1.1.0") + chans("stable: 1.1.0"),
		},
		{
			name:     "olm.maxOpenShiftVersion 4.18 lets the cluster upgrade to 4.18",
			baseFrom: from, baseTo: from,
			headFrom: bundles("1.1.0") + heldBundle("1.0.0", "v4.18.2") + chans("stable: 1.0.0, 1.1.0<1.0.0"),
			headTo:   bundles("1.1.0") + chans("stable: 1.1.0"),
			want: []want{{bundle: "foo.v1.0.0", line: 16, says: []string{
				"if it does not run on OpenShift 4.18, say so with the property olm.maxOpenShiftVersion: 4.17 in the CSV's olm.properties annotation",
			}}},
		},
		{
			name:     "a value OLM cannot read holds nothing",
			baseFrom: from, baseTo: from,
			headFrom: bundles("1.1.0") + heldBundle("1.0.0", "soon") + chans("stable: 1.0.0, 1.1.0<1.0.0"),
			headTo:   bundles("1.1.0") + chans("stable: 1.1.0"),
			want:     []want{{bundle: "foo.v1.0.0", line: 16}},
		},
		{
			name:     "a prunable channel is not judged",
			baseFrom: from, baseTo: from, headFrom: from + chans("candidate: 1.1.0"), headTo: from,
			opts: ContinuityOptions{Prunable: func(c string) bool { return c == "candidate" }},
		},
		{
			name:     "a bundle stranded in two channels is one finding",
			baseFrom: from, baseTo: from, headFrom: from + chans("fast: 1.1.0"), headTo: bundles("1.0.0") + chans("stable: 1.0.0"),
			want: []want{{bundle: "foo.v1.1.0", line: 16, says: []string{"installed from channels stable, fast", "channel stable of catalog v4.18 has neither", "catalog v4.18 has no channel fast"}}},
		},
	}
	load := func(t *testing.T, s string) *fbc.Placed {
		if s == "-" {
			return nil
		}
		return placed(t, s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := Step{From: "v4.17", To: "v4.18",
				BaseFrom: load(t, tt.baseFrom), BaseTo: load(t, tt.baseTo), HeadFrom: load(t, tt.headFrom), HeadTo: load(t, tt.headTo)}
			opts := tt.opts
			opts.Packages = []string{"foo"}
			got := Continuity(step, opts)
			if len(got) != len(tt.want) {
				t.Fatalf("%d findings, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				f := got[i]
				if f.Rule != RuleStranded || f.Bundle != w.bundle || f.File != "foo/catalog.yaml" || f.Line != w.line || f.Package != "foo" {
					t.Errorf("finding %d is %s on %s at %s:%d, want %s on %s at foo/catalog.yaml:%d", i, f.Rule, f.Bundle, f.File, f.Line, RuleStranded, w.bundle, w.line)
				}
				if want := cmpOr(w.sev, checks.SeverityWarning); f.Severity != want {
					t.Errorf("finding %d is a %s, want a %s", i, f.Severity, want)
				}
				for _, s := range w.says {
					if !strings.Contains(f.Message, s) {
						t.Errorf("finding %d does not say %q:\n%s", i, s, f.Message)
					}
				}
			}
		})
	}
}

func cmpOr(a, b checks.Severity) checks.Severity {
	if a != "" {
		return a
	}
	return b
}

// TestContinuityRealPair runs the rule on a real package in two
// consecutive catalogs of community-operators-prod: as published it
// passes, and with the upgrade path taken out of the newer catalog the
// bundle it served is stranded.
func TestContinuityRealPair(t *testing.T) {
	read := func(catalog string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "community-operators-prod", "catalogs", catalog, "nfs-provisioner-operator", "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	load := func(s string) *fbc.Placed { return placed(t, s) }
	older, newer := read("v4.19"), read("v4.20")
	opts := ContinuityOptions{Packages: []string{"nfs-provisioner-operator"}, Severity: checks.SeverityError}
	step := Step{From: "v4.19", To: "v4.20", BaseFrom: load(older), BaseTo: load(newer), HeadFrom: load(older), HeadTo: load(newer)}
	if got := Continuity(step, opts); len(got) != 0 {
		t.Fatalf("the real pair strands bundles: %+v", got)
	}

	// The newer catalog keeps only v0.0.9, which no longer replaces
	// v0.0.8: clusters running v0.0.8 have nowhere to go.
	cut := strings.Replace(newer, "- name: nfs-provisioner-operator.v0.0.8\n", "", 1)
	cut = strings.Replace(cut, "  replaces: nfs-provisioner-operator.v0.0.8\n", "", 1)
	if cut == newer {
		t.Fatal("the fixture changed: no upgrade path to cut")
	}
	step.HeadTo = load(cut)
	got := Continuity(step, opts)
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(got), got)
	}
	f := got[0]
	if f.Rule != RuleStranded || f.Severity != checks.SeverityError || f.Bundle != "nfs-provisioner-operator.v0.0.8" ||
		f.File != "foo/catalog.yaml" || f.Line != 14 {
		t.Errorf("finding %+v, want an RG5 error on nfs-provisioner-operator.v0.0.8 at foo/catalog.yaml:14", f)
	}
	want := "a cluster upgraded from OpenShift 4.19 to 4.20 with nfs-provisioner-operator.v0.0.8 (version 0.0.8) installed from channel alpha finds no upgrade in catalog v4.20"
	if !strings.Contains(f.Message, want) {
		t.Errorf("the message does not say %q:\n%s", want, f.Message)
	}
}
