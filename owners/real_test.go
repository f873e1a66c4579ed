package owners_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/owners"
)

// TestRealSamples explains paths in the real samples under testdata/real
// (see its README) and pins the output.
func TestRealSamples(t *testing.T) {
	tests := []struct {
		tree  string
		paths []string
		// warnings are the expected findings, "RULE file:line"; no sample
		// has an error.
		warnings []string
	}{
		{
			tree: "kubernetes-community",
			paths: []string{
				"sig-apps/README.md",
				"sig-apps/charter.md",
				"sig-apps/annual-report-2024.md",
				"archive/sig-pm/README.md",
				"OWNERS",
			},
			warnings: []string{
				"OW7 OWNERS:28",
				"OW7 archive/sig-pm/OWNERS:6",
				"OW7 archive/sig-pm/OWNERS:4",
			},
		},
		{
			tree:     "operator-controller",
			paths:    []string{"docs/draft/design.md", "docs/index.md", ".bingo/Variables.mk", "internal/x.go"},
			warnings: []string{"OW7 .bingo/OWNERS:2"},
		},
		{
			tree:  "cool-catalog",
			paths: []string{"catalog/etcd/catalog.yaml", "catalog/example-operator/OWNERS", "catalog/README.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			r, err := owners.Load(os.DirFS(filepath.Join("testdata", "real", tt.tree)), owners.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Findings() {
				if f.Severity == checks.SeverityError {
					t.Errorf("error finding in a real tree: %+v", f)
				}
				got = append(got, fmt.Sprintf("%s %s:%d", f.Rule, f.File, f.Line))
			}
			if !slices.Equal(got, tt.warnings) {
				t.Errorf("findings %q, want %q", got, tt.warnings)
			}
			var out bytes.Buffer
			checks.WriteText(&out, r.Findings(), "")
			for _, p := range tt.paths {
				out.WriteString(r.Resolve(p).Explain())
			}
			checkstest.Golden(t, filepath.Join("testdata", "real", tt.tree+".golden"), out.Bytes())
		})
	}
}

// sharedCorpus returns the directory of the real trees beside the project,
// skipping the test when it is absent (a clone of the project alone).
func sharedCorpus(t testing.TB) string {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: the shared corpus is not at %s (it sits beside the project in the development setup): %v", dir, err)
	}
	return dir
}

// TestSharedCorpus loads the whole real trees: every OWNERS file must parse
// (their defects are warnings), and every file of the tree must explain and
// take part in an approval computation without trouble.
func TestSharedCorpus(t *testing.T) {
	corpus := sharedCorpus(t)
	tests := []struct {
		tree string
		// defects are messages the engine must report as warnings.
		defects []string
	}{
		{"owners/operator-controller", []string{`"ci-approvers" looks like an alias`}},
		{"owners/kubernetes-community", []string{`"sig-pm-leads" looks like an alias`, `"kubernetes/steering-committee" names a GitHub team`}},
		{"cool-catalog/at-390b4f2", nil},
		{"cool-catalog/at-d33e0f2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			fsys := os.DirFS(filepath.Join(corpus, filepath.FromSlash(tt.tree)))
			r, err := owners.Load(fsys, owners.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var messages []string
			for _, f := range r.Findings() {
				if f.Severity == checks.SeverityError {
					t.Errorf("error finding: %s:%d: %s", f.File, f.Line, f.Message)
				}
				messages = append(messages, f.Message)
			}
			for _, d := range tt.defects {
				if !slices.ContainsFunc(messages, func(m string) bool { return strings.Contains(m, d) }) {
					t.Errorf("no warning containing %q in %q", d, messages)
				}
			}
			var files []change.File
			err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files = append(files, change.File{Path: p, Status: change.Modified})
				res := r.Resolve(p)
				if res.Blocked != "" {
					t.Errorf("%s: blocked: %s", p, res.Blocked)
				}
				if !strings.HasPrefix(res.Explain(), p+"\n") {
					t.Errorf("%s: explanation does not start with the path", p)
				}
				// A directory's OWNERS file is owned by its approvers.
				if path.Base(p) == "OWNERS" && len(res.Approvers) > 0 && res.ApproverOwnersFile != p && res.Reason != owners.ReasonNoParentOwners {
					if own := r.Resolve(path.Dir(p) + "/x"); !slices.Equal(own.Approvers, res.Approvers) {
						t.Errorf("%s: approvers %v differ from its siblings' %v", p, res.Approvers, own.Approvers)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			st := r.Evaluate(owners.Input{Change: &change.Change{Number: 1, Author: "someone", HeadSHA: "h", Files: files}})
			if st.Approved || len(st.Files) != len(files) {
				t.Errorf("an unapproved change of %d files: approved %v, %d paths", len(files), st.Approved, len(st.Files))
			}
			t.Logf("%d OWNERS files, %d findings, %d files; %d required OWNERS files, suggested %v",
				len(r.Files()), len(r.Findings()), len(files), len(st.Required), st.Suggested)
		})
	}
}
