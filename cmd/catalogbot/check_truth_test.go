package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/bundletest"
)

// TestCheckTruthfulness: catalogbot check pulls the image of the bundle a
// change adds and compares it with the blob. A blob written for the
// faithful image passes (and the change is mergeable); the same blob
// pointing at an image of each kind of lie fails the truthfulness check
// with its BT rule on the blob's line.
func TestCheckTruthfulness(t *testing.T) {
	checkTruthfulness(t, registrytest.New(t).Host)
}

// checkTruthfulness is TestCheckTruthfulness against the registry at host,
// on loopback: the in-process one, or docker-registry in the end-to-end
// test.
func checkTruthfulness(t *testing.T, host string) {
	noActions(t)
	im := bundletest.Push(t, host)
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"catalog/foo/OWNERS":   "approvers:\n  - alice\n",
		"catalog/.indexignore": "OWNERS\n",
	})
	cases := []struct {
		variant string
		rules   []string
	}{
		{bundletest.Faithful, nil},
		{"other-package", []string{"BT2"}},
		{"other-version", []string{"BT3", "BT7"}},
		{"missing-api", []string{"BT4", "BT7"}},
		{"extra-required", []string{"BT5", "BT7"}},
		{"other-related", []string{"BT7", "BT8"}},
	}
	for _, c := range cases {
		t.Run(c.variant, func(t *testing.T) {
			r.Branch(c.variant, base)
			r.Commit("add foo", map[string]string{"catalog/foo/catalog.yaml": im.Catalog(t, c.variant, "")})
			doc, res := checkJSON(t, r.Dir, "--base", "main", "--head", c.variant, "--author", "alice", "--allow-private-registry", "127.0.0.1")
			tr := resultOf(doc, "truthfulness")
			var rules []string
			for _, f := range tr.Findings {
				rules = append(rules, f.Rule)
				if f.File != "catalog/foo/catalog.yaml" || f.Line != 12 {
					t.Errorf("finding %+v, want it on the blob at catalog/foo/catalog.yaml:12", f)
				}
			}
			if !slices.Equal(rules, c.rules) {
				t.Errorf("rules = %v, want %v\n%s", rules, c.rules, tr.Summary)
			}
			if c.rules == nil {
				if tr.Conclusion != checks.Success || res.code != exitOK {
					t.Errorf("truthfulness %s, exit %d: want success and mergeable\n%s\n%s", tr.Conclusion, res.code, tr.Summary, res.stderr)
				}
				return
			}
			if tr.Conclusion != checks.Failure || res.code != exitInvalid || !strings.Contains(doc.Title, "truthfulness") {
				t.Errorf("truthfulness %s, exit %d, title %q: want it to fail the check", tr.Conclusion, res.code, doc.Title)
			}
		})
	}
	// images.truthfulness: off on the base leaves the check out.
	r.Checkout("main")
	off := r.Commit("policy", map[string]string{".catalogbot.yaml": "images:\n  truthfulness: off\n"})
	r.Branch("lie-off", off)
	r.Commit("add foo", map[string]string{"catalog/foo/catalog.yaml": im.Catalog(t, "other-package", "")})
	doc, res := checkJSON(t, r.Dir, "--base", off, "--head", "lie-off", "--author", "alice", "--allow-private-registry", "127.0.0.1")
	if tr := resultOf(doc, "truthfulness"); tr.Name != "" || res.code != exitOK {
		t.Errorf("with truthfulness off: result %+v, exit %d; want no check and mergeable", tr, res.code)
	}
}
