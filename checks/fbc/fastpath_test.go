package fbc

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"
)

// sameResult validates fsys with and without the fast path and fails if the
// two disagree in anything: verdict, opm message, findings or counts.
func sameResult(t testing.TB, fsys fstest.MapFS) {
	t.Helper()
	fast, err := Validate(context.Background(), fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exact, err := Validate(context.Background(), fsys, Options{exact: true})
	if err != nil {
		t.Fatal(err)
	}
	if fast.OPMMessage != exact.OPMMessage || fast.Stats != exact.Stats || !reflect.DeepEqual(fast.Findings, exact.Findings) {
		f, _ := json.MarshalIndent(fast, "", "  ")
		e, _ := json.MarshalIndent(exact, "", "  ")
		t.Fatalf("fast path differs from exact path\nfast:\n%s\nexact:\n%s", f, e)
	}
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
		t.Run(c.Name, func(t *testing.T) { sameResult(t, fsys) })
	}
}

// TestFastPathCorpus compares the two paths file by file on the real
// community-operators catalogs, when the shared corpus is present.
func TestFastPathCorpus(t *testing.T) {
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
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameResult(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: data}})
	}
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
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameResult(t, fstest.MapFS{"catalog.yaml": &fstest.MapFile{Data: []byte(doc)}})
	})
}
