package catalogyaml_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/checkstest"
)

// render prints what Parse made of a file, then its findings, so that one
// golden file pins both.
func render(f *catalogyaml.File, findings []checks.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name %q (line %d)\nrepo %q (line %d)\ntag %q (line %d)\n", f.Name, f.NameLine, f.Repo, f.RepoLine, f.Tag, f.TagLine)
	for _, r := range f.References {
		ref := "<invalid>"
		if dir, ok := strings.CutPrefix(r.Image, "oci:"); ok && dir != "" && dir[0] != ':' {
			ref = "<OCI layout>"
		}
		if r.Ref != nil {
			ref = r.Ref.Name()
		}
		fmt.Fprintf(&b, "reference %q at line %d: image %q (line %d) -> %s\n", r.Name, r.Line, r.Image, r.ImageLine, ref)
	}
	b.WriteString("--- findings\n")
	for _, f := range findings {
		fmt.Fprintf(&b, "[%s] ", f.Rule)
		checks.WriteText(&b, []checks.Finding{f}, "")
	}
	return b.String()
}

// TestParse runs every testdata/cases/*.yaml and compares with the .golden
// file beside it (go test -update rewrites them).
func TestParse(t *testing.T) {
	cases, err := filepath.Glob("testdata/cases/*.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	// Files that must parse without findings; every other case is there
	// for its findings.
	clean := []string{"aliases", "minimal", "oci-layout", "valid"}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, findings := catalogyaml.Parse(filepath.ToSlash(path), data)
			if f == nil {
				t.Fatal("Parse returned no file")
			}
			if got, want := len(findings) == 0, slices.Contains(clean, name); got != want {
				t.Errorf("clean = %v, want %v; findings: %v", got, want, findings)
			}
			for _, fd := range findings {
				if fd.File != filepath.ToSlash(path) || fd.Severity != checks.SeverityError || fd.Message == "" {
					t.Errorf("finding %+v: want an error naming the file", fd)
				}
				if fd.Line == 0 && name != "empty" {
					t.Errorf("finding %+v has no line", fd)
				}
			}
			checkstest.Golden(t, strings.TrimSuffix(path, ".yaml")+".golden", []byte(render(f, findings)))
		})
	}
}

// TestRulesDescribed keeps the rule catalogue in step with the rules used.
func TestRulesDescribed(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range catalogyaml.Rules {
		ids[r.ID] = true
	}
	for _, id := range []string{catalogyaml.RuleSyntax, catalogyaml.RuleUnknownField, catalogyaml.RuleFieldType,
		catalogyaml.RuleMissingField, catalogyaml.RuleName, catalogyaml.RuleDuplicate, catalogyaml.RuleImage} {
		if !ids[id] {
			t.Errorf("rule %s is not in Rules", id)
		}
	}
}

// corpusDir holds real reference lists from a public catalog repository,
// in the shared data beside the repository.
const corpusDir = "../../../shared/corpus/kubedoop-catalog"

// TestCorpus parses the real catalog.yaml files. They are all clean but
// one: the list at head names zookeeper-operator twice.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	var files []string
	for _, pattern := range []string{"*/catalog.yaml", "*/catalog-template.yaml"} {
		m, err := filepath.Glob(filepath.Join(corpusDir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found %d reference lists in the corpus, want at least 3: %v", len(files), files)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(corpusDir, path)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, findings := catalogyaml.Parse(rel, data)
			if len(f.References) == 0 {
				t.Errorf("no references read")
			}
			for _, r := range f.References {
				if r.Ref == nil || r.Line == 0 || r.ImageLine != r.Line+1 {
					t.Errorf("reference %+v: want a parsed image on the line after the entry", r)
				}
			}
			if rel != "head/catalog-template.yaml" {
				if len(findings) != 0 {
					t.Errorf("findings in a clean file: %v", findings)
				}
				return
			}
			second := secondLine(t, data, "- name: zookeeper-operator")
			want := []checks.Finding{{Rule: catalogyaml.RuleDuplicate, Severity: checks.SeverityError, File: rel, Line: second,
				Message: fmt.Sprintf(`duplicate reference name "zookeeper-operator", first used at line %d`, firstLine(t, data, "- name: zookeeper-operator"))}}
			if !slices.Equal(findings, want) {
				t.Errorf("findings %+v, want %+v", findings, want)
			}
		})
	}
}

func firstLine(t *testing.T, data []byte, needle string) int {
	t.Helper()
	return nthLine(t, data, needle, 1)
}

func secondLine(t *testing.T, data []byte, needle string) int {
	t.Helper()
	return nthLine(t, data, needle, 2)
}

func nthLine(t *testing.T, data []byte, needle string, n int) int {
	t.Helper()
	for i, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == needle {
			if n--; n == 0 {
				return i + 1
			}
		}
	}
	t.Fatalf("%q does not occur often enough", needle)
	return 0
}

func FuzzParse(f *testing.F) {
	cases, _ := filepath.Glob("testdata/cases/*.yaml")
	for _, c := range cases {
		data, err := os.ReadFile(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, findings := catalogyaml.Parse("catalog.yaml", data)
		if file == nil {
			t.Fatal("no file")
		}
		// A clean file has only references that can be used as they are.
		if len(findings) == 0 {
			seen := map[string]bool{}
			for _, r := range file.References {
				// An OCI layout reference has no registry reference.
				usable := r.Ref != nil || (strings.HasPrefix(r.Image, "oci:") && len(r.Image) > len("oci:"))
				if !usable || r.Name == "" || strings.ContainsAny(r.Name, `/\.`) || seen[r.Name] {
					t.Fatalf("clean file with unusable reference %+v", r)
				}
				seen[r.Name] = true
			}
		}
	})
}
