package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/policy/review/replay"
	"github.com/catalogbot/catalogbot/policy/review/replay/replaytest"
)

// The command only wires flags to the backtest package, whose own tests
// judge the verdicts; these check the wiring, the formats and the exit
// statuses.
func TestBacktest(t *testing.T) {
	const history = "../../policy/review/replay/testdata/history"
	const ci = "../../policy/review/replay/testdata/community-operators-prod.catalogbot.yaml"
	const permissive = "../../policy/review/replay/testdata/permissive.catalogbot.yaml"
	repo, _ := replaytest.History(t, history)
	cases := []struct {
		name    string
		args    []string
		code    int
		commits int    // commits in -o json; -1 when not json
		stdout  string // a substring of stdout
		stderr  string // a substring of stderr
	}{
		{name: "base policy", args: []string{"--repo", repo}, code: exitOK, commits: -1, stdout: "0 commits touching a catalog root"},
		{name: "json", args: []string{"--repo", repo, "--policy", ci, "-o", "json"}, code: exitInvalid, commits: 3},
		{name: "last", args: []string{"--repo", repo, "--policy", ci, "--last", "1", "-o", "json"}, code: exitInvalid, commits: 1},
		{name: "text", args: []string{"--repo", repo, "--policy", ci}, code: exitInvalid, commits: -1, stdout: "content checks failed on 2 commits"},
		{name: "two policies", args: []string{"--repo", repo, "--policy", ci, "--policy", permissive}, code: exitInvalid, commits: -1, stdout: "Verdicts that flip from"},
		{name: "three policies", args: []string{"--repo", repo, "--policy", ci, "--policy", ci, "--policy", ci}, code: exitError, commits: -1, stderr: "at most twice"},
		{name: "bad format", args: []string{"--repo", repo, "-o", "sarif"}, code: exitError, commits: -1, stderr: `unknown output format "sarif"`},
		{name: "negative last", args: []string{"--repo", repo, "--last", "-1"}, code: exitError, commits: -1, stderr: "must not be negative"},
		{name: "missing policy", args: []string{"--repo", repo, "--policy", "absent.yaml"}, code: exitError, commits: -1, stderr: "absent.yaml"},
		{name: "not a repository", args: []string{"--repo", t.TempDir()}, code: exitError, commits: -1, stderr: "open git repository"},
		{name: "arguments", args: []string{"--repo", repo, "extra"}, code: exitError, commits: -1, stderr: "takes no arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"backtest"}, tc.args...), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.stdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.stderr, stderr.String())
			}
			if tc.commits >= 0 {
				var rep replay.Report
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Version != replay.Version || len(rep.Commits) != tc.commits {
					t.Errorf("version %d with %d commits, want %d with %d", rep.Version, len(rep.Commits), replay.Version, tc.commits)
				}
			}
			// A buffer is no terminal: no progress line.
			if strings.Contains(stderr.String(), "ETA") {
				t.Errorf("progress written to a non-terminal: %q", stderr.String())
			}
		})
	}
}
