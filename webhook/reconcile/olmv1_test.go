package reconcile

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/olmv1/olmv1test"
)

// TestOLMv1RulesThroughApp: under olmv1: error, each installability rule
// has a pull request that breaks it (the check names the rule at the
// bundle's file and line, and nothing merges) and one that keeps it
// (merged); a divergent upgrade (V4) is a note that never blocks.
func TestOLMv1RulesThroughApp(t *testing.T) {
	for _, tc := range olmv1test.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			files := catalogRepo("olmv1: error\n" + mergePolicy)
			files["catalog/foo/catalog.yaml"] = tc.Base
			e := newEnv(t, files)
			pr := e.openPR("alice", "change", map[string]string{"catalog/foo/catalog.yaml": tc.Head})
			e.process(pr, "opened")
			run := e.run(pr.HeadSHA(), CheckRunName)
			found := false
			for _, a := range run.Annotations {
				if strings.Contains(a.Title+" "+a.Message, tc.Rule) && a.Path == "catalog/foo/catalog.yaml" && a.StartLine > 0 {
					found = true
				}
			}
			if tc.Rule != "" && !found {
				t.Errorf("no annotation of %s on catalog/foo/catalog.yaml; annotations %+v\n%s", tc.Rule, run.Annotations, run.Summary)
			}
			if merged := e.mergesAt(pr.HeadSHA()) == 1; merged == tc.Blocks {
				t.Errorf("merged: %v, want %v (check run %s: %s)\n%s", merged, !tc.Blocks, run.Conclusion, run.Title, run.Summary)
			}
		})
	}
}
