package main

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

// identityRepo is community-operators-prod's slice of testdata under its
// own conventions, with konflux's and kube-green's reviewers and kube-green
// in v4.19 to v4.21 (policy/review/testdata/identity), and a root OWNERS
// file that the conventions do not read. On pr, a konflux reviewer puts
// kube-green into catalog v4.22, which lacks it, in a konflux directory;
// on other, the same reviewer describes libredb-studio-operator.
func identityRepo(t *testing.T) *changetest.Repo {
	t.Helper()
	files, err := changetest.ReadFiles(filepath.Join(repoRoot, "testdata", "community-operators-prod"))
	if err != nil {
		t.Fatal(err)
	}
	extra, err := changetest.ReadFiles(filepath.Join(repoRoot, "policy", "review", "testdata", "identity"))
	if err != nil {
		t.Fatal(err)
	}
	delete(extra, "README.md")
	maps.Copy(files, extra)
	files[".catalogbot.yaml"] = "conventions: operator-pipelines\nmerge:\n  enabled: true\n"
	files["OWNERS"] = "approvers: [gbenhaim]\n"
	r := changetest.NewRepo(t)
	base := r.Commit("base", files)
	r.Branch("pr", base)
	r.Commit("kube-green in a konflux directory", map[string]string{
		"catalogs/v4.22/konflux/catalog.yaml": files["catalogs/v4.21/kube-green/catalog.yaml"],
	})
	const libredb = "catalogs/v4.22/libredb-studio-operator/catalog.yaml"
	r.Branch("other", base)
	r.Commit("describe libredb", map[string]string{
		libredb: strings.Replace(files[libredb], "schema: olm.package", "description: taken over\nschema: olm.package", 1),
	})
	r.Checkout("main")
	return r
}

// TestCheckPackageIdentity: check and owners check give one verdict on a
// konflux reviewer's change that ships kube-green: it needs kube-green's
// reviewer and a maintainer, under the policy of the base, whichever
// command asks.
func TestCheckPackageIdentity(t *testing.T) {
	noActions(t)
	r := identityRepo(t)
	tests := []struct {
		name    string
		head    string
		approve []string
		code    int
		// check and owners are what each command's output must hold.
		check, owners []string
	}{
		{
			name: "the konflux reviewer alone", head: "pr",
			code: exitInvalid,
			check: []string{"owners: failure", "not mergeable:",
				"also package kube-green is its operator's, operators/kube-green/ci.yaml, in every catalog: needs allda or davidebianchi"},
			owners: []string{"NOT APPROVED", "operators/kube-green/ci.yaml reviewers: davidebianchi", "config.yaml"},
		},
		{
			name:    "with kube-green's reviewer and a maintainer",
			head:    "pr",
			approve: []string{"davidebianchi", "Allda"},
			code:    exitOK,
			check:   []string{"owners: success", "mergeable at "},
			owners:  []string{"APPROVED"},
		},
		{
			// The root OWNERS file names the konflux reviewer, but the
			// policy's conventions read ci.yaml files only: owners
			// check reads the policy as check does.
			name: "the policy's owners sources decide", head: "other",
			code:   exitInvalid,
			check:  []string{"owners: failure"},
			owners: []string{"NOT APPROVED", "operators/libredb-studio-operator/ci.yaml reviewers: cevheri, yusuf-gundogdu"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--repo", r.Dir, "--base", "main", "--head", tt.head, "--number", "7", "--author", "gbenhaim"}
			for _, a := range tt.approve {
				args = append(args, "--approve", a)
			}
			for _, cmd := range []struct {
				args []string
				want []string
			}{
				{append([]string{"check", "--images=false", "--render=false"}, args...), tt.check},
				{append([]string{"owners", "check"}, args...), tt.owners},
			} {
				res := ownersCLI(t, t.TempDir(), cmd.args...)
				if res.code != tt.code || res.stderr != "" {
					t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", cmd.args[0], res.code, tt.code, res.stdout, res.stderr)
				}
				for _, want := range cmd.want {
					if !strings.Contains(res.stdout, want) {
						t.Errorf("%s: stdout lacks %q:\n%s", strings.Join(cmd.args[:2], " "), want, res.stdout)
					}
				}
			}
		})
	}
}
