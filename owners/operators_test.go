package owners_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/owners"
)

// operatorsCases are the case trees with packages' ci.yaml files: broken
// ones of every kind, and ones beside OWNERS files and aliases.
var operatorsCases = []string{"ciyaml-and-owners", "ciyaml-parse-errors"}

// gitTree commits files to a new repository and returns its tree.
func gitTree(t *testing.T, files map[string]string) fs.FS {
	t.Helper()
	r := changetest.NewRepo(t)
	c := r.Commit("base", files)
	fsys, err := change.TreeFS(r.Git, c)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// ownersView is what a check takes from a Repo of ci.yaml files: the
// findings, and who approves each package's directories.
type ownersView struct {
	Findings    any                  `json:"findings"`
	Resolutions []*owners.Resolution `json:"resolutions"`
}

func viewOf(t *testing.T, fsys fs.FS, opts owners.LoadOptions) ownersView {
	t.Helper()
	repo, err := owners.Load(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	v := ownersView{Findings: repo.Findings()}
	entries, err := fs.ReadDir(fsys, owners.OperatorsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, dir := range []string{owners.OperatorsDir, "catalog"} {
			v.Resolutions = append(v.Resolutions, repo.ResolveDir(dir+"/"+e.Name()))
		}
	}
	return v
}

// TestOperatorsKept: Load gives the same findings and approvers whether
// it reads the packages' ci.yaml files itself, takes them as
// ReadOperators read them, or takes them back from their JSON record
// (the form they are kept in on disk); a record of another tree is not
// taken. The golden file holds what all three say.
func TestOperatorsKept(t *testing.T) {
	var golden bytes.Buffer
	trees := map[string]fs.FS{}
	for _, name := range operatorsCases {
		files, err := changetest.ReadFiles(filepath.Join("testdata", "cases", name, "base"))
		if err != nil {
			t.Fatal(err)
		}
		trees[name] = gitTree(t, files)
	}
	for i, name := range operatorsCases {
		fsys := trees[name]
		opts := owners.LoadOptions{Sources: []string{owners.SourceOwners, owners.SourceCIYAML}, CatalogRoots: []string{"catalog"}}
		direct := viewOf(t, fsys, opts)

		read, err := owners.ReadOperators(fsys, nil)
		if err != nil {
			t.Fatal(err)
		}
		if read.Tree == "" {
			t.Fatalf("%s: a git tree without links gives no tree id to keep its ci.yaml files by", name)
		}
		data, err := json.Marshal(read)
		if err != nil {
			t.Fatal(err)
		}
		var back owners.Operators
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		other, err := owners.ReadOperators(trees[operatorsCases[(i+1)%len(operatorsCases)]], nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			what string
			ops  *owners.Operators
		}{{"read", read}, {"record", &back}, {"another tree's", other}} {
			o := opts
			o.Operators = tc.ops
			if got := viewOf(t, fsys, o); !reflect.DeepEqual(got, direct) {
				t.Errorf("%s: with the %s ci.yaml files Load says\n%s\nwithout\n%s", name, tc.what, jsonOf(t, got), jsonOf(t, direct))
			}
		}
		golden.WriteString("# " + name + "\n" + jsonOf(t, direct) + "\n")
	}
	checkstest.Golden(t, filepath.Join("testdata", "operators", "kept.golden"), golden.Bytes())
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOperatorsLinks: what a tree id does not decide is never kept by it.
// A ci.yaml that is a symbolic link reads its target, which may lie
// outside operators/, and an operators directory that is a link is the
// target's; ReadOperators reads them (Load's findings are as before) but
// names no tree to keep them by.
func TestOperatorsLinks(t *testing.T) {
	for _, tc := range []struct {
		name, link, target string
	}{
		{"ci.yaml", "operators/foo/ci.yaml", "../../shared/ci.yaml"},
		{"operators", "operators", "packages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			files := map[string]string{
				"shared/ci.yaml":       "reviewers: [alice]\n",
				"packages/foo/ci.yaml": "reviewers: [bob]\n",
			}
			if tc.link != owners.OperatorsDir {
				files["operators/bar/ci.yaml"] = "reviewers: [carol]\n"
				files["operators/foo/README.md"] = "foo\n"
			}
			r.Commit("files", files)
			if err := os.Symlink(tc.target, filepath.Join(r.Dir, filepath.FromSlash(tc.link))); err != nil {
				t.Fatal(err)
			}
			wt, err := r.Git.Worktree()
			if err != nil {
				t.Fatal(err)
			}
			if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
				t.Fatal(err)
			}
			c := r.Commit("link", nil)
			fsys, err := change.TreeFS(r.Git, c)
			if err != nil {
				t.Fatal(err)
			}
			info, err := fs.Lstat(fsys, tc.link)
			if err != nil || info.Mode()&fs.ModeSymlink == 0 {
				t.Fatalf("%s is not a link in the tree: %v %v", tc.link, info, err)
			}
			read, err := owners.ReadOperators(fsys, nil)
			if err != nil {
				t.Fatal(err)
			}
			if read.Tree != "" || owners.OperatorsTree(fsys) != "" && tc.link == owners.OperatorsDir {
				t.Errorf("read through a link, kept by tree %q", read.Tree)
			}
			var reviewers []string
			for _, f := range read.Files {
				reviewers = append(reviewers, f.Package+"="+strings.Join(f.CI.Reviewers, ","))
			}
			if want := map[string][]string{"ci.yaml": {"bar=carol", "foo=alice"}, "operators": {"foo=bob"}}[tc.name]; !slices.Equal(reviewers, want) {
				t.Errorf("reviewers %q, want %q", reviewers, want)
			}
		})
	}
}

// TestOperatorsRecordRefused: a record that cannot be one Operators wrote
// is an error, never a ci.yaml that says something else.
func TestOperatorsRecordRefused(t *testing.T) {
	for _, rec := range []string{
		`{"tree":"x","files":[{"path":"operators/a/ci.yaml","package":"b"}]}`,
		`{"tree":"x","files":[{"path":"operators/a/ci.yaml","package":"a","reviewers":["alice"]}]}`,
		`{"tree":"x","files":[{"path":"operators/a/ci.yaml","package":"a","broken":true,"reviewers":["alice"],"lines":[1]}]}`,
		`{"tree":"x","files":[{"path":"operators/a/b/ci.yaml","package":"a/b"}]}`,
		`{"tree":"x","files":[{"path":"operators//ci.yaml","package":""}]}`,
	} {
		var ops owners.Operators
		if err := json.Unmarshal([]byte(rec), &ops); err == nil {
			t.Errorf("record %s read as %+v", rec, ops)
		}
	}
}

// TestOperatorsAlso: a reader given each file in the same pass changes
// nothing of what Load is given, and gets every file decoded, one too
// large for a ci.yaml (which the owners parser refuses undecoded)
// included.
func TestOperatorsAlso(t *testing.T) {
	fsys := gitTree(t, map[string]string{
		"operators/big/ci.yaml":   "reviewers: [alice]\n#" + strings.Repeat("x", 1<<20) + "\n",
		"operators/small/ci.yaml": "reviewers: [bob]\nfbc: {enabled: true}\n",
		"operators/none/README":   "no ci.yaml\n",
	})
	alone, err := owners.ReadOperators(fsys, nil)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	with, err := owners.ReadOperators(fsys, func(pkg, file string, s *yamlnode.Stream) {
		if s == nil || s.Err != nil || len(s.Doc.Content) != 1 {
			t.Errorf("%s: given %+v", file, s)
			return
		}
		seen = append(seen, pkg+"="+s.Doc.Content[0].Content[0].Value)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone, with) {
		t.Errorf("with a reader beside it:\n%s\nalone:\n%s", jsonOf(t, with), jsonOf(t, alone))
	}
	if want := []string{"big=reviewers", "small=reviewers"}; !slices.Equal(seen, want) {
		t.Errorf("the reader saw %q, want %q", seen, want)
	}
	if len(alone.Files) != 2 || alone.Files[0].CI != nil || len(alone.Files[0].Findings) != 1 || !strings.Contains(alone.Files[0].Findings[0].Message, "more than the 1048576") {
		t.Errorf("the large ci.yaml read as %s", jsonOf(t, alone.Files))
	}
}
