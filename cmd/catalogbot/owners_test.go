package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

const ownersBundle = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.0.0
spec:
  description: An operator with a description long enough to be recognised after a move.
  version: 1.0.0
`

// ownersRepo builds a catalog repository: main holds the OWNERS tree; pr
// adds mallory to operators/foo/OWNERS with a new bundle, then moves the
// old bundle out of operators/foo (whose owners are alice and bob, with
// no_parent_owners) into operators/bar (carol's). The work tree is left on
// main.
func ownersRepo(t *testing.T) *changetest.Repo {
	t.Helper()
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                             "approvers:\n  - root-admin\n",
		"OWNERS_ALIASES":                     "aliases:\n  foo-team:\n    - Alice\n    - bob\n",
		"operators/foo/OWNERS":               "approvers:\n  - foo-team\noptions:\n  no_parent_owners: true\n",
		"operators/foo/1.0.0/manifests.yaml": ownersBundle,
		"operators/bar/OWNERS":               "approvers:\n  - carol\n",
	})
	r.Branch("pr", base)
	r.Commit("add mallory and a bundle", map[string]string{
		"operators/foo/OWNERS":               "approvers:\n  - foo-team\n  - mallory\noptions:\n  no_parent_owners: true\n",
		"operators/foo/2.0.0/manifests.yaml": strings.ReplaceAll(ownersBundle, "1.0.0", "2.0.0"),
	})
	r.Move("operators/foo/1.0.0/manifests.yaml", "operators/bar/1.0.0/manifests.yaml")
	r.Commit("move the old bundle to bar", nil)
	r.Checkout("main")
	return r
}

// ownersCLI runs catalogbot in-process from dir, as main does.
func ownersCLI(t *testing.T, dir string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

func ownersGolden(t *testing.T, name string, got string) {
	t.Helper()
	checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "owners", name), []byte(got))
}

func TestOwnersExplain(t *testing.T) {
	r := ownersRepo(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"work tree", []string{"owners", "explain", "operators/foo/1.0.0/manifests.yaml", "operators/bar/", "operators/foo", ".", "docs/README.md"}, "explain.txt"},
		{"work tree json", []string{"owners", "explain", "-o", "json", "operators/foo/1.0.0/manifests.yaml", "operators/bar/ci.yaml"}, "explain.json"},
		// At pr, mallory is in operators/foo/OWNERS: explain reads what
		// it is told to, even though check never would.
		{"a commit", []string{"owners", "explain", "--rev", "pr", "--repo", r.Dir, "operators/foo/2.0.0/manifests.yaml"}, "explain-rev.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ownersCLI(t, r.Dir, tt.args...)
			if res.code != exitOK || res.stderr != "" {
				t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
			}
			ownersGolden(t, tt.golden, res.stdout)
		})
	}

	res := ownersCLI(t, r.Dir, "owners", "explain", "-o", "json", "operators/foo/1.0.0/manifests.yaml")
	var doc struct {
		Paths []struct {
			Path               string   `json:"path"`
			Approvers          []string `json:"approvers"`
			ApproverOwnersFile string   `json:"approverOwnersFile"`
			Reason             string   `json:"reason"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Paths[0]
	if p.Path != "operators/foo/1.0.0/manifests.yaml" || strings.Join(p.Approvers, ",") != "alice,bob" ||
		p.ApproverOwnersFile != "operators/foo/OWNERS" || p.Reason != "no_parent_owners" {
		t.Errorf("json path = %+v", p)
	}
}

func TestOwnersExplainBroken(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("broken", map[string]string{
		"OWNERS":               "approvers:\n  - root-admin\n",
		"operators/foo/OWNERS": "approvers: alice\n",
	})
	res := ownersCLI(t, r.Dir, "owners", "explain", "operators/foo/x")
	if res.code != exitInvalid {
		t.Errorf("exit %d, want %d", res.code, exitInvalid)
	}
	ownersGolden(t, "explain-broken.txt", res.stdout)
}

func TestOwnersCheck(t *testing.T) {
	r := ownersRepo(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		golden string
	}{
		// mallory's own edit to OWNERS counts for nothing, and the move
		// out of operators/foo needs foo's approvers and bar's.
		{"the author alone", []string{"--author", "mallory"}, exitInvalid, "check-author.txt"},
		{"the author alone, json", []string{"--author", "mallory", "-o", "json"}, exitInvalid, "check-author.json"},
		{"one side of the rename", []string{"--author", "mallory", "--approve", "alice"}, exitInvalid, ""},
		{"both sides", []string{"--author", "mallory", "--approve", "ALICE", "--approve", "@carol"}, exitOK, "check-approved.txt"},
		{"an approval of an older commit", []string{"--author", "mallory", "--approve", "alice@pr~1", "--approve", "carol"}, exitInvalid, "check-stale.txt"},
		{"sticky approvals", []string{"--author", "mallory", "--approve", "alice@pr~1", "--approve", "carol", "--sticky-approvals"}, exitOK, ""},
		{"an approval of the head by commit", []string{"--author", "mallory", "--approve", "alice@pr", "--approve", "carol@pr"}, exitOK, ""},
		{"a later cancel is not possible from flags, but a bot never counts", []string{"--author", "mallory", "--approve", "alice", "--approve", "carol", "--bot", "carol"}, exitInvalid, ""},
		{"self-approval", []string{"--author", "bob", "--approve", "carol"}, exitOK, ""},
		{"self-approval off", []string{"--author", "bob", "--approve", "carol", "--no-self-approval"}, exitInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"owners", "check", "--repo", r.Dir, "--base", "main", "--head", "pr", "--number", "7"}, tt.args...)
			res := ownersCLI(t, t.TempDir(), args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			if res.stderr != "" {
				t.Errorf("stderr = %q", res.stderr)
			}
			if tt.golden != "" {
				ownersGolden(t, tt.golden, res.stdout)
			}
		})
	}
}

// TestOwnersCheckPackages: a blob of bar written from foo's directory
// needs bar's approvers, and the text names the package, its home and
// whom it needs.
func TestOwnersCheckPackages(t *testing.T) {
	r := changetest.NewRepo(t)
	bar := strings.ReplaceAll(fbctest.Foo, "foo", "bar")
	base := r.Commit("base", map[string]string{
		"OWNERS":                 "approvers:\n  - root-admin\n",
		"lists/foo/OWNERS":       "approvers:\n  - alice\n",
		"lists/foo/catalog.yaml": fbctest.Foo,
		"lists/bar/OWNERS":       "approvers:\n  - bob\n",
		"lists/bar/catalog.yaml": bar,
	})
	r.Branch("pr", base)
	r.Commit("deprecate bar", map[string]string{
		"lists/foo/catalog.yaml": fbctest.Foo + "---\nschema: olm.deprecations\npackage: bar\nentries:\n  - reference:\n      schema: olm.package\n    message: gone\n",
	})
	r.Checkout("main")
	check := []string{"owners", "check", "--repo", r.Dir, "--base", "main", "--head", "pr", "--author", "alice", "--catalog-root", "lists/"}
	res := ownersCLI(t, t.TempDir(), check...)
	want := "package bar (home lists/bar/; blob 1 added in lists/foo/catalog.yaml): needs bob"
	if res.code != exitInvalid || !strings.Contains(res.stdout, want) {
		t.Errorf("exit %d, want %d with %q:\n%s%s", res.code, exitInvalid, want, res.stdout, res.stderr)
	}
	res = ownersCLI(t, t.TempDir(), append(check, "--approve", "bob")...)
	if res.code != exitOK {
		t.Errorf("with bob's approval: exit %d, want %d:\n%s%s", res.code, exitOK, res.stdout, res.stderr)
	}
}

func TestOwnersCheckJSON(t *testing.T) {
	r := ownersRepo(t)
	for _, approved := range []bool{false, true} {
		args := []string{"owners", "check", "--base", "main", "--head", "pr", "--author", "mallory", "-o", "json"}
		if approved {
			args = append(args, "--approve", "bob", "--approve", "root-admin")
		}
		res := ownersCLI(t, r.Dir, args...)
		var doc struct {
			Approved *bool `json:"approved"`
			Changed  []struct {
				Path, PreviousPath, Status string
			} `json:"changed"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
		if doc.Approved == nil || *doc.Approved != approved {
			t.Errorf("approved = %v, want %v", doc.Approved, approved)
		}
		if want := map[bool]int{false: exitInvalid, true: exitOK}[approved]; res.code != want {
			t.Errorf("exit %d, want %d", res.code, want)
		}
		if len(doc.Changed) != 3 {
			t.Errorf("changed = %+v, want the OWNERS edit, the new bundle and the rename", doc.Changed)
		}
	}
}

func TestOwnersUsageErrors(t *testing.T) {
	r := ownersRepo(t)
	check := []string{"owners", "check", "--repo", r.Dir, "--base", "main", "--head", "pr", "--author", "mallory"}
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"unknown subcommand", []string{"owners", "approve"}, exitError,
			`catalogbot: unknown command "approve" for "catalogbot owners"`},
		{"explain without a path", []string{"owners", "explain"}, exitError,
			"catalogbot: owners explain needs at least one PATH"},
		{"explain a path outside", []string{"owners", "explain", "../etc/passwd"}, exitError,
			`catalogbot: path "../etc/passwd" does not name a file inside the repository`},
		{"explain a missing directory", []string{"owners", "explain", "--repo", "missing", "x"}, exitError,
			"catalogbot: stat missing: no such file or directory"},
		{"explain an unknown commit", []string{"owners", "explain", "--rev", "nope", "x"}, exitError,
			`catalogbot: resolve revision "nope": reference not found`},
		{"explain a commit outside a repository", []string{"owners", "explain", "--repo", "/", "--rev", "main", "x"}, exitError,
			"catalogbot: open git repository /: repository does not exist"},
		{"bad output format", []string{"owners", "explain", "-o", "yaml", "x"}, exitError,
			`catalogbot: invalid argument "yaml" for "-o, --output" flag: unknown output format "yaml" (want text, json)`},
		{"check without --base", []string{"owners", "check", "--head", "pr", "--author", "x"}, exitError,
			"catalogbot: owners check needs --base"},
		{"check without --author", []string{"owners", "check", "--base", "main", "--head", "pr"}, exitError,
			"catalogbot: owners check needs --author"},
		{"check with arguments", append(check, "extra"), exitError,
			`catalogbot: owners check takes no arguments, got ["extra"]`},
		{"an approval without a login", append(check, "--approve", "@"), exitError,
			`catalogbot: invalid --approve "@": want LOGIN or LOGIN@REV`},
		{"an approval of an unknown commit", append(check, "--approve", "bob@nope"), exitError,
			`catalogbot: invalid --approve "bob@nope": resolve revision "nope": reference not found`},
		{"an unknown head", []string{"owners", "check", "--repo", r.Dir, "--base", "main", "--head", "nope", "--author", "x"}, exitError,
			`catalogbot: resolve revision "nope": reference not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ownersCLI(t, r.Dir, tt.args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d", res.code, tt.code)
			}
			if first, _, _ := strings.Cut(res.stderr, "\n"); first != tt.wantErr {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", res.stderr, tt.wantErr)
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q, want nothing", res.stdout)
			}
		})
	}
}

func TestOwnersHelp(t *testing.T) {
	res := ownersCLI(t, t.TempDir(), "owners")
	if res.code != exitOK || !strings.Contains(res.stdout, "explain") || !strings.Contains(res.stdout, "check") {
		t.Errorf("got %+v", res)
	}
}

// TestOwnersCIYAML: with --source ci.yaml the command line explains and
// checks ownership as a policy with owners.sources: [ci.yaml] has the
// check do, on the trimmed community-operators-prod of testdata: the
// explanation names the ci.yaml and its reviewers, and an edit to a
// ci.yaml on the head grants nothing.
func TestOwnersCIYAML(t *testing.T) {
	dir := filepath.Join(repoRoot, "testdata", "community-operators-prod")
	explain := []string{"owners", "explain", "--source", "ci.yaml", "--catalog-root", "catalogs/v4.19", "--catalog-root", "catalogs/v4.20",
		"catalogs/v4.19/kubevirt-wol/catalog.yaml", "operators/nfs-provisioner-operator/catalog-templates/basic.yaml", "catalogs/v4.18/kubevirt-wol/catalog.yaml"}
	res := ownersCLI(t, dir, explain...)
	if res.code != exitOK || res.stderr != "" {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	ownersGolden(t, "explain-ciyaml.txt", res.stdout)

	if res := ownersCLI(t, dir, "owners", "explain", "--source", "CODEOWNERS", "x"); res.code != exitError {
		t.Errorf("an unknown source: exit %d, want %d", res.code, exitError)
	}

	r := changetest.NewRepo(t)
	files, err := changetest.ReadFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := r.Commit("base", files)
	r.Branch("pr", base)
	const ci = "operators/kubevirt-wol/ci.yaml"
	r.Commit("take over kubevirt-wol", map[string]string{
		ci: strings.Replace(files[ci], "  - gpillon\n", "  - gpillon\n  - mallory\n", 1),
		"catalogs/v4.19/kubevirt-wol/catalog.yaml": strings.Replace(files["catalogs/v4.19/kubevirt-wol/catalog.yaml"],
			"schema: olm.package", "description: taken over\nschema: olm.package", 1),
	})
	r.Checkout("main")
	check := []string{"owners", "check", "--repo", r.Dir, "--base", "main", "--head", "pr", "--number", "7", "--author", "mallory",
		"--source", "ci.yaml", "--catalog-root", "catalogs/v4.19"}
	res = ownersCLI(t, t.TempDir(), check...)
	if res.code != exitInvalid || res.stderr != "" {
		t.Errorf("exit %d, want %d; stderr %q", res.code, exitInvalid, res.stderr)
	}
	ownersGolden(t, "check-ciyaml.txt", res.stdout)
	if res := ownersCLI(t, t.TempDir(), append(check, "--approve", "GPillon")...); res.code != exitOK {
		t.Errorf("with the reviewer's approval: exit %d, want %d:\n%s%s", res.code, exitOK, res.stdout, res.stderr)
	}
}
