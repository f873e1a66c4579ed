// Package olmv1test holds catalogs that break, and keep, each OLM v1
// readiness rule, for the tests of every front end (the App, catalogbot
// check) to run through the same cases.
package olmv1test

import "strings"

// Bundle is a bundle of package foo at version v with extra properties,
// as a YAML document.
func Bundle(v, props string) string {
	return "---\nschema: olm.bundle\npackage: foo\nname: foo.v" + v + "\nimage: quay.io/example/foo-bundle:v" + v +
		"\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: " + v + "}\n" + props
}

// Properties that decide installability.
const (
	AllNamespaces = "  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: true}]}\n"
	OwnNamespace  = "  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: false}, {type: OwnNamespace, supported: true}]}\n"
	GVKRequired   = "  - type: olm.gvk.required\n    value: {group: example.com, kind: Bar, version: v1}\n"
)

// Catalog is package foo with channel stable, the default, holding
// entries (YAML list items), and the bundles.
func Catalog(entries string, bundles ...string) string {
	return "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n" +
		entries + strings.Join(bundles, "")
}

// Case is a change of foo's catalog file, from Base to Head.
type Case struct {
	Name       string
	Base, Head string
	// Rule is the rule the readiness check names on the head, "" for
	// none; Blocks says whether it fails the check under olmv1: error.
	Rule   string
	Blocks bool
}

// Cases are, for each installability rule (V1-V3), a change that breaks
// it and one that keeps it, and a divergent upgrade (V4), whose two
// answers were worked out by hand: from 1.0.0 OLM v0 takes the entry that
// replaces it, 1.1.0, while OLM v1 takes the highest version whose
// skipRange covers it, 1.2.0.
func Cases() []Case {
	base := Catalog("  - name: foo.v1.0.0\n", Bundle("1.0.0", AllNamespaces))
	next := "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n"
	one := Bundle("1.0.0", AllNamespaces)
	return []Case{
		{"V1 broken: neither olm.bundle.object nor olm.csv.metadata", base, Catalog(next, one, Bundle("1.1.0", "")), "V1", true},
		{"V1 V2 V3 kept: an installable bundle", base, Catalog(next, one, Bundle("1.1.0", AllNamespaces)), "", false},
		{"V2 broken: no AllNamespaces install mode", base, Catalog(next, one, Bundle("1.1.0", OwnNamespace)), "V2", true},
		{"V3 broken: a required GVK", base, Catalog(next, one, Bundle("1.1.0", AllNamespaces+GVKRequired)), "V3", true},
		{"V4 noted: OLM v1 jumps to 1.2.0 where OLM v0 steps to 1.1.0", base,
			Catalog(next+"  - name: foo.v1.2.0\n    replaces: foo.v1.1.0\n    skipRange: '>=1.0.0 <1.2.0'\n",
				one, Bundle("1.1.0", AllNamespaces), Bundle("1.2.0", AllNamespaces)), "V4", false},
	}
}
