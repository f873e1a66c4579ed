package mutate

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	defaultOnce  sync.Once
	defaultCases []Case
)

// generated returns the cases of the testdata seeds with Options{Seed: 1},
// generated once for all tests.
func generated(t *testing.T) []Case {
	s := seeds(t)
	defaultOnce.Do(func() { defaultCases = Generate(s, Options{Seed: 1}) })
	return defaultCases
}

func seeds(t *testing.T) []Seed {
	t.Helper()
	s, err := SeedsFromFS(os.DirFS("../testdata/seeds"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(s) < 3 {
		t.Fatalf("want at least 3 seeds, got %d", len(s))
	}
	return s
}

func TestDeterministic(t *testing.T) {
	s := seeds(t)
	a := Generate(s, Options{Seed: 7, Combos: 10})
	b := Generate(s, Options{Seed: 7, Combos: 10})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs with the same seed differ")
	}
	c := generated(t)
	if reflect.DeepEqual(a, c) {
		t.Fatalf("a different seed gave the same cases")
	}
}

func TestEveryMutationIsExercised(t *testing.T) {
	cases := generated(t)
	hit := map[string]bool{}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Errorf("duplicate case name %s", c.Name)
		}
		names[c.Name] = true
		for _, m := range c.Mutations {
			hit[m] = true
		}
	}
	var missing []string
	for _, m := range Mutations() {
		if !hit[m] {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("mutations never applied to the seeds: %s", strings.Join(missing, ", "))
	}
	if len(cases) < 500 {
		t.Errorf("only %d cases from the testdata seeds", len(cases))
	}
}

func TestRenderKeepsOpaqueFiles(t *testing.T) {
	files := map[string]string{
		".indexignore": "*.md\n",
		"README.md":    "# hi\n\nprose\n",
		"c.yaml":       "\ufeffschema: olm.package\r\nname: foo\r\n",
		"d.json":       `{"schema":"olm.package","name":"bar"}` + "\n",
	}
	out := Render(Seed{Name: "x", Files: files})
	if out[".indexignore"] != files[".indexignore"] || out["README.md"] != files["README.md"] {
		t.Errorf("opaque files changed: %q", out)
	}
	if want := "---\nname: foo\nschema: olm.package\n"; out["c.yaml"] != want {
		t.Errorf("c.yaml = %q, want %q", out["c.yaml"], want)
	}
	if want := `{"name":"bar","schema":"olm.package"}` + "\n"; out["d.json"] != want {
		t.Errorf("d.json = %q, want %q", out["d.json"], want)
	}
}

func TestTextualMutations(t *testing.T) {
	cases := generated(t)
	want := map[string]string{
		"version:unquoted-float":    "version: 1.0\n",
		"yaml-bool-name:on":         ": on\n",
		"separator:--- foo":         "--- foo\n",
		"comment-only-doc:first":    "---\n# this document holds only a comment\n",
		"json-trailing-comma:first": ",}",
	}
	found := map[string]bool{}
	for _, c := range cases {
		if len(c.Mutations) != 1 {
			continue
		}
		w, ok := want[c.Mutations[0]]
		if !ok {
			continue
		}
		for _, content := range c.Files {
			if strings.Contains(content, w) {
				found[c.Mutations[0]] = true
			}
		}
	}
	for m := range want {
		if !found[m] {
			t.Errorf("no %s case contains %q", m, want[m])
		}
	}
}
