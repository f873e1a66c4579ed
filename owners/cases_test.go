package owners_test

// The cases under testdata/cases each hold a small tree (base/, and head/
// where a reference list changes) and a case.yaml that says what to explain
// and which change to evaluate. The output is pinned by want.golden; the
// facts that matter (who approves, the verdict) are also asserted from
// case.yaml, so accepting a golden diff with -update cannot hide a wrong
// verdict. See testdata/cases/README.md for the index by spec rule.

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/owners"
)

type caseFile struct {
	Spec  string `json:"spec"`
	About string `json:"about"`
	Load  struct {
		OwnersFile                  string   `json:"ownersFile"`
		AliasesFile                 string   `json:"aliasesFile"`
		DirDenylist                 []string `json:"dirDenylist"`
		IgnorePreconfiguredDefaults bool     `json:"ignorePreconfiguredDefaults"`
		Sources                     []string `json:"sources"`
		CatalogRoots                []string `json:"catalogRoots"`
	} `json:"load"`
	// Findings are the expected load findings, as "RULE severity file:line".
	Findings []string      `json:"findings"`
	Explain  []explainCase `json:"explain"`
	Change   *struct {
		Number int           `json:"number"`
		Author string        `json:"author"`
		Head   string        `json:"head"`
		Files  []change.File `json:"files"`
	} `json:"change"`
	Runs []runCase `json:"runs"`
}

type explainCase struct {
	Path       string    `json:"path"`
	Approvers  *[]string `json:"approvers"`
	Leaf       *[]string `json:"leaf"`
	OwnersFile string    `json:"ownersFile"`
	Reason     string    `json:"reason"`
	Blocked    bool      `json:"blocked"`
}

type runCase struct {
	Name string `json:"name"`
	// Files, when set, replace the change's files for this run.
	Files     []change.File `json:"files"`
	Approvals []struct {
		User   string `json:"user"`
		SHA    string `json:"sha"`
		At     int    `json:"at"` // minutes after the epoch
		Cancel bool   `json:"cancel"`
		Via    string `json:"via"`
	} `json:"approvals"`
	Events []struct {
		User   string `json:"user"`
		Body   string `json:"body"`
		Review string `json:"review"`
		SHA    string `json:"sha"`
		At     int    `json:"at"`
	} `json:"events"`
	Policy struct {
		NoSelfApproval  bool     `json:"noSelfApproval"`
		StickyApprovals bool     `json:"stickyApprovals"`
		Bots            []string `json:"bots"`
		ReferenceLists  []string `json:"referenceLists"`
	} `json:"policy"`
	Collaborators []string `json:"collaborators"`
	Expect        struct {
		Approved   bool      `json:"approved"`
		Unapproved *[]string `json:"unapproved"`
		Suggested  *[]string `json:"suggested"`
		Required   *[]string `json:"required"`
		Hold       bool      `json:"hold"`
	} `json:"expect"`
}

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestCases(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "cases", "*", "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases under testdata/cases")
	}
	for _, file := range dirs {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runCaseDir(t, dir)
		})
	}
}

func runCaseDir(t *testing.T, dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c caseFile
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("case.yaml: %v", err)
	}
	if c.Spec == "" || c.About == "" {
		t.Fatal("case.yaml must say which spec rule it covers (spec) and what it shows (about)")
	}
	base := os.DirFS(filepath.Join(dir, "base"))
	repo, err := owners.Load(base, owners.LoadOptions{
		OwnersFile:                  c.Load.OwnersFile,
		AliasesFile:                 c.Load.AliasesFile,
		DirDenylist:                 c.Load.DirDenylist,
		IgnorePreconfiguredDefaults: c.Load.IgnorePreconfiguredDefaults,
		Sources:                     c.Load.Sources,
		CatalogRoots:                c.Load.CatalogRoots,
	})
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	findings := repo.Findings()
	var got []string
	for _, f := range findings {
		got = append(got, fmt.Sprintf("%s %s %s:%d", f.Rule, f.Severity, f.File, f.Line))
	}
	if !slices.Equal(got, c.Findings) {
		t.Errorf("load findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.Findings, "\n"))
	}
	if len(findings) > 0 {
		out.WriteString("== findings\n")
		checks.WriteText(&out, findings, "")
	}

	if len(c.Explain) > 0 {
		out.WriteString("== explain\n")
	}
	for _, e := range c.Explain {
		res := repo.Resolve(e.Path)
		out.WriteString(res.Explain())
		if e.Approvers != nil && !slices.Equal(res.Approvers, *e.Approvers) {
			t.Errorf("%s: approvers %q, want %q", e.Path, res.Approvers, *e.Approvers)
		}
		if e.Leaf != nil && !slices.Equal(res.LeafApprovers, *e.Leaf) {
			t.Errorf("%s: leaf approvers %q, want %q", e.Path, res.LeafApprovers, *e.Leaf)
		}
		if e.OwnersFile != "" && res.ApproverOwnersFile != e.OwnersFile {
			t.Errorf("%s: approver OWNERS file %q, want %q", e.Path, res.ApproverOwnersFile, e.OwnersFile)
		}
		if e.Reason != "" && res.Reason != e.Reason {
			t.Errorf("%s: reason %q, want %q", e.Path, res.Reason, e.Reason)
		}
		if (res.Blocked != "") != e.Blocked {
			t.Errorf("%s: blocked = %q, want blocked %v", e.Path, res.Blocked, e.Blocked)
		}
	}

	if c.Change != nil {
		ch := &change.Change{Number: c.Change.Number, Author: c.Change.Author, HeadSHA: c.Change.Head, Files: c.Change.Files}
		var headFS fs.FS
		if _, err := os.Stat(filepath.Join(dir, "head")); err == nil {
			headFS = os.DirFS(filepath.Join(dir, "head"))
		}
		if len(c.Runs) == 0 {
			t.Fatal("a change needs at least one run")
		}
		for _, run := range c.Runs {
			runChange := ch
			if run.Files != nil {
				c := *ch
				c.Files = run.Files
				runChange = &c
			}
			in := owners.Input{
				Change: runChange,
				Policy: owners.Policy{
					NoSelfApproval:  run.Policy.NoSelfApproval,
					StickyApprovals: run.Policy.StickyApprovals,
					Bots:            run.Policy.Bots,
					ReferenceLists:  run.Policy.ReferenceLists,
				},
				Collaborators: run.Collaborators,
			}
			if headFS != nil {
				in.Base, in.Head = base, headFS
			}
			for _, a := range run.Approvals {
				in.Approvals = append(in.Approvals, owners.Approval{
					User: a.User, SHA: a.SHA, Time: epoch.Add(time.Duration(a.At) * time.Minute), Cancel: a.Cancel, Via: a.Via,
				})
			}
			var events []owners.Event
			for _, e := range run.Events {
				events = append(events, owners.Event{
					User: e.User, Body: e.Body, ReviewState: e.Review, CommitSHA: e.SHA, Time: epoch.Add(time.Duration(e.At) * time.Minute),
				})
			}
			act := owners.ReadEvents(events, run.Policy.Bots)
			in.Approvals = append(in.Approvals, act.Approvals...)

			st := repo.Evaluate(in)
			fmt.Fprintf(&out, "== run: %s\n", run.Name)
			if act.Hold {
				fmt.Fprintf(&out, "hold by %s\n", act.HoldBy)
			}
			out.WriteString(st.Explain())
			if extra := st.Findings[len(findings):]; len(extra) > 0 {
				out.WriteString("-- findings\n")
				checks.WriteText(&out, extra, "")
			}
			out.WriteString("-- json\n")
			if err := checks.WriteJSON(&out, st); err != nil {
				t.Fatal(err)
			}

			if st.Approved != run.Expect.Approved {
				t.Errorf("run %q: approved = %v, want %v (%s)", run.Name, st.Approved, run.Expect.Approved, st.Reason)
			}
			if act.Hold != run.Expect.Hold {
				t.Errorf("run %q: hold = %v, want %v", run.Name, act.Hold, run.Expect.Hold)
			}
			if w := run.Expect.Unapproved; w != nil && !slices.Equal(st.Unapproved, *w) {
				t.Errorf("run %q: unapproved %q, want %q", run.Name, st.Unapproved, *w)
			}
			if w := run.Expect.Suggested; w != nil && !slices.Equal(st.Suggested, *w) {
				t.Errorf("run %q: suggested %q, want %q", run.Name, st.Suggested, *w)
			}
			if w := run.Expect.Required; w != nil {
				var req []string
				for _, r := range st.Required {
					req = append(req, r.File)
				}
				if !slices.Equal(req, *w) {
					t.Errorf("run %q: required %q, want %q", run.Name, req, *w)
				}
			}
		}
	}
	checkstest.Golden(t, filepath.Join(dir, "want.golden"), out.Bytes())
}
