package assemble

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// corpusDir is a real catalog repository at a commit that assembled its
// catalog.yaml with the OLM docs' yq + opm render script, so it holds the
// script's layout and opm's output.
const corpusDir = "/work/shared/corpus/kubedoop-catalog/at-ccc1337"

// TestCorpusLayout serves the catalog the real repository rendered as a
// catalog image, assembles the repository's own catalog.yaml (pointed at
// the loopback registry) and expects the repository's tree, byte for byte.
func TestCorpusLayout(t *testing.T) {
	yamlData, err := os.ReadFile(filepath.Join(corpusDir, "catalog.yaml"))
	if err != nil {
		t.Skipf("real catalog corpus not available: %v", err)
	}
	reg := newTestRegistry(t, 0)
	f, findings := parseLoose(strings.ReplaceAll(string(yamlData), "quay.io/", reg.host+"/"))
	if len(findings) > 0 {
		t.Fatalf("catalog.yaml: %v", findings)
	}
	want := map[string]string{}
	for _, ref := range f.References {
		p := filepath.Join(corpusDir, f.Name, ref.Name, IndexFile)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Join(f.Name, ref.Name, IndexFile)] = string(data)
		want[filepath.Join(f.Name, ref.Name)+"/"] = ""
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "index.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		img := rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
			rendertest.Layer(t, append([]rendertest.Entry{{Name: "configs/"}}, rendertest.DirEntries(t, dir, "configs/"+ref.Name)...)...))
		registrytest.Push(t, ref.Image, img)
	}
	want["./"], want[f.Name+"/"] = "", ""

	out := filepath.Join(t.TempDir(), "out")
	if _, err := newAssembler(t, Options{}).Assemble(context.Background(), f, out); err != nil {
		t.Fatal(err)
	}
	sameTree(t, tree(t, out), want)
}
