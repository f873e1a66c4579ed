package fbc

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// blobSeeds are JSON streams for the fast Blobs path: every character
// encoding/json escapes, keys out of order and nested, and the shapes
// that must go the exact way (folded keys, non-string names, numbers).
// yamlBlobSeeds are YAML streams: YAML 1.1 typing, anchors, separators
// with comments, and keys that fold to schema.
var yamlBlobSeeds = []string{
	"schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1\n    skipRange: '<1.0.0'\n",
	"schema: olm.bundle\npackage: foo\nname: foo.v1\nimage: quay.io/a/b:v1\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 1.0.0}\n  - type: x\n    value:\n      on: yes\n      n: N\n      f: 1.0\n      o: 010\n      z: ~\n      q: \"yes\"\n      e: []\n",
	"---\n# comment\nschema: olm.package\nname: bar\n---\nschema: olm.deprecations\npackage: bar\nentries: []\n",
	"schema: olm.package\nname: &n anchored\ndescription: *n\n",
	"Schema: olm.package\nname: folded\n",
	"---#\nA: A",
	// A literal block whose first lines are empty: one newline each.
	"schema: olm.package\nname: lit\ndescription: |\n\n\n  first\n\n  second\n",
	// A document that decodes but does not type, between two that do,
	// and one that does not decode.
	"schema: olm.package\nname: a\n---\nschema: olm.bundle\nname: b\nproperties: nope\n---\nschema: [\n---\nschema: olm.package\nname: c\n",
}

var blobSeeds = []string{
	`{"schema":"olm.package","name":"foo","defaultChannel":"stable","icon":{"mediatype":"image/png","base64data":"aGk="}}`,
	`{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1","skips":["a"],"skipRange":"<1.0.0"}]}` + "\n" +
		`{"schema":"olm.bundle","package":"foo","name":"foo.v1","image":"quay.io/a/b:v1","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"value":{"b":true,"a":false,"list":[],"map":{}},"type":"x"}]}`,
	`{"schema":"x","s":"quote \" backslash \\ slash / <html> & \u00e9 \ud83d\ude00 \u2028 \u2029 \b \f \n \r \t \u0001 \u001f \u007f"}`,
	`{"schema":"x","esc":"quote \" backslash \\ <html> & \u00e9 \u2028 \u2029 \b \f \n \r \t \u0001 \u001f \u007f","raw":"é 😀  "}`,
	`{"schema":"x","\u0000key":"v","Key":"w","key":"x"}`,
	`{"schema":"olm.package","Name":"foo"}`,
	`{"schema":"olm.package","name":"foo","Key":"kelvin","key":"k"}`,
	`{"schema":"olm.package","name":"foo","NAME":"bar"}`,
	`{"schema":"olm.package","name":["foo"]}`,
	`{"schema":"x","n":1.0}`,
	`{"schema":"olm.package","name":"a"}` + "\n" + `{"schema":"olm.bundle","name":"b","properties":"nope"}` + "\n" + `{"schema":"olm.channel","name":"s","entries":[{"name":1}]}`,
	`{"schema":"olm.package","name":"a"}  {"schema":"olm.package","name":"b"}` + "\n\n" + `{"package":"a","schema":"olm.channel","name":"s","entries":[]}`,
}

// TestBlobsFastPath: the fast path gives what the loader's decoding gives,
// sums included, and is taken for plain JSON.
func TestBlobsFastPath(t *testing.T) {
	for _, s := range append(slices.Clone(blobSeeds), yamlBlobSeeds...) {
		sameBlobs(t, []byte(s))
	}
	for _, i := range []int{0, 1, 3, len(blobSeeds) - 1} {
		data := []byte(blobSeeds[i])
		if roots, spans, ok := parseFastJSONStream(data); !ok {
			t.Errorf("the fast JSON parser refused seed %d", i)
		} else if _, ok := fastBlobs(data, roots, spans); !ok {
			t.Errorf("fastBlobs refused seed %d", i)
		}
	}
}

func FuzzBlobsFastPath(f *testing.F) {
	for _, s := range append(slices.Clone(blobSeeds), yamlBlobSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameBlobs(t, []byte(s)) })
}

// sameBlobs compares the fast path, when it takes data, with the exact one:
// Blobs whole, and for JSON fastBlobs alone.
func sameBlobs(t *testing.T, data []byte) {
	t.Helper()
	want := exactBlobs(data)
	// A YAML mapping whose keys collide once made strings ({0, "0": 1})
	// keeps whichever value the decoder's map yields last: the exact
	// path, opm's too, is not deterministic there, and nothing can agree
	// with it. Such data gives another answer within a few tries.
	for range 20 {
		if again := exactBlobs(data); !reflect.DeepEqual(again, want) {
			return
		}
	}
	if got := Blobs(data); !reflect.DeepEqual(got, want) && !exactGives(data, got) {
		t.Errorf("Blobs(%q) =\n%+v\nwant\n%+v", data, got, want)
	}
	// Under a review's cache, read as a whole load reads it: the same,
	// whether its documents were typed before or not.
	c := NewCache()
	for i := range 2 {
		if got := c.Blobs(data); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) && !exactGives(data, got) {
			t.Errorf("Cache.Blobs(%q), read %d, =\n%+v\nwant\n%+v", data, i+1, got, want)
		}
	}
	if !looksLikeJSON(data) {
		return
	}
	roots, spans, ok := parseFastJSONStream(data)
	if !ok {
		return
	}
	got, ok := fastBlobs(data, roots, spans)
	if !ok {
		return
	}
	if want := exactBlobs(data); !reflect.DeepEqual(got, want) && !exactGives(data, got) {
		t.Errorf("fastBlobs(%q) =\n%+v\nwant\n%+v", data, got, want)
	}
}

// exactGives says whether the exact decoder gives got for data in one of
// many tries. Where it is not deterministic (see sameBlobs) one answer can
// be rare enough that twenty tries agree on the other; the fast path
// giving the rare one is no defect, and an answer the exact decoder never
// gives still is.
func exactGives(data []byte, got []Blob) bool {
	for range 1000 {
		if reflect.DeepEqual(exactBlobs(data), got) {
			return true
		}
	}
	return false
}

// TestBlobsRealYAML: on the real catalogs of testdata, Blobs (the fast path
// where it reads a document) and the exact decoder give the same blobs.
func TestBlobsRealYAML(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "community-operators-prod", "catalogs")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		want := exactBlobs(data)
		if got := Blobs(data); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Blobs differs from the exact decoder (%d blobs, want %d)", p, len(got), len(want))
		}
		if got := NewCache().Blobs(data); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Cache.Blobs differs from the exact decoder (%d blobs, want %d)", p, len(got), len(want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no catalog file in testdata")
	}
}

// TestBlobsRemembered: a document read before, in another file and at
// another line, is the same blob at its own line, as an exact read of
// the file gives it.
func TestBlobsRemembered(t *testing.T) {
	first := "schema: olm.package\nname: remembered\n---\nschema: olm.channel\npackage: remembered\nname: stable\nentries:\n  - name: remembered.v1\n"
	second := "schema: olm.package\nname: other\n---\n" + first
	Blobs([]byte(first))
	got := Blobs([]byte(second))
	want := exactBlobs([]byte(second))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Blobs after a file of the same documents:\n got %+v\nwant %+v", got, want)
	}
	if len(got) != 3 || got[1].Line != 4 || got[2].Line != 7 {
		t.Errorf("lines %+v; want the documents at lines 4 and 7", got)
	}
}
