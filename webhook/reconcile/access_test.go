package reconcile

import (
	"strings"
	"testing"
	"time"
)

// TestRequireAccess: under owners.requireAccess: write the App asks GitHub
// what access each approver has, and an OWNERS approver who may only read
// the repository approves nothing until GitHub says they may write.
func TestRequireAccess(t *testing.T) {
	e := newEnv(t, map[string]string{
		".catalogbot.yaml":         mergePolicy + "owners:\n  requireAccess: write\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": fooCatalog,
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
	})
	e.repo.SetPermission("alice", "read")
	pr := e.openPR("mallory", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.gh.Advance(2 * time.Second)
	e.repo.Comment(pr.Number, "alice", "/approve")
	e.process(pr, "issue_comment")
	if pr.Merged() {
		t.Fatal("merged on the approval of an owner who may only read the repository")
	}
	if cs := e.statusComments(pr.Number); len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "has no write access to the repository") {
		t.Errorf("the status comment does not say why alice's approval does not count: %+v", cs)
	}

	e.repo.SetPermission("alice", "maintain")
	e.process(pr, "issue_comment")
	if !pr.Merged() {
		run := e.run(pr.HeadSHA(), CheckRunName)
		t.Fatalf("not merged with a maintainer's approval: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
}
