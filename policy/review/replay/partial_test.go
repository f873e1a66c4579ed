package replay

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy/review/replay/replaytest"
)

// TestPartialClone: a backtest of a blobless clone of the history (git
// clone --filter=blob:none, every blob left with the promisor remote)
// fetches the blobs its reviews read and reports every commit as the
// backtest of the complete repository does; with fetching off, the
// commits whose reviews read a catalog are unreadable, never judged.
func TestPartialClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the test clones with the git CLI, which is not installed: " + err.Error())
	}
	t.Cleanup(func() { change.SetFetch(change.FetchOptions{}) })
	dir, _ := replaytest.History(t, "testdata/history")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("-C", dir, "config", "uploadpack.allowFilter", "true")
	git("-C", dir, "config", "uploadpack.allowAnySHA1InWant", "true")
	opts := Options{Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")}}
	commits := func(rep *Report) string {
		for i := range rep.Commits {
			rep.Commits[i].Millis = 0
		}
		b, err := json.Marshal(rep.Commits)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	full, err := Run(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() string {
		c := filepath.Join(t.TempDir(), "partial.git")
		git("clone", "-q", "--bare", "--filter=blob:none", "file://"+dir, c)
		return c
	}

	change.SetFetch(change.FetchOptions{Enabled: true})
	got, err := Run(context.Background(), clone(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := commits(got), commits(full); a != b {
		t.Errorf("backtest of the partial clone:\n%s\nof the complete repository:\n%s", a, b)
	}

	change.SetFetch(change.FetchOptions{})
	off, err := Run(context.Background(), clone(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := off.Summaries[0]; s.Unreadable != s.Commits || s.Commits != 3 {
		t.Errorf("with fetching off, %d of %d commits unreadable; want 3 of 3", s.Unreadable, s.Commits)
	}
}
