package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"

	"sigs.k8s.io/yaml"
)

// sameResult validates fsys with and without the fast path and fails if the
// two disagree in anything: verdict, opm message, findings or counts.
func sameResult(t testing.TB, fsys fstest.MapFS) {
	t.Helper()
	fast, err := Validate(context.Background(), fsys, Options{Images: true})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := Validate(context.Background(), fsys, Options{Images: true, exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if fast.fastDocs == 0 {
		// Both runs took the exact path, which is not always deterministic:
		// a YAML flow mapping whose keys collide once converted to JSON
		// ({0: a, "0": b}) keeps either value, at random, in
		// sigs.k8s.io/yaml and so in opm. There is nothing to compare.
		return
	}
	for i := 0; i < 10 && !equalResults(fast, exact); i++ {
		if exact, err = Validate(context.Background(), fsys, Options{Images: true, exact: true}); err != nil {
			t.Fatal(err)
		}
	}
	if !equalResults(fast, exact) {
		f, _ := json.MarshalIndent(fast, "", "  ")
		e, _ := json.MarshalIndent(exact, "", "  ")
		t.Fatalf("fast path differs from exact path\nfast:\n%s\nexact:\n%s", f, e)
	}
	sameCached(t, fsys)
}

// sameCached validates fsys under a review's cache, where files are
// decoded whole to serve the whole loads too, and fails if the result
// differs from a lean validation's.
func sameCached(t testing.TB, fsys fstest.MapFS) {
	t.Helper()
	lean, err := Validate(context.Background(), fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cached, err := Validate(WithCache(context.Background(), NewCache()), fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lean.fastDocs == 0 {
		return // the exact path, not always deterministic (above)
	}
	if !equalResults(lean, cached) || !reflect.DeepEqual(lean.PackagePlaces, cached.PackagePlaces) {
		l, _ := json.MarshalIndent(lean, "", "  ")
		c, _ := json.MarshalIndent(cached, "", "  ")
		t.Fatalf("a validation under a cache differs from a lean one\nlean:\n%s\ncached:\n%s", l, c)
	}
}

// sameWhole loads fsys whole (as LoadPlacedWhole and LoadConfig do) with
// and without the fast path and fails if any file's blobs, records or
// errors differ; it returns the documents the fast path took.
func sameWhole(t testing.TB, fsys fstest.MapFS) int {
	t.Helper()
	fast, err := load(context.Background(), fsys, Options{full: true})
	if err != nil {
		t.Fatal(err)
	}
	took := 0
	for _, f := range fast.files {
		took += f.fastDocs
	}
	if took == 0 {
		// Nothing to compare, as in sameResult.
		return 0
	}
	var exact *catalog
	for i := 0; i < 10; i++ {
		if exact, err = load(context.Background(), fsys, Options{full: true, exact: true}); err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(wholeView(fast), wholeView(exact)) {
			return took
		}
	}
	f, _ := json.MarshalIndent(wholeView(fast), "", "  ")
	e, _ := json.MarshalIndent(wholeView(exact), "", "  ")
	t.Fatalf("whole load: fast path differs from exact path\nfast:\n%s\nexact:\n%s", f, e)
	return took
}

// wholeView is what a whole load yields, file by file, in a form that
// compares: the typed blobs, the records and the errors as text.
func wholeView(c *catalog) []any {
	var out []any
	for _, f := range c.files {
		var errs []string
		for _, e := range f.errs {
			errs = append(errs, fmt.Sprintf("%s:%d [%d,%d) %s: %v", e.File, e.Line, e.Start, e.End, e.rule, e.err))
		}
		var bundles []string
		for _, b := range f.bundles {
			// The property error by its text, not its address.
			perr := fmt.Sprint(b.propErr)
			b.propErr = nil
			bundles = append(bundles, fmt.Sprintf("%+v %s", b, perr))
		}
		out = append(out, map[string]any{"path": f.path, "config": f.config, "errs": errs,
			"packages": fmt.Sprintf("%+v", f.packages), "channels": fmt.Sprintf("%+v", f.channels),
			"bundles": bundles, "deps": fmt.Sprintf("%+v", f.deps), "others": f.others, "images": f.images})
	}
	return out
}

func equalResults(a, b *Result) bool {
	return a.OPMMessage == b.OPMMessage && a.Stats == b.Stats &&
		reflect.DeepEqual(a.Findings, b.Findings) && reflect.DeepEqual(a.Images, b.Images)
}

func TestFastPathGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/opm-validate-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name  string            `json:"name"`
			Files map[string]string `json:"files"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cases {
		fsys := fstest.MapFS{}
		for name, content := range c.Files {
			fsys[name] = &fstest.MapFile{Data: []byte(content)}
		}
		t.Run(c.Name, func(t *testing.T) {
			sameResult(t, fsys)
			sameWhole(t, fsys)
		})
	}
}

// TestFastPathCorpus compares the two paths file by file on the real
// community-operators catalogs, when the shared corpus is present.
func TestFastPathCorpus(t *testing.T) {
	files := corpusFiles(t)
	var docs, fastDocs, wholeDocs, jsonWholeDocs int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Validate(context.Background(), fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: data}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := res.Stats
		docs += st.Packages + st.Channels + st.Bundles + st.Deprecations + st.Others
		fastDocs += res.fastDocs
		sameResult(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: data}})
		wholeDocs += sameWhole(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: data}})
		asJSON := fstest.MapFS{"catalog.json": &fstest.MapFile{Data: yamlToJSONStream(t, data)}}
		sameResult(t, asJSON)
		jsonWholeDocs += sameWhole(t, asJSON)
	}
	// The comparison only means something if the fast path is taken: on
	// real catalogs it should decode nearly every document.
	if fastDocs*100 < docs*99 {
		t.Errorf("fast path took %d of %d corpus documents, want at least 99%%", fastDocs, docs)
	}
	t.Logf("fast path took %d of %d corpus documents", fastDocs, docs)
	// A whole load (the OLM v1 readiness, the storefront cards, the
	// release guard) takes it as often.
	if wholeDocs*100 < docs*99 {
		t.Errorf("fast path took %d of %d corpus documents loaded whole, want at least 99%%", wholeDocs, docs)
	}
	t.Logf("fast path took %d of %d corpus documents loaded whole", wholeDocs, docs)
	// And the same documents as JSON streams, which the whole load reads
	// in place rather than through encoding/json's stream decoder.
	if jsonWholeDocs*100 < docs*99 {
		t.Errorf("fast path took %d of %d corpus documents in JSON loaded whole, want at least 99%%", jsonWholeDocs, docs)
	}
}

// corpusFiles unpacks the shared community-operators-prod corpus and
// lists its catalog files; it skips the test where the corpus or zstd is
// missing, and in -short mode.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("corpus comparison skipped in -short mode")
	}
	archive := filepath.Join("..", "..", "..", "shared", "corpus", "community-operators-prod.tar.zst")
	if _, err := os.Stat(archive); err != nil {
		t.Skipf("shared corpus not found at %s: skipping", archive)
	}
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("zstd not installed: cannot unpack the corpus")
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "--zstd", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpack: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "catalogs", "*", "*", "catalog.yaml"))
	if len(files) == 0 {
		t.Fatal("no catalog files in the corpus")
	}
	return files
}

// yamlToJSONStream rewrites a YAML catalog file as the JSON stream opm
// render writes, to run the same content through the JSON paths.
func yamlToJSONStream(t testing.TB, data []byte) []byte {
	var out bytes.Buffer
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(j) == "null" {
			continue
		}
		if err := json.Indent(&out, j, "", "    "); err != nil {
			t.Fatal(err)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// FuzzFastPath holds the fast path to the exact one on arbitrary documents.
func FuzzFastPath(f *testing.F) {
	seeds := []string{
		"schema: olm.package\nname: foo\ndefaultChannel: stable\n",
		"schema: olm.package\nname: foo\ndescription: |-\n  line one\n\n  line two\n    indented\nicon:\n  base64data: aGVsbG8=\n  mediatype: image/png\n",
		"schema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n  skips:\n  - foo.v0.0.1\n  skipRange: '>=0.0.1 <0.2.0'\n- name: foo.v0.1.0\n",
		"schema: olm.bundle\nname: foo.v0.1.0\npackage: foo\nimage: quay.io/foo/bar@sha256:0000000000000000000000000000000000000000000000000000000000000000\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 0.1.0\n- type: olm.gvk\n  value:\n    group: example.com\n    kind: Foo\n    version: v1\n- type: olm.bundle.object\n  value:\n    data: eyJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIn0=\n- type: olm.csv.metadata\n  value:\n    description: \"a long\n      folded \\\"description\\\" \\U0001F431\n\n      with a break\"\n    installModes:\n    - supported: true\n      type: OwnNamespace\n    - supported: false\n      type: AllNamespaces\n    displayName: 'It''s'\nrelatedImages:\n- name: x\n  image: quay.io/foo/x:v1\n",
		"schema: olm.deprecations\npackage: foo\nentries:\n- reference:\n    schema: olm.bundle\n    name: foo.v0.1.0\n  message: gone\n",
		"schema: custom\nname: foo\nvalue: plain multi\n  line scalar\nlist: []\nmap: {}\n",
		"---\nschema: olm.package\nname: on\n",
		"schema: olm.package\nname: 1.0\n",
		"schema: olm.package\nname: 0.1.0\n",
		"schema: olm.package\nname: foo\ndescription: |2\n\n    leading blank line\n  second\nicon: {}\n",
		"schema: olm.package\nname: foo\ndescription: |-2\n   a\n  b\n",
		"schema: olm.package\nname: \"esc\\x41\\u00e9\\\n  joined\"\n",
		// "---#" is a scalar to YAML, not a document start marker.
		"---#\nschema: olm.package\nname: foo\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameResult(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: []byte(doc)}})
	})
}

// FuzzFastPathJSON holds the JSON fast path to the exact stream decoder.
func FuzzFastPathJSON(f *testing.F) {
	seeds := []string{
		`{"schema":"olm.package","name":"foo","defaultChannel":"stable","icon":{"base64data":"aGk=","mediatype":"image/png"}}`,
		`{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1","skips":["a"],"skipRange":"<1.0.0"}]}` + "\n" +
			`{"schema":"olm.bundle","package":"foo","name":"foo.v1","image":"quay.io/a/b:v1","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true}],"description":"a \u00e9 \"q\" \\ /"}}]}`,
		`{"schema":"olm.package","name":"foo"}{"schema":"olm.package","name":"bar"}`,
		`{"schema":"olm.package","name":"foo","name":"bar"}`,
		`{"schema":"olm.package","Name":"foo"}`,
		`{"schema":"x","n":1.0}`,
		`{"schema":"x","s":"\ud83d\ude00"}`,
		"{\"schema\":\"olm.package\",}\n---\nschema: olm.channel\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameResult(t, fstest.MapFS{"catalog.json": &fstest.MapFile{Data: []byte(doc)}})
	})
}
