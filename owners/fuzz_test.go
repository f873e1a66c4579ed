package owners_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// FuzzParseOwners feeds arbitrary bytes to both parsers and to a load and
// resolve of a tree made from them. Nothing may panic, a file must be nil
// exactly when an error is reported, and every finding must name its file.
// Inputs are bounded so each run stays fast.
func FuzzParseOwners(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "cases", "*", "base", "OWNERS*"))
	more, _ := filepath.Glob(filepath.Join("testdata", "real", "*", "OWNERS*"))
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("filters:\n  '(?i)^x': {approvers: [&a a, *a]}\noptions: {no_parent_owners: on}\n"))
	f.Add([]byte("aliases: {a: [b], b: c}\n"))
	f.Add([]byte("<<: {approvers: [x]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			t.Skip()
		}
		file, findings := owners.ParseOwners("OWNERS", data)
		checkFindings(t, findings, file == nil)
		aliases, findings := owners.ParseAliases("OWNERS_ALIASES", data)
		checkFindings(t, findings, aliases == nil)

		fsys := fstest.MapFS{
			"OWNERS":         {Data: data},
			"OWNERS_ALIASES": {Data: data},
			"a/b/OWNERS":     {Data: data},
		}
		r, err := owners.Load(fsys, owners.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The input doubles as a path, as a caller might pass anything.
		for _, p := range []string{"a/b/c", "a/b/OWNERS", "x", string(data[:min(len(data), 200)])} {
			res := r.Resolve(p)
			_ = res.Explain()
		}
		st := r.Evaluate(owners.Input{Change: &change.Change{Author: "a", HeadSHA: "h", Files: []change.File{{Path: "a/b/c", Status: change.Modified}}}})
		_ = st.Explain()
		if st.Approved && (file == nil || aliases == nil) {
			t.Fatal("approved although an OWNERS file does not parse")
		}
		_, _ = owners.DiffReferenceList("catalog.yaml", data, []byte("name: x\nreferences: []\n"))
	})
}

func checkFindings(t *testing.T, findings []checks.Finding, unusable bool) {
	t.Helper()
	hasError := false
	for _, f := range findings {
		if f.File == "" || f.Message == "" || f.Rule == "" {
			t.Fatalf("finding without file, rule or message: %+v", f)
		}
		hasError = hasError || f.Severity == checks.SeverityError
	}
	if hasError != unusable {
		t.Fatalf("errors reported = %v but result unusable = %v: %v", hasError, unusable, findings)
	}
}

// FuzzParseCIYAML does the same for a package's ci.yaml: nothing panics,
// the parse is nil exactly when an error is reported, and a package whose
// ci.yaml does not parse is never approved.
func FuzzParseCIYAML(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "cases", "ciyaml-*", "base", "operators", "*", "ci.yaml"))
	for _, p := range seeds {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("reviewers: [&a a, *a]\n<<: {reviewers: [x]}\n"))
	f.Add([]byte("reviewers: !!str alice\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			t.Skip()
		}
		c, findings := owners.ParseCIYAML("operators/p/ci.yaml", data)
		checkFindings(t, findings, c == nil)
		r, err := owners.Load(fstest.MapFS{"operators/p/ci.yaml": {Data: data}},
			owners.LoadOptions{Sources: []string{owners.SourceCIYAML}, CatalogRoots: []string{"catalog"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"operators/p/x", "catalog/p/catalog.yaml"} {
			_ = r.Resolve(p).Explain()
		}
		author := "a"
		if c != nil && len(c.Reviewers) > 0 {
			author = c.Reviewers[0]
		}
		st := r.Evaluate(owners.Input{Change: &change.Change{Author: author, HeadSHA: "h", Files: []change.File{{Path: "catalog/p/catalog.yaml", Status: change.Modified}}}})
		_ = st.Explain()
		if st.Approved && c == nil {
			t.Fatal("approved although the package's ci.yaml does not parse")
		}
	})
}
