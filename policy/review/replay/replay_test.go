package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/policy/review/replay/replaytest"
)

// Original ids of the commits in testdata/history.
const (
	removeKubeturbo  = "851305a16eeacebaee89848268d4e8b608d01822"
	addPrometurbo    = "6db0653cf19c2473a9e1e3f4299284d725817705"
	removePrometurbo = "dd61cb4869e4c958f438fd5fa3b940aeffecf102"
	prometurboBlob   = "b9f2ecae9029586d682267205e2c30ad3aafec88"
)

func trialPolicy(t *testing.T, name string) Policy {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Policy{Name: name, Data: data}
}

// tick is a clock that moves a second each time it is read, so that
// durations in a report are the same on every run.
func tick() func() time.Time {
	now := time.Date(2026, 8, 22, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		now = now.Add(time.Second)
		return now
	}
}

func TestRun(t *testing.T) {
	dir, ids := replaytest.History(t, "testdata/history")
	for _, tc := range []struct {
		name string
		opts func() Options
		// commits are the original ids expected in the report, oldest
		// first.
		commits []string
		failed  bool
	}{
		{
			// The repository has no policy file, so each base's is the
			// default, whose root "catalog" no commit touches.
			name:    "base-policy",
			opts:    func() Options { return Options{} },
			commits: nil,
		},
		{
			name: "ci-policy",
			opts: func() Options {
				return Options{Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")}}
			},
			commits: []string{removeKubeturbo, addPrometurbo, removePrometurbo},
			failed:  true,
		},
		{
			name: "last-1",
			opts: func() Options {
				return Options{Last: 1, Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")}}
			},
			commits: []string{removePrometurbo},
			failed:  true,
		},
		{
			name: "since",
			opts: func() Options {
				return Options{Since: ids[removeKubeturbo], Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")}}
			},
			commits: []string{addPrometurbo, removePrometurbo},
			failed:  true,
		},
		{
			name: "two-policies",
			opts: func() Options {
				return Options{Policies: []Policy{
					trialPolicy(t, "community-operators-prod.catalogbot.yaml"),
					trialPolicy(t, "permissive.catalogbot.yaml"),
				}}
			},
			commits: []string{removeKubeturbo, addPrometurbo, removePrometurbo},
			failed:  true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts()
			o.Now = tick()
			rep, err := Run(context.Background(), dir, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range rep.Commits {
				got = append(got, c.SHA)
			}
			var want []string
			for _, id := range tc.commits {
				want = append(want, ids[id])
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("commits = %v, want %v", got, want)
			}
			if rep.Failed() != tc.failed {
				t.Errorf("Failed() = %v, want %v", rep.Failed(), tc.failed)
			}
			rep.Repo = "REPO"
			var js, text bytes.Buffer
			if err := checks.WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			checkstest.Golden(t, filepath.Join("testdata", "golden", tc.name+".json"), js.Bytes())
			checkstest.Golden(t, filepath.Join("testdata", "golden", tc.name+".txt"), text.Bytes())
		})
	}
}

// A commit whose objects are missing is unreadable, whatever its verdict
// would have been, and counts as no failure.
func TestUnreadable(t *testing.T) {
	dir, ids := replaytest.History(t, "testdata/history")
	// The prometurbo catalog blob is on the head of addPrometurbo and the
	// base of removePrometurbo; a partial clone may lack it.
	loose := filepath.Join(dir, "objects", prometurboBlob[:2], prometurboBlob[2:])
	if err := os.Remove(loose); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), dir, Options{Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, c := range rep.Commits {
		switch {
		case c.Unreadable != nil && len(c.Reviews) == 0:
			state[c.SHA] = "unreadable"
			if !strings.Contains(c.Unreadable.Path, "prometurbo/catalog.yaml") {
				t.Errorf("%s: unreadable path %q does not name the missing file", c.SHA, c.Unreadable.Path)
			}
		case c.Unreadable == nil:
			state[c.SHA] = "reviewed"
		default:
			t.Errorf("%s: unreadable with reviews", c.SHA)
		}
	}
	want := map[string]string{ids[removeKubeturbo]: "reviewed", ids[addPrometurbo]: "unreadable", ids[removePrometurbo]: "unreadable"}
	for sha, w := range want {
		if state[sha] != w {
			t.Errorf("%s: %s, want %s", sha, state[sha], w)
		}
	}
	s := rep.Summaries[0]
	if s.Unreadable != 2 || s.Commits != 3 {
		t.Errorf("summary counts %d commits, %d unreadable; want 3, 2", s.Commits, s.Unreadable)
	}
	for _, f := range s.ContentFailures {
		if f.SHA != ids[removeKubeturbo] {
			t.Errorf("content failure listed for unreadable commit %s", f.SHA)
		}
	}
}

func TestProgress(t *testing.T) {
	dir, _ := replaytest.History(t, "testdata/history")
	var seen []Progress
	_, err := Run(context.Background(), dir, Options{
		Policies: []Policy{trialPolicy(t, "community-operators-prod.catalogbot.yaml")},
		Now:      tick(),
		Progress: func(p Progress) { seen = append(seen, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4 {
		t.Fatalf("progress called %d times, want 4 (before the first and after each of 3)", len(seen))
	}
	for i, p := range seen {
		if p.Done != i || p.Total != 3 {
			t.Errorf("call %d: %d/%d, want %d/3", i, p.Done, p.Total, i)
		}
	}
	// The clock moves a second per read: after the first commit 4 s have
	// passed since the start (the first report, the commit's start and
	// end, this report), so two more commits at that pace take 8 s.
	if eta := seen[1].ETA(); eta != 8*time.Second {
		t.Errorf("ETA after the first commit = %s, want 8s", eta)
	}
	if eta := seen[3].ETA(); eta != 0 {
		t.Errorf("ETA when done = %s, want 0", eta)
	}
}

func TestInvalidTrialPolicy(t *testing.T) {
	dir, _ := replaytest.History(t, "testdata/history")
	_, err := Run(context.Background(), dir, Options{Policies: []Policy{{Name: "bad.yaml", Data: []byte("catalog:\n  roots: [/abs]\n")}}})
	var pe *PolicyError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a PolicyError", err)
	}
	if !strings.Contains(err.Error(), "bad.yaml:2:") {
		t.Errorf("error %q does not name the file and line", err)
	}
}

// BenchmarkReplay replays the three catalog commits of the stored slice
// under the community-operators-prod policy; the time per commit is the
// figure to compare with docs/backtest.md's, taken on the whole history.
func BenchmarkReplay(b *testing.B) {
	dir, _ := replaytest.History(b, "testdata/history")
	data, err := os.ReadFile("testdata/community-operators-prod.catalogbot.yaml")
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Policies: []Policy{{Name: "policy", Data: data}}}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Run(context.Background(), dir, o)
		if err != nil {
			b.Fatal(err)
		}
		if rep.ReadableCommits() != 3 {
			b.Fatalf("%d commits reviewed, want 3", rep.ReadableCommits())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/3/1e6, "ms/commit")
}
