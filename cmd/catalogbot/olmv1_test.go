package main

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/olmv1/olmv1test"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// TestCheckOLMv1Rules runs the OLM v1 readiness cases through catalogbot
// check under olmv1: error: a change that breaks an installability rule
// fails with the rule at the bundle's file and line; one that keeps them,
// or only makes an upgrade diverge (a note), passes.
func TestCheckOLMv1Rules(t *testing.T) {
	noActions(t)
	// The bundles' images are in a registry on loopback, so that the
	// images check judges them without the network.
	reg := registrytest.New(t)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		registrytest.Push(t, reg.Ref("example/foo-bundle:v"+v), registrytest.RandomImage(t))
	}
	local := func(s string) string { return strings.ReplaceAll(s, "quay.io/example", reg.Host+"/example") }
	for _, tc := range olmv1test.Cases() {
		tc.Base, tc.Head = local(tc.Base), local(tc.Head)
		t.Run(tc.Name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", map[string]string{
				// The images are random, not bundles: truthfulness is not what
				// these cases are about.
				".catalogbot.yaml":         "olmv1: error\nimages:\n  truthfulness: off\n",
				"OWNERS":                   "approvers:\n  - root-admin\n",
				"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
				"catalog/foo/catalog.yaml": tc.Base,
				"catalog/.indexignore":     "OWNERS\n",
			})
			r.Branch("change", base)
			r.Commit("change foo", map[string]string{"catalog/foo/catalog.yaml": tc.Head})
			r.Checkout("main")
			doc, res := checkJSON(t, r.Dir, "--repo", r.Dir, "--base", "main", "--head", "change", "--author", "alice", "--allow-private-registry", "127.0.0.1")
			want := exitOK
			if tc.Blocks {
				want = exitInvalid
			}
			if res.code != want {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, want, res.stdout, res.stderr)
			}
			v1 := resultOf(doc, "olmv1")
			found := false
			for _, f := range v1.Findings {
				if f.Rule == tc.Rule && f.File == "catalog/foo/catalog.yaml" && f.Line > 0 {
					found = true
				}
			}
			if tc.Rule != "" && !found || tc.Rule == "" && len(v1.Findings) > 0 {
				t.Errorf("olmv1 findings %+v, want one of rule %q at catalog/foo/catalog.yaml", v1.Findings, tc.Rule)
			}
		})
	}
}
