package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

func TestPolicyValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := write("valid.yaml", "merge:\n  enabled: true\n  method: rebase\n  requiredChecks: [e2e]\n")
	invalid := write("invalid.yaml", "merge:\n  enabled: yes\n  methd: squash\npublish:\n  base: 7\n")
	syntax := write("syntax.yaml", "merge: [\n")
	cases := []struct {
		name   string
		args   []string
		code   int
		golden string // stdout golden, with dir replaced by DIR
		stderr string // a substring of stderr
	}{
		{name: "valid", args: []string{"policy", "validate", valid}, code: exitOK, golden: "valid.golden"},
		{name: "invalid", args: []string{"policy", "validate", invalid}, code: exitInvalid, golden: "invalid.golden"},
		{name: "syntax", args: []string{"policy", "validate", syntax}, code: exitInvalid, golden: "syntax.golden"},
		{name: "missing file", args: []string{"policy", "validate", filepath.Join(dir, "absent.yaml")}, code: exitError, stderr: "no such file"},
		{name: "directory", args: []string{"policy", "validate", dir}, code: exitError, stderr: "is a directory"},
		{name: "no file", args: []string{"policy", "validate"}, code: exitError, stderr: "exactly one file, got 0"},
		{name: "two files", args: []string{"policy", "validate", valid, invalid}, code: exitError, stderr: "exactly one file, got 2"},
		{name: "no subcommand", args: []string{"policy"}, code: exitError, stderr: "needs a subcommand"},
		{name: "unknown subcommand", args: []string{"policy", "check"}, code: exitError, stderr: `unknown command "check" for "catalogbot policy"`},
		{name: "unknown flag", args: []string{"policy", "validate", "--strict", valid}, code: exitError, stderr: "unknown flag"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, nil, c.args...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, c.code, r.stdout, r.stderr)
			}
			if c.golden != "" {
				if r.stderr != "" {
					t.Errorf("stderr: %s", r.stderr)
				}
				out := strings.ReplaceAll(r.stdout, dir+string(filepath.Separator), "DIR/")
				checkstest.Golden(t, filepath.Join("cmd", "catalogbot", "testdata", "policy", c.golden), []byte(out))
			}
			if !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("stderr %q does not contain %q", r.stderr, c.stderr)
			}
		})
	}
}

// TestPolicyShow: the effective policy of a real repository's files, each
// value with where it came from, the catalogs and their targets.
func TestPolicyShow(t *testing.T) {
	dir := filepath.Join("policy", "testdata", "conventions", "community-operators-prod")
	res := cli(t, nil, "policy", "show", "--repo", dir)
	if res.code != exitOK || res.stderr != "" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "policy", "show.golden"), []byte(res.stdout))

	js := cli(t, nil, "policy", "show", "--repo", dir, "-o", "json")
	checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "policy", "show.json.golden"), []byte(js.stdout))
	var out struct {
		Valid    bool
		Settings []struct{ Key, Value, Origin string }
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || !out.Valid || len(out.Settings) == 0 {
		t.Fatalf("json: %v %+v\n%s", err, out, js.stdout)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("conventions: jenkins\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := cli(t, nil, "policy", "show", "--repo", dir, "--policy", bad)
	if inv.code != exitInvalid || !strings.Contains(inv.stdout, bad+`:1: conventions is "jenkins"; want operator-pipelines (P6)`) {
		t.Errorf("an invalid policy: exit %d\n%s%s", inv.code, inv.stdout, inv.stderr)
	}
}

// TestOwnersExplainReadsPolicy: owners explain finds approvers where the
// repository's policy says, as check does: here ci.yaml reviewers and the
// maintainers of operator-pipelines' config.yaml, with no flag given.
func TestOwnersExplainReadsPolicy(t *testing.T) {
	dir := filepath.Join("policy", "testdata", "conventions", "community-operators-prod")
	res := cli(t, nil, "owners", "explain", "--repo", dir, "operators/konflux/ci.yaml", "config.yaml")
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"approver OWNERS file: operators/konflux/ci.yaml (its reviewers)",
		"approvers:            allda, amisstea, avi-biton, ezopezo, gbenhaim, haripate, konflux-ci-bot, mporrato, tomasbakk, yftacherzog",
		"config.yaml names the maintainers, who approve every path",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("explain lacks %q:\n%s", want, res.stdout)
		}
	}
	// Flags take the place of the policy's.
	flags := cli(t, nil, "owners", "explain", "--repo", dir, "--source", "owners", "config.yaml")
	if flags.code != exitOK || !strings.Contains(flags.stdout, "nobody can approve it") {
		t.Errorf("with --source owners: exit %d\n%s%s", flags.code, flags.stdout, flags.stderr)
	}
}

// TestPolicyShowBare: a bare repository has no files but its commits', so
// policy show without --rev reads HEAD, never the empty directory's
// defaults; -o json lists every template mapping and catalog's roots.
func TestPolicyShowBare(t *testing.T) {
	r := changetest.NewRepo(t)
	r.Commit("policy", map[string]string{
		".catalogbot.yaml": "catalogs:\n  - each: catalogs/v*\n    image: quay.io/example/index:{catalog}\n" +
			"catalog:\n  templates:\n    - {template: templates/etcd.yaml, output: catalogs/v4.17/etcd}\n" +
			"    - {template: templates/etcd.yaml, output: catalogs/v4.18/etcd}\n" +
			"    - {template: templates/foo.yaml, output: catalogs/v4.18/foo}\n",
		"catalogs/v4.17/etcd/catalog.yaml": "schema: olm.package\nname: etcd\n",
		"catalogs/v4.18/etcd/catalog.yaml": "schema: olm.package\nname: etcd\n",
		"catalogs/v4.18/foo/catalog.yaml":  "schema: olm.package\nname: foo\n",
	})
	bare := filepath.Join(t.TempDir(), "bare.git")
	if _, err := git.PlainClone(bare, true, &git.CloneOptions{URL: r.Dir}); err != nil {
		t.Fatal(err)
	}
	golden := func(name, out string) {
		t.Helper()
		out = strings.ReplaceAll(out, bare, "BARE")
		checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "policy", name), []byte(out))
	}
	res := cli(t, nil, "policy", "show", "--repo", bare)
	if res.code != exitOK || res.stderr != "" {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	golden("show-bare.golden", res.stdout)
	js := cli(t, nil, "policy", "show", "--repo", bare, "-o", "json")
	if js.code != exitOK {
		t.Fatalf("exit %d\n%s%s", js.code, js.stdout, js.stderr)
	}
	golden("show-bare.json.golden", js.stdout)
}

// TestPolicyShowNoFile: a tree without a policy file is shown as such, not
// as a policy that was read and happens to be the defaults.
func TestPolicyShowNoFile(t *testing.T) {
	dir := t.TempDir()
	res := cli(t, nil, "policy", "show", "--repo", dir)
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	first, _, _ := strings.Cut(res.stdout, "\n")
	if want := "policy: no .catalogbot.yaml in the directory " + dir + ": every value is the default"; first != want {
		t.Errorf("first line %q, want %q", first, want)
	}
	js := cli(t, nil, "policy", "show", "--repo", dir, "-o", "json")
	var out struct{ NoPolicyFile bool }
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || !out.NoPolicyFile {
		t.Errorf("json: %v, noPolicyFile %v\n%s", err, out.NoPolicyFile, js.stdout)
	}
}

// TestFlagValueSuggestions: a mistyped value of a flag whose values are a
// closed set, or a mistyped subcommand, is refused with what it is a typo
// of.
func TestFlagValueSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--base", "HEAD~1", "--head", "HEAD", "-o", "jsno"}, `did you mean "json"?`},
		{[]string{"policy", "show", "-o", "txet"}, `did you mean "text"?`},
		{[]string{"--log-level", "debgu", "version"}, `did you mean "debug"?`},
		{[]string{"owners", "explain", "--source", "ci.yml", "catalog"}, `did you mean "ci.yaml"?`},
		{[]string{"render-template", "semvr", "x.yaml"}, `did you mean "semver"?`},
		{[]string{"version", "-o", "jsn"}, `did you mean "json"?`},
		// Subcommands of commands that have them, as cobra does for
		// the root's.
		{[]string{"policy", "shwo"}, `did you mean show?`},
		{[]string{"owners", "chekc"}, `did you mean check?`},
	} {
		res := cli(t, nil, tc.args...)
		if res.code != exitError || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, res.code, res.stderr, exitError, tc.want)
		}
	}
}

// TestCheckHelpNamesEveryCheck: check --help says what each check of the
// review judges, by the names the report gives them.
func TestCheckHelpNamesEveryCheck(t *testing.T) {
	res := cli(t, nil, "check", "--help")
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, name := range []string{pipeline.OwnersName, pipeline.FBCName, pipeline.ReferencesName, pipeline.ImagesName, pipeline.TemplatesName, pipeline.ReleaseName} {
		if !strings.Contains(res.stdout, "\n  "+name+" ") {
			t.Errorf("check --help does not name the %s check:\n%s", name, res.stdout)
		}
	}
}
