package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
)

const checkCatalog = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/example/foo-bundle:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.0
`

// checkRepo builds a catalog repository whose main branch holds a valid
// catalog owned by alice, with two changes: good moves the bundle to a new
// image, bad points the default channel at one that does not exist.
func checkRepo(t *testing.T) *changetest.Repo {
	t.Helper()
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": checkCatalog,
		// OWNERS files are not catalog content; opm would reject them.
		"catalog/.indexignore": "OWNERS\n",
	})
	r.Branch("good", base)
	r.Commit("new bundle image", map[string]string{
		"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "foo-bundle:v1.0.0", "foo-bundle:v1.0.0-1", 1),
	})
	r.Branch("bad", base)
	r.Commit("break the default channel", map[string]string{
		"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "defaultChannel: stable", "defaultChannel: beta", 1),
	})
	r.Checkout("main")
	return r
}

func TestCheck(t *testing.T) {
	r := checkRepo(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{
			name:     "approved by an owner",
			args:     []string{"--head", "good", "--author", "mallory", "--approve", "alice"},
			code:     exitOK,
			contains: []string{"fbc: success", "owners: success", "mergeable at "},
		},
		{
			name:     "the author owns the files",
			args:     []string{"--head", "good", "--author", "alice"},
			code:     exitOK,
			contains: []string{"owners: success", "mergeable at "},
		},
		{
			name:     "not approved",
			args:     []string{"--head", "good", "--author", "mallory"},
			code:     exitInvalid,
			contains: []string{"fbc: success", "owners: failure", "not mergeable:", "check owners concluded failure", "the pull request is not approved"},
		},
		{
			name: "introduced catalog error",
			args: []string{"--head", "bad", "--author", "alice"},
			code: exitInvalid,
			contains: []string{"fbc: failure: This change introduces 1 catalog error(s).",
				`catalog/foo/catalog.yaml:4: foo/beta: default channel "beta" does not exist`,
				"check fbc concluded failure"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"check", "--repo", r.Dir, "--base", "main"}, tt.args...)
			res := ownersCLI(t, r.Dir, args...)
			if res.code != tt.code || res.stderr != "" {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.contains {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	r := checkRepo(t)
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "bad", "--author", "alice", "-o", "json")
	if res.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	var doc struct {
		HeadSHA string `json:"headSHA"`
		Results []struct {
			Name       string `json:"name"`
			Conclusion string `json:"conclusion"`
			Findings   []struct {
				File     string `json:"file"`
				Line     int    `json:"line"`
				Severity string `json:"severity"`
			} `json:"findings"`
		} `json:"results"`
		Decision struct {
			Merge   bool
			SHA     string
			Reasons []string
		} `json:"decision"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, res.stdout)
	}
	if len(doc.Results) != 2 || doc.Results[0].Name != "fbc" || doc.Results[1].Name != "owners" {
		t.Fatalf("results = %+v, want fbc then owners", doc.Results)
	}
	fbc := doc.Results[0]
	if fbc.Conclusion != "failure" || len(fbc.Findings) != 1 || fbc.Findings[0].File != "catalog/foo/catalog.yaml" || fbc.Findings[0].Line != 4 || fbc.Findings[0].Severity != "error" {
		t.Errorf("fbc = %+v", fbc)
	}
	if doc.Decision.Merge || doc.Decision.SHA != doc.HeadSHA || len(doc.Decision.Reasons) != 1 {
		t.Errorf("decision = %+v, want no merge of %s for one reason", doc.Decision, doc.HeadSHA)
	}
}

func TestCheckUsage(t *testing.T) {
	r := checkRepo(t)
	tests := []struct {
		name string
		args []string
	}{
		{"no head", []string{"check", "--base", "main"}},
		{"bad approval", []string{"check", "--base", "main", "--head", "good", "--approve", "@"}},
		{"unknown revision", []string{"check", "--base", "main", "--head", "nope"}},
		{"bad format", []string{"check", "--base", "main", "--head", "good", "-o", "sarif"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := ownersCLI(t, r.Dir, tt.args...); res.code != exitError {
				t.Errorf("exit %d, want %d\n%s%s", res.code, exitError, res.stdout, res.stderr)
			}
		})
	}
}

func TestCheckInvalidPolicy(t *testing.T) {
	r := checkRepo(t)
	r.Commit("bad policy", map[string]string{".catalogbot.yaml": "nonsense: true\n"})
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "good", "--author", "alice")
	if res.code != exitInvalid || !strings.Contains(res.stdout, "the policy is invalid") {
		t.Errorf("exit %d, want %d with the policy findings\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
}
