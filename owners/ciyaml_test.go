package owners_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zstd"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// readCorpusArchive unpacks the snapshot of community-operators-prod (see
// shared/corpus) into memory, paths relative to the repository's root.
func readCorpusArchive(t testing.TB) fstest.MapFS {
	t.Helper()
	archive := filepath.Join(sharedCorpus(t), "community-operators-prod.tar.zst")
	f, err := os.Open(archive)
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	fsys := fstest.MapFS{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, name, ok := strings.Cut(path.Clean(h.Name), "/")
		if !ok {
			continue
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// TestCIYAMLCorpus reads every ci.yaml of the community-operators-prod
// snapshot as the policy owners.sources: [ci.yaml] has it read: none may
// fail to parse, and every catalog file of every OCP version must be owned
// by exactly the reviewers its package's ci.yaml lists, as a plain YAML
// reading of the file gives them.
func TestCIYAMLCorpus(t *testing.T) {
	fsys := readCorpusArchive(t)
	var roots, catalogs, ciFiles []string
	for name := range fsys {
		switch {
		case path.Base(name) == owners.CIYAMLFile && strings.HasPrefix(name, owners.OperatorsDir+"/"):
			ciFiles = append(ciFiles, name)
		case strings.HasPrefix(name, "catalogs/") && path.Base(name) == "catalog.yaml":
			catalogs = append(catalogs, name)
			if root := path.Dir(path.Dir(name)); !slices.Contains(roots, root) {
				roots = append(roots, root)
			}
		}
	}
	slices.Sort(roots)
	slices.Sort(catalogs)
	if len(ciFiles) < 300 || len(catalogs) < 200 || len(roots) < 10 {
		t.Fatalf("the snapshot is not what it was: %d ci.yaml, %d catalogs, %d roots", len(ciFiles), len(catalogs), len(roots))
	}

	r, err := owners.Load(fsys, owners.LoadOptions{Sources: []string{owners.SourceCIYAML}, CatalogRoots: roots})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	for _, f := range r.Findings() {
		if f.Severity == checks.SeverityError {
			t.Errorf("error finding in a real ci.yaml: %s:%d: %s", f.File, f.Line, f.Message)
			continue
		}
		warnings = append(warnings, f.Rule+" "+f.File+": "+f.Message)
	}
	// The one defect of the snapshot: a GitHub App listed as a reviewer.
	if want := []string{`OW7 operators/attune/ci.yaml: reviewers: "attune-release-bot[bot]" is a bot; bots never approve`}; !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}

	// An independent reading: reviewers as a YAML document says, compared
	// as GitHub compares logins.
	reviewersOf := func(pkg string) []string {
		var doc struct {
			Reviewers []string `json:"reviewers"`
		}
		f := fsys[owners.OperatorsDir+"/"+pkg+"/"+owners.CIYAMLFile]
		if f == nil {
			return nil
		}
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		var out []string
		for _, l := range doc.Reviewers {
			out = append(out, owners.NormLogin(l))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	var files []change.File
	owned := 0
	for _, name := range catalogs {
		pkg := path.Base(path.Dir(name))
		want := reviewersOf(pkg)
		res := r.Resolve(name)
		if !slices.Equal(res.Approvers, want) {
			t.Errorf("%s: approvers %q, want the ci.yaml reviewers %q", name, res.Approvers, want)
		}
		if len(want) > 0 {
			owned++
			if file := owners.OperatorsDir + "/" + pkg + "/" + owners.CIYAMLFile; res.ApproverOwnersFile != file || res.CIYAML == nil || res.CIYAML.File != file {
				t.Errorf("%s: approved through %q (%+v), want %s", name, res.ApproverOwnersFile, res.CIYAML, file)
			}
		}
		files = append(files, change.File{Path: name, Status: change.Modified})
	}

	// One package's reviewer touching every catalog approves their own
	// package's files and nobody else's.
	author := reviewersOf("victoriametrics-operator")[0]
	st := r.Evaluate(owners.Input{Change: &change.Change{Number: 1, Author: author, HeadSHA: "h", Files: files}})
	if st.Approved {
		t.Fatal("a change to every package is approved by one package's reviewer")
	}
	for _, req := range st.Required {
		mine := req.File == "operators/victoriametrics-operator/ci.yaml"
		if req.Approved != mine {
			t.Errorf("%s: approved %v by %q", req.File, req.Approved, req.ApprovedBy)
		}
	}
	t.Logf("%d ci.yaml files, %d catalog files in %d OCP catalogs, %d of them owned by ci.yaml reviewers; %d required files",
		len(ciFiles), len(catalogs), len(roots), owned, len(st.Required))
}

// BenchmarkCIYAMLCorpus loads every ci.yaml of the community-operators-prod
// snapshot and evaluates a change to every catalog file of every OCP
// version: the work ci.yaml adds to one pull request check.
func BenchmarkCIYAMLCorpus(b *testing.B) {
	fsys := readCorpusArchive(b)
	var roots []string
	var files []change.File
	for name := range fsys {
		if strings.HasPrefix(name, "catalogs/") && path.Base(name) == "catalog.yaml" {
			files = append(files, change.File{Path: name, Status: change.Modified})
			if root := path.Dir(path.Dir(name)); !slices.Contains(roots, root) {
				roots = append(roots, root)
			}
		}
	}
	c := &change.Change{Number: 1, Author: "someone", HeadSHA: "h", Files: files}
	opts := owners.LoadOptions{Sources: []string{owners.SourceOwners, owners.SourceCIYAML}, CatalogRoots: roots}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := owners.Load(fsys, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	r, err := owners.Load(fsys, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("evaluate", func(b *testing.B) {
		for b.Loop() {
			if st := r.Evaluate(owners.Input{Change: c}); st.Approved {
				b.Fatal("approved")
			}
		}
	})
}
