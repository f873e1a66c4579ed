package fbc

import (
	"context"
	"maps"
	"os"
	"slices"
	"testing"
	"testing/fstest"
)

// sameMentions holds Mentions to the package places Validate finds in
// fsys: the same wherever the loader took every document, and never
// fewer where it could not decode one.
func sameMentions(t testing.TB, fsys fstest.MapFS) {
	t.Helper()
	ctx := context.Background()
	got, err := Mentions(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Validate(ctx, fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := load(ctx, fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	loadErrs := len(cat.walkErrs)
	for _, f := range cat.files {
		loadErrs += len(f.errs)
	}
	if loadErrs == 0 {
		if !maps.EqualFunc(got, res.PackagePlaces, slices.Equal) {
			t.Fatalf("Mentions = %v, Validate's PackagePlaces = %v", got, res.PackagePlaces)
		}
		return
	}
	for pkg, places := range res.PackagePlaces {
		for _, p := range places {
			if !slices.Contains(got[pkg], p) {
				t.Fatalf("Validate places %s at %+v and Mentions does not (Mentions = %v)", pkg, p, got)
			}
		}
	}
}

// mentionSeeds are documents in the shape catalogs are written in, which
// the scan reads, and documents that hide or add a package where a scan of
// lines would not see it, which it must leave to the decoder.
var mentionSeeds = []struct {
	doc     string
	scanned bool
}{
	{"schema: olm.package\nname: foo\ndefaultChannel: stable\n", true},
	{"---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v0.1.0\n", true},
	{"--- # first\nschema: olm.deprecations\npackage: foo\nentries: []\n", true},
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nimage: quay.io/a/b:v1\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n- type: olm.csv.metadata\n  value:\n    description: |\n      a \\ backslash\n", true},
	{"schema: custom\nname: foo\n", true},
	// A bundle that requires another package, which it does not belong to.
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package.required\n  value:\n    packageName: bar\n    versionRange: '>=1.0.0'\n- type: olm.package\n  value:\n    packageName: foo\n    version: 1.0.0\n", true},
	// A description in folded lines, quoted and plain, some at the left.
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.csv.metadata\n  value:\n    description: \"one \\U0001F431\n      two: three\n\n      four\"\n    keywords:\n    - a plain\n      \"folded\" item\n    other: plain\n      `two` lines\n", true},
	// A bundle whose olm.package property names another package.
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package\n  value:\n    packageName: bar\n    version: 1.0.0\n", false},
	// The same, with the type quoted, or after the value, or given twice.
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: \"olm.package\"\n  value:\n    packageName: bar\n    version: 1.0.0\n", false},
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package.required\n  value:\n    versionRange: '>=1.0.0'\n- value:\n    packageName: bar\n    version: 1.0.0\n  type: olm.package\n", false},
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package.required\n  type: olm.package\n  value:\n    packageName: bar\n    version: 1.0.0\n", false},
	// The same, in flow style, and with its key spelled with an escape.
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package\n  value: {packageName: bar, version: 1.0.0}\n", false},
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package\n  value:\n    \"packageN\\x61me\": bar\n    version: 1.0.0\n", false},
	{"schema: olm.bundle\nname: foo.v1\npackage: foo\nproperties:\n- type: olm.package\n  value:\n    \"package\\\n      Name\": bar\n    version: 1.0.0\n", false},
	// Top-level keys the scan cannot trust: quoted, escaped, repeated,
	// merged, indented, in flow style, or carried to column 0 by a flow
	// collection.
	{"\"package\": bar\nschema: olm.channel\nname: s\npackage: foo\n", false},
	{"schema: olm.channel\nname: s\npackage: foo\npackage: bar\n", false},
	{"base: &b\n  package: bar\nschema: olm.channel\nname: s\n<<: *b\n", false},
	{"  schema: olm.package\n  name: foo\n", false},
	{"{schema: olm.package, name: foo}\n", false},
	{"schema: olm.channel\nname: s\nentries: [{name: a,\npackage: bar\n  }]\npackage: foo\n", false},
	{"schema: olm.channel\nname: s\nentries:\n  - {name: a,\npackage: bar\n    }\n", false},
	// Keys on lines that YAML 1.1 breaks where the scan does not.
	{"schema: olm.channel\nname: s\nentries: []\u2028package: bar\n", false},
	{"schema: olm.channel\nname: s\nentries: []\rpackage: bar\n", false},
	{"schema: olm.channel\nname: s\nentries: []\u0085package: bar\n", false},
	// Values YAML does not read as the string they spell.
	{"schema: olm.package\nname: yes\n", false},
	{"schema: olm.package\nname: 1.0\n", false},
	{"schema: olm.package\nname: foo # a comment\n", false},
	{"---#\nschema: olm.package\nname: foo\n", false},
	{"schema: olm.package\nname: ~\n", false},
}

func TestMentions(t *testing.T) {
	for _, s := range mentionSeeds {
		t.Run("", func(t *testing.T) {
			doc := []byte(s.doc)
			// The splitter keeps a leading marker with the document.
			if _, ok := scanMentions(doc); ok != s.scanned {
				t.Errorf("scanMentions(%q) took it: %v, want %v", s.doc, ok, s.scanned)
			}
			sameMentions(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: doc}})
			sameMentions(t, fstest.MapFS{
				"a/catalog.yaml": &fstest.MapFile{Data: doc},
				"b/catalog.yaml": &fstest.MapFile{Data: []byte("schema: olm.package\nname: bar\n---\n" + s.doc)},
			})
		})
	}
}

// FuzzMentions holds the scan to the decoder on arbitrary documents.
func FuzzMentions(f *testing.F) {
	for _, s := range mentionSeeds {
		f.Add(s.doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameMentions(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: []byte(doc)}})
	})
}

// TestMentionsCorpus compares the two on every file of the shared
// community-operators-prod corpus, and checks that the scan reads nearly
// every document of it: otherwise the comparison says little.
func TestMentionsCorpus(t *testing.T) {
	files := corpusFiles(t)
	docs, scanned := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameMentions(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: data}})
		decodeStream(data, func(raw []byte, d *document) bool {
			docs++
			if _, ok := scanMentions(raw); ok {
				scanned++
			}
			return true
		}, func(*document) bool { docs++; return true })
	}
	if scanned*100 < docs*99 {
		t.Errorf("the scan read %d of %d corpus documents, want at least 99%%", scanned, docs)
	}
	t.Logf("the scan read %d of %d corpus documents", scanned, docs)
}
