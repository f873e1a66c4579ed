package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/policy/review"
)

// writeGroupEvent writes a merge_group checks_requested event, in the
// shape of GitHub's webhook schema, for a group of the test repository
// built on main whose commit is head, and returns its path.
func writeGroupEvent(t *testing.T, r *changetest.Repo, head string) string {
	t.Helper()
	base, sha := branchSHA(t, r, "main"), branchSHA(t, r, head)
	ev := map[string]any{
		"action": "checks_requested",
		"merge_group": map[string]any{
			"head_sha": sha, "head_ref": "refs/heads/gh-readonly-queue/main/pr-2-" + base,
			"base_sha": base, "base_ref": "refs/heads/main",
			"head_commit": map[string]any{"id": sha, "tree_id": sha, "message": "Merge pull request #2", "timestamp": "2024-05-01T10:00:00Z",
				"author":    map[string]any{"name": "github-merge-queue[bot]", "email": "merge-queue@github.com"},
				"committer": map[string]any{"name": "GitHub", "email": "noreply@github.com"}},
		},
		"repository": map[string]any{"full_name": "Codertocat/Hello-World"},
		"sender":     map[string]any{"login": "mallory"},
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckGitHubMergeGroup runs check as the Action does in a workflow
// on merge_group: the group's base and commit come from the event, and it
// is judged on its content. Its pull requests' approvals were judged at
// their heads, so no approval is asked for; what the content breaks fails
// the step.
func TestCheckGitHubMergeGroup(t *testing.T) {
	r := checkRepo(t)
	tests := []struct {
		name, head string
		args       []string
		code       int
		outputs    string
		stderr     string
	}{
		{name: "valid", head: "good", code: exitOK, outputs: "valid=true\napproved=true\nmergeable=true\n"},
		{name: "introduced error", head: "bad", code: exitInvalid, outputs: "valid=false\napproved=true\nmergeable=false\n"},
		{name: "an approval given", head: "good", args: []string{"--approve", "alice"}, code: exitError,
			stderr: "--approve has nothing to approve in a merge group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := inActions(t, r.Dir, writeGroupEvent(t, r, tt.head))
			t.Setenv("GITHUB_EVENT_NAME", "merge_group")
			res := ownersCLI(t, t.TempDir(), append([]string{"check"}, tt.args...)...)
			if res.code != tt.code || !strings.Contains(res.stderr, tt.stderr) || tt.stderr == "" && res.stderr != "" {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			if tt.stderr != "" {
				return
			}
			summary := readStepFile(t, f.summary)
			if !strings.Contains(summary, review.GroupNote) || !strings.Contains(summary, "head `"+branchSHA(t, r, tt.head)[:12]+"`") {
				t.Errorf("the summary does not say it judged the group's commit:\n%s", summary)
			}
			if strings.Contains(summary, "owners") {
				t.Errorf("the summary of a merge group reports an owners check:\n%s", summary)
			}
			if got, want := readStepFile(t, f.output), "earlier=1\n"+tt.outputs+defaultMergeOutputs; got != want {
				t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
			}
		})
	}
}
