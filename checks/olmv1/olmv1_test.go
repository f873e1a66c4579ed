package olmv1

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/checks/internal/textmemo"
)

func load(t *testing.T, catalog string) *fbc.Placed {
	t.Helper()
	p, err := fbc.LoadPlacedWhole(context.Background(), fstest.MapFS{"foo/catalog.yaml": {Data: []byte(catalog)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Unread) > 0 {
		t.Fatalf("the fixture does not load: %v", p.Unread)
	}
	return p
}

// bundle is a bundle blob of package foo at version v with extra
// properties, written as YAML list items.
func bundle(v, props string) string {
	return "---\nschema: olm.bundle\npackage: foo\nname: foo.v" + v + "\nimage: quay.io/x/foo:v" + v +
		"\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: " + v + "}\n" + props
}

const (
	allNS   = "  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: true}, {type: OwnNamespace, supported: true}]}\n"
	ownNS   = "  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: false}, {type: OwnNamespace, supported: true}]}\n"
	noModes = "  - type: olm.csv.metadata\n    value: {displayName: Foo}\n"
	// objAllNS is a YAML CSV supporting AllNamespaces, objOwnNS a JSON
	// one that does not, each base64 as olm.bundle.object holds them.
	objAllNS = "  - type: olm.bundle.object\n    value: {data: a2luZDogQ2x1c3RlclNlcnZpY2VWZXJzaW9uCnNwZWM6CiAgaW5zdGFsbE1vZGVzOgogIC0gdHlwZTogQWxsTmFtZXNwYWNlcwogICAgc3VwcG9ydGVkOiB0cnVlCg==}\n"
	objOwnNS = "  - type: olm.bundle.object\n    value: {data: eyJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIiwic3BlYyI6eyJpbnN0YWxsTW9kZXMiOlt7InR5cGUiOiJPd25OYW1lc3BhY2UiLCJzdXBwb3J0ZWQiOnRydWV9LHsidHlwZSI6IkFsbE5hbWVzcGFjZXMiLCJzdXBwb3J0ZWQiOmZhbHNlfV19fQo=}\n"
	gvkReq   = "  - type: olm.gvk.required\n    value: {group: g, kind: K, version: v1}\n"
	pkgReq   = "  - type: olm.package.required\n    value: {packageName: bar, versionRange: '>=1.0.0'}\n"
	constr   = "  - type: olm.constraint\n    value: {failureMessage: x, cel: {rule: 'true'}}\n"
)

// TestInstallability: each case is one bundle and the rules it breaks,
// worked out by hand from the rules OLM v1 applies.
func TestInstallability(t *testing.T) {
	memo := &Memo{}
	for _, tc := range []struct {
		name  string
		props string
		want  []string
	}{
		{"csv metadata with AllNamespaces", allNS, nil},
		{"bundle object CSV in YAML with AllNamespaces", objAllNS, nil},
		{"neither kind", "", []string{RuleContent}},
		{"both kinds", allNS + objAllNS, []string{RuleContent}},
		{"csv metadata without AllNamespaces", ownNS, []string{RuleInstallMode}},
		{"csv metadata without install modes", noModes, []string{RuleInstallMode}},
		{"bundle object CSV in JSON without AllNamespaces", objOwnNS, []string{RuleInstallMode}},
		{"gvk required", allNS + gvkReq, []string{RuleDependency}},
		{"package required and constraint", allNS + pkgReq + constr, []string{RuleDependency}},
		{"every rule", gvkReq, []string{RuleContent, RuleDependency}},
		{"own namespace and a dependency", ownNS + pkgReq, []string{RuleInstallMode, RuleDependency}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, bundle("1.0.0", tc.props))
			var got []string
			for _, r := range Installability(&p.Config.Bundles[0]) {
				got = append(got, r.Rule)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("rules %v, want %v", got, tc.want)
			}
			// Through a memo that every case shares, read twice: the
			// second read is the memo's, and no case sees another's.
			for pass := range 2 {
				res := Check(p, Options{Memo: memo})
				var rules []string
				for _, f := range res.Findings {
					rules = append(rules, f.Rule)
				}
				if !slices.Equal(rules, tc.want) {
					t.Errorf("Check with a memo, pass %d: rules %v, want %v", pass, rules, tc.want)
				}
			}
		})
	}
}

// channel is package foo's channel stable with the given entries.
func channel(entries string) string {
	return "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n" + entries
}

// TestUpgrades: the next version of every entry under OLM v0 and OLM v1,
// each answer written by hand.
func TestUpgrades(t *testing.T) {
	bundles := bundle("1.0.0", allNS) + bundle("1.1.0", allNS) + bundle("1.2.0", allNS) + bundle("2.0.0", allNS)
	for _, tc := range []struct {
		name    string
		entries string
		want    []Step
	}{{
		name:    "a replaces chain: both follow it",
		entries: "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n",
		want: []Step{
			{From: "foo.v1.0.0", V0: "foo.v1.1.0", V1: "foo.v1.1.0"},
			{From: "foo.v1.1.0", V0: "foo.v1.2.0", V1: "foo.v1.2.0"},
			{From: "foo.v1.2.0"},
		},
	}, {
		// The divergence: 2.0.0's skipRange covers 1.0.0 and 1.1.0. OLM
		// v0 walks the replaces chain one step at a time (1.0.0 to
		// 1.1.0, 1.1.0 to 1.2.0); OLM v1 jumps to the highest semver
		// that covers each, 2.0.0.
		name: "a head's skipRange beside the chain: v1 jumps to the head",
		entries: "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n" +
			"  - name: foo.v2.0.0\n    replaces: foo.v1.2.0\n    skipRange: '>=1.0.0 <1.2.0'\n",
		want: []Step{
			{From: "foo.v1.0.0", V0: "foo.v1.1.0", V1: "foo.v2.0.0"},
			{From: "foo.v1.1.0", V0: "foo.v1.2.0", V1: "foo.v2.0.0"},
			{From: "foo.v1.2.0", V0: "foo.v2.0.0", V1: "foo.v2.0.0"},
			{From: "foo.v2.0.0"},
		},
	}, {
		// 1.1.0 is replaced by 1.2.0 and skipped by the head 2.0.0: OLM
		// v0 takes the one nearest the head, which is also the highest.
		name: "replaced and skipped: the head wins in both",
		entries: "  - name: foo.v1.1.0\n  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n" +
			"  - name: foo.v2.0.0\n    replaces: foo.v1.2.0\n    skips: [foo.v1.1.0]\n",
		want: []Step{
			{From: "foo.v1.1.0", V0: "foo.v2.0.0", V1: "foo.v2.0.0"},
			{From: "foo.v1.2.0", V0: "foo.v2.0.0", V1: "foo.v2.0.0"},
			{From: "foo.v2.0.0"},
		},
	}, {
		// Only a skipRange covers 1.0.0 and 1.1.0: OLM v0 takes it too,
		// so both agree.
		name:    "a skipRange only",
		entries: "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n  - name: foo.v2.0.0\n    skipRange: '<2.0.0'\n",
		want: []Step{
			{From: "foo.v1.0.0", V0: "foo.v2.0.0", V1: "foo.v2.0.0"},
			{From: "foo.v1.1.0", V0: "foo.v2.0.0", V1: "foo.v2.0.0"},
			{From: "foo.v2.0.0"},
		},
	}, {
		// A successor of lower semver: 1.2.0 replaces 2.0.0 and 1.1.0
		// skips it. OLM v1 orders successors by semver and does not ask
		// for a higher one, so it takes 1.2.0, as OLM v0 does (both are
		// heads; v0 keeps the first).
		name:    "a chain against semver",
		entries: "  - name: foo.v2.0.0\n  - name: foo.v1.2.0\n    replaces: foo.v2.0.0\n  - name: foo.v1.1.0\n    skips: [foo.v2.0.0]\n",
		want: []Step{
			{From: "foo.v2.0.0", V0: "foo.v1.2.0", V1: "foo.v1.2.0"},
			{From: "foo.v1.2.0"},
			{From: "foo.v1.1.0"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, channel(tc.entries)+bundles)
			got := Upgrades(&p.Config, "foo", "stable")
			for i := range tc.want {
				tc.want[i].Channel = "stable"
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("steps\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestCheck: a package's verdict is its default bundle's, and the
// findings name the file and line of the bundle and of the entry.
func TestCheck(t *testing.T) {
	cat := channel("  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n  - name: foo.v2.0.0\n    replaces: foo.v1.1.0\n    skipRange: '<1.1.0'\n") +
		bundle("1.0.0", allNS) + bundle("1.1.0", allNS) + bundle("2.0.0", ownNS+gvkReq)
	res := Check(load(t, cat), Options{})
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkstest.Golden(t, "testdata/check.golden.json", append(got, '\n'))
}

// TestDefaultBundle: the highest semver, a deprecated bundle last.
func TestDefaultBundle(t *testing.T) {
	cat := channel("  - name: foo.v1.0.0\n  - name: foo.v2.0.0\n    replaces: foo.v1.0.0\n") + bundle("1.0.0", allNS) + bundle("2.0.0", allNS)
	if got := DefaultBundle(&load(t, cat).Config, "foo"); got != "foo.v2.0.0" {
		t.Errorf("default bundle %s, want foo.v2.0.0", got)
	}
	dep := "---\nschema: olm.deprecations\npackage: foo\nentries:\n  - reference: {schema: olm.bundle, name: foo.v2.0.0}\n    message: gone\n"
	if got := DefaultBundle(&load(t, cat+dep).Config, "foo"); got != "foo.v1.0.0" {
		t.Errorf("with 2.0.0 deprecated: default bundle %s, want foo.v1.0.0", got)
	}
}

// TestReadManifest holds readManifest, which skips manifests that cannot
// name a ClusterServiceVersion, to what decoding every manifest as YAML
// says of its kind and install modes, whatever spells the kind.
func TestReadManifest(t *testing.T) {
	type csv struct {
		Kind string `json:"kind"`
		Spec struct {
			InstallModes []struct {
				Type      string `json:"type"`
				Supported bool   `json:"supported"`
			} `json:"installModes"`
		} `json:"spec"`
	}
	for _, tc := range []struct{ name, data string }{
		{"JSON CSV", `{"kind":"ClusterServiceVersion","spec":{"installModes":[{"type":"AllNamespaces","supported":true}]}}`},
		{"YAML CSV", "kind: ClusterServiceVersion\nspec:\n  installModes:\n  - type: OwnNamespace\n    supported: true\n"},
		{"JSON kind escaped", `{"kind":"Cluster\u0053erviceVersion","spec":{"installModes":[{"type":"AllNamespaces","supported":true}]}}`},
		{"YAML kind escaped", "kind: \"Cluster\\x53erviceVersion\"\nspec: {installModes: [{type: AllNamespaces, supported: true}]}\n"},
		{"YAML kind by an escaped line break", "kind: \"Cluster\\\n  ServiceVersion\"\n"},
		{"JSON ConfigMap", `{"kind":"ConfigMap","data":{"blob":"xxxx"}}`},
		{"YAML CRD", "kind: CustomResourceDefinition\nspec:\n  group: example.com\n"},
		{"JSON, keys in other case", `{"Kind":"ClusterServiceVersion","SPEC":{"installModes":[{"type":"AllNamespaces","supported":true}]}}`},
		{"neither JSON nor YAML", "kind: [ClusterServiceVersion\n"},
		{"JSON with tabs", "{\t\"kind\":\t\"ClusterServiceVersion\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got csv
			wantOK := yaml.Unmarshal([]byte(tc.data), &want) == nil && want.Kind == "ClusterServiceVersion"
			gotOK := readManifest([]byte(tc.data), &got) && got.Kind == "ClusterServiceVersion"
			if gotOK != wantOK {
				t.Fatalf("a CSV: %v, want %v", gotOK, wantOK)
			}
			if wantOK && !reflect.DeepEqual(got, want) {
				t.Errorf("read %+v, want %+v", got, want)
			}
		})
	}
}

// TestCSVModesByText: the install modes of an olm.csv.metadata value are
// read once per text, whichever bundle holds it, and say what reading the
// value says, a value that does not decode included (the next one is read,
// as before).
func TestCSVModesByText(t *testing.T) {
	saved := csvModes
	csvModes = textmemo.New[modesRead](1 << 13)
	defer func() { csvModes = saved }()
	csv := func(v string) property.Property {
		return property.Property{Type: property.TypeCSVMetadata, Value: json.RawMessage(v)}
	}
	const (
		all     = `{"installModes":[{"supported":true,"type":"AllNamespaces"},{"supported":true,"type":"OwnNamespace"}]}`
		own     = `{"installModes":[{"supported":false,"type":"AllNamespaces"},{"supported":true,"type":"OwnNamespace"}]}`
		badType = `{"installModes":"AllNamespaces"}`
	)
	for i, tc := range []struct {
		props  []property.Property
		modes  []string
		ok     bool
		misses int // the texts read so far
	}{
		{[]property.Property{csv(all)}, []string{"AllNamespaces", "OwnNamespace"}, true, 1},
		// Another bundle, the same text: not read again.
		{[]property.Property{{Type: property.TypePackage, Value: json.RawMessage(`{"packageName":"p","version":"1.0.0"}`)}, csv(all)}, []string{"AllNamespaces", "OwnNamespace"}, true, 1},
		{[]property.Property{csv(own)}, []string{"OwnNamespace"}, true, 2},
		// A value of the wrong type is passed over for the next, and so
		// is it when met again.
		{[]property.Property{csv(badType), csv(own)}, []string{"OwnNamespace"}, true, 3},
		{[]property.Property{csv(badType)}, nil, false, 3},
	} {
		b := &declcfg.Bundle{Name: "b", Properties: tc.props}
		modes, ok := installModes(b)
		if ok != tc.ok || !reflect.DeepEqual(modes, tc.modes) {
			t.Errorf("bundle %d: install modes %v, %v; want %v, %v", i, modes, ok, tc.modes, tc.ok)
		}
		if n := csvModes.Misses(); n != tc.misses {
			t.Errorf("bundle %d: %d texts read in all, want %d", i, n, tc.misses)
		}
	}
}
