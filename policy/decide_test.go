package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
)

func TestDecide(t *testing.T) {
	yes, no := true, false
	success := checks.Success
	const checked, moved = "0123456789abcdef0123", "fedcba9876543210fedc"
	const actions, mallory = 15368, 666
	enabled := func() *Policy {
		p := Default()
		p.Merge.Enabled = true
		p.Merge.RequiredChecks = []RequiredCheck{{Name: "e2e"}, {Name: "ci", App: "github-actions"}, {Name: "lint", App: "15368"}}
		return p
	}
	// ready is a pull request that may be merged; each case breaks it.
	ready := func() (Report, PRState) {
		return Report{
				Conclusions: map[string]checks.Conclusion{"catalogbot/fbc": checks.Success, "catalogbot/owners": checks.Success},
				HeadSHA:     checked,
			}, PRState{
				Approved:     true,
				HeadSHA:      checked,
				CheckedSHA:   checked,
				Mergeable:    &yes,
				TouchedPaths: []string{"catalog/foo/index.yaml"},
				ExtraChecks: map[string][]CheckRun{
					"e2e":       {{Conclusion: checks.Success, AppID: 7, AppSlug: "someone"}},
					"ci":        {{Conclusion: checks.Success, AppID: actions, AppSlug: "github-actions"}},
					"lint":      {{Conclusion: checks.Success, AppID: actions, AppSlug: "github-actions"}},
					"unrelated": {{Conclusion: checks.Failure}},
				},
				OwnRun: &success,
			}
	}
	cases := []struct {
		name    string
		policy  func(*Policy)
		change  func(*Report, *PRState)
		merge   bool
		recheck bool
		reasons []string
		codes   []Code // one per reason
	}{
		{name: "ready", merge: true},
		{
			name:    "merge disabled",
			policy:  func(p *Policy) { p.Merge.Enabled = false },
			codes:   []Code{CodeMergingDisabled},
			reasons: []string{"merging is disabled by the repository policy"},
		},
		{
			name:    "draft",
			change:  func(_ *Report, pr *PRState) { pr.Draft = true },
			codes:   []Code{CodeDraft},
			reasons: []string{"the pull request is a draft"},
		},
		{
			name:    "held",
			change:  func(_ *Report, pr *PRState) { pr.Held = true },
			codes:   []Code{CodeHold},
			reasons: []string{"the pull request is held (do-not-merge/hold label or /hold)"},
		},
		{
			name:    "not approved",
			change:  func(_ *Report, pr *PRState) { pr.Approved = false },
			codes:   []Code{CodeApprovalMissing},
			reasons: []string{"the pull request is not approved"},
		},
		{
			name:    "check failed",
			change:  func(r *Report, _ *PRState) { r.Conclusions["catalogbot/fbc"] = checks.Failure },
			codes:   []Code{CodeChecksFailed},
			reasons: []string{"check catalogbot/fbc concluded failure"},
		},
		{
			name:    "neutral is not success",
			change:  func(r *Report, _ *PRState) { r.Conclusions["catalogbot/owners"] = checks.Neutral },
			codes:   []Code{CodeChecksFailed},
			reasons: []string{"check catalogbot/owners concluded neutral"},
		},
		{
			name: "the approvals check failing is approval missing",
			change: func(r *Report, pr *PRState) {
				r.Approvals = "catalogbot/owners"
				r.Conclusions["catalogbot/owners"] = checks.Failure
				pr.Approved = false
			},
			codes:   []Code{CodeApprovalMissing, CodeApprovalMissing},
			reasons: []string{"the pull request is not approved", "check catalogbot/owners concluded failure"},
		},
		{
			name: "the approvals check pending is pending",
			change: func(r *Report, _ *PRState) {
				r.Approvals = "catalogbot/owners"
				r.Conclusions["catalogbot/owners"] = checks.Pending
			},
			codes:   []Code{CodeChecksPending},
			reasons: []string{"check catalogbot/owners could not judge yet"},
		},
		{
			name:    "could not judge is not success",
			change:  func(r *Report, _ *PRState) { r.Conclusions["catalogbot/images"] = checks.Pending },
			codes:   []Code{CodeChecksPending},
			reasons: []string{"check catalogbot/images could not judge yet"},
		},
		{
			name:    "no checks",
			change:  func(r *Report, _ *PRState) { r.Conclusions = nil },
			codes:   []Code{CodeChecksPending},
			reasons: []string{"no catalogbot check has reported"},
		},
		{
			name:    "required check missing",
			change:  func(_ *Report, pr *PRState) { delete(pr.ExtraChecks, "e2e") },
			codes:   []Code{CodeChecksPending},
			reasons: []string{"required check e2e has not reported"},
		},
		{
			name:   "other checks not read yet",
			change: func(_ *Report, pr *PRState) { pr.ExtraChecks = nil },
			merge:  true,
		},
		{
			name:   "local: no forge",
			policy: func(p *Policy) { p.Merge.Enabled = false },
			change: func(_ *Report, pr *PRState) { pr.Local = true; pr.ExtraChecks = map[string][]CheckRun{} },
			merge:  true,
		},
		{
			name:    "local still needs approval",
			change:  func(_ *Report, pr *PRState) { pr.Local = true; pr.Approved = false },
			codes:   []Code{CodeApprovalMissing},
			reasons: []string{"the pull request is not approved"},
		},
		{
			name:    "required check failed",
			change:  func(_ *Report, pr *PRState) { pr.ExtraChecks["e2e"][0].Conclusion = checks.Failure },
			codes:   []Code{CodeChecksFailed},
			reasons: []string{"required check e2e concluded failure"},
		},
		{
			name:    "required check pending",
			change:  func(_ *Report, pr *PRState) { pr.ExtraChecks["e2e"][0].Conclusion = "" },
			codes:   []Code{CodeChecksPending},
			reasons: []string{"required check e2e concluded nothing"},
		},
		{
			name: "a required check of any source: another App's run counts",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["e2e"] = []CheckRun{{Conclusion: checks.Success, AppID: mallory, AppSlug: "mallory-app"}}
			},
			merge: true,
		},
		{
			name: "a required check of a named App, reported by another",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["ci"] = []CheckRun{{Conclusion: checks.Success, AppID: mallory, AppSlug: "mallory-app"}}
			},
			codes:   []Code{CodeChecksPending},
			reasons: []string{"check ci was reported by app mallory-app, not github-actions"},
		},
		{
			name: "a required check of an App named by id, reported by another",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["lint"] = []CheckRun{{Conclusion: checks.Success, AppID: mallory, AppSlug: "github-actions"}}
			},
			codes:   []Code{CodeChecksPending},
			reasons: []string{"check lint was reported by app github-actions, not 15368"},
		},
		{
			name: "a required check of an App whose run says nothing of its App",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["ci"] = []CheckRun{{Conclusion: checks.Success}}
			},
			codes:   []Code{CodeChecksPending},
			reasons: []string{"check ci was reported by app (unknown), not github-actions"},
		},
		{
			name: "another App's newer success does not hide the named App's failure",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["ci"] = []CheckRun{
					{Conclusion: checks.Success, AppID: mallory, AppSlug: "mallory-app"},
					{Conclusion: checks.Failure, AppID: actions, AppSlug: "github-actions"},
				}
			},
			codes:   []Code{CodeChecksFailed},
			reasons: []string{"required check ci concluded failure"},
		},
		{
			name: "another App's newer failure does not block the named App's success",
			change: func(_ *Report, pr *PRState) {
				pr.ExtraChecks["ci"] = []CheckRun{
					{Conclusion: checks.Failure, AppID: mallory, AppSlug: "mallory-app"},
					{Conclusion: checks.Success, AppID: actions, AppSlug: "github-actions"},
				}
			},
			merge: true,
		},
		{
			name: "own run failed",
			change: func(_ *Report, pr *PRState) {
				c := checks.Failure
				pr.OwnRun = &c
			},
			codes:   []Code{CodeChecksFailed},
			reasons: []string{"catalogbot's check run at 0123456789ab concluded failure"},
		},
		{
			name: "own run missing or in progress",
			change: func(_ *Report, pr *PRState) {
				c := checks.Conclusion("")
				pr.OwnRun = &c
			},
			codes:   []Code{CodeChecksPending},
			reasons: []string{"catalogbot's check run at 0123456789ab has not concluded"},
		},
		{
			name:   "own run not read yet",
			change: func(_ *Report, pr *PRState) { pr.OwnRun = nil },
			merge:  true,
		},
		{
			name: "local: no own run to read",
			change: func(_ *Report, pr *PRState) {
				c := checks.Conclusion("")
				pr.Local, pr.OwnRun = true, &c
			},
			merge: true,
		},
		{
			name:    "head moved",
			change:  func(_ *Report, pr *PRState) { pr.HeadSHA = moved },
			recheck: true,
			codes:   []Code{CodeHeadMoved},
			reasons: []string{"the head moved from 0123456789ab to fedcba987654 since the check"},
		},
		{
			name:    "report for another commit",
			change:  func(r *Report, _ *PRState) { r.HeadSHA = moved },
			recheck: true,
			codes:   []Code{CodeHeadMoved},
			reasons: []string{"the report is for fedcba987654, not the checked head 0123456789ab"},
		},
		{
			name: "checked SHA from the report",
			change: func(_ *Report, pr *PRState) {
				pr.CheckedSHA = ""
			},
			merge: true,
		},
		{
			name: "no checked SHA",
			change: func(r *Report, pr *PRState) {
				r.HeadSHA, pr.CheckedSHA = "", ""
			},
			recheck: true,
			codes:   []Code{CodeHeadMoved},
			reasons: []string{"the report names no checked commit"},
		},
		{
			name:    "not mergeable",
			change:  func(_ *Report, pr *PRState) { pr.Mergeable = &no },
			codes:   []Code{CodeMergeConflict},
			reasons: []string{"the pull request cannot be merged cleanly"},
		},
		{
			name:    "mergeability unknown",
			change:  func(_ *Report, pr *PRState) { pr.Mergeable = nil },
			codes:   []Code{CodeMergeability},
			reasons: []string{"mergeability unknown"},
		},
		{
			// Another package's change can still make the merge
			// result invalid (a bundle it removes that this change
			// replaces): the merge result is judged again.
			name: "base moved elsewhere",
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.BaseChangedPaths = []string{"catalog/bar/index.yaml", "catalog/foobar/index.yaml", "README.md"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch moved since the check; the merge result is judged again"},
		},
		{
			name: "the change does not apply onto the base",
			change: func(_ *Report, pr *PRState) {
				pr.Onto = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
				pr.Conflicts = []string{"catalog/foo/a.yaml", "catalog/foo/b.yaml", "catalog/foo/c.yaml", "catalog/foo/d.yaml"}
			},
			codes:   []Code{CodeMergeConflict},
			reasons: []string{"the change does not apply cleanly onto 1a2b3c4d5e6f: catalog/foo/a.yaml, catalog/foo/b.yaml, catalog/foo/c.yaml and 1 more changed on both sides"},
		},
		{
			name: "base moved in the same package",
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.BaseChangedPaths = []string{"catalog/bar/index.yaml", "catalog/foo/channels.yaml"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch changed catalog/foo since the check"},
		},
		{
			name: "base moved a whole root",
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.BaseChangedPaths = []string{"catalog"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch changed catalog/foo since the check"},
		},
		{
			name: "base paths listed but not moved",
			change: func(_ *Report, pr *PRState) {
				pr.BaseChangedPaths = []string{"catalog/foo/channels.yaml"}
			},
			merge: true,
		},
		{
			name: "base moved outside the catalog, same file",
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.TouchedPaths = append(pr.TouchedPaths, "catalog.yaml", "docs/a.md")
				pr.BaseChangedPaths = []string{"catalog.yaml", "docs/b.md"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch changed catalog.yaml since the check"},
		},
		{
			name:   "other catalog roots",
			policy: func(p *Policy) { p.Catalog.Roots = []string{"operators", "extra/catalog"} },
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.TouchedPaths = []string{"operators/foo/a.yaml", "extra/catalog/bar/b.yaml"}
				pr.BaseChangedPaths = []string{"extra/catalog/bar/c.yaml", "operators/food/a.yaml", "operators/foo/OWNERS"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch changed the catalog of extra/catalog, operators since the check"},
		},
		{
			// The roots are one catalog, validated whole: a package added
			// to one root on the base may clash with the pull request's
			// in another.
			name:   "a catalog of several roots is one unit",
			policy: func(p *Policy) { p.Catalog.Roots = []string{"catalog", "incubator"} },
			change: func(_ *Report, pr *PRState) {
				pr.BaseMoved = true
				pr.TouchedPaths = []string{"catalog/bar/catalog.yaml"}
				pr.BaseChangedPaths = []string{"incubator/bar/catalog.yaml"}
			},
			recheck: true,
			codes:   []Code{CodeBaseMoved},
			reasons: []string{"the base branch changed the catalog of catalog, incubator since the check"},
		},
		{
			name:   "everything at once",
			policy: func(p *Policy) { p.Merge.Enabled = false; p.Merge.HoldLabel = "hold" },
			change: func(r *Report, pr *PRState) {
				pr.Draft, pr.Held, pr.Approved = true, true, false
				r.Conclusions["catalogbot/owners"] = checks.Failure
				r.Conclusions["catalogbot/fbc"] = checks.Neutral
				pr.ExtraChecks = map[string][]CheckRun{}
				pr.HeadSHA = moved
				pr.Mergeable = nil
				pr.BaseMoved = true
				pr.BaseChangedPaths = []string{"catalog/foo"}
			},
			recheck: true,
			codes:   []Code{CodeMergingDisabled, CodeDraft, CodeHold, CodeApprovalMissing, CodeChecksFailed, CodeChecksFailed, CodeChecksPending, CodeChecksPending, CodeChecksPending, CodeHeadMoved, CodeMergeability, CodeBaseMoved},
			reasons: []string{
				"merging is disabled by the repository policy",
				"the pull request is a draft",
				"the pull request is held (hold label or /hold)",
				"the pull request is not approved",
				"check catalogbot/fbc concluded neutral",
				"check catalogbot/owners concluded failure",
				"required check e2e has not reported",
				"required check ci has not reported",
				"required check lint has not reported",
				"the head moved from 0123456789ab to fedcba987654 since the check",
				"mergeability unknown",
				"the base branch changed catalog/foo since the check",
			},
		},
		{
			name: "two without recheck",
			change: func(_ *Report, pr *PRState) {
				pr.Approved = false
				pr.Mergeable = &no
			},
			codes:   []Code{CodeApprovalMissing, CodeMergeConflict},
			reasons: []string{"the pull request is not approved", "the pull request cannot be merged cleanly"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := enabled()
			if c.policy != nil {
				c.policy(p)
			}
			report, pr := ready()
			if c.change != nil {
				c.change(&report, &pr)
			}
			d := p.Decide(report, pr)
			if len(c.codes) != len(c.reasons) {
				t.Fatalf("the case lists %d reasons and %d codes", len(c.reasons), len(c.codes))
			}
			want := Decision{Merge: c.merge, Method: MethodSquash, SHA: checked, Recheck: c.recheck}
			for i, r := range c.reasons {
				want.Blocks = append(want.Blocks, Block{Code: c.codes[i], Text: r})
			}
			if c.name == "no checked SHA" {
				want.SHA = ""
			}
			if !reflect.DeepEqual(d, want) {
				t.Errorf("Decide:\n got %#v\nwant %#v", d, want)
			}
		})
	}
}

// TestDecideMethod checks that the decision carries the policy's method and
// always pins the checked SHA, never the current head.
func TestDecideMethod(t *testing.T) {
	p := Default()
	p.Merge.Enabled, p.Merge.Method = true, MethodRebase
	yes := true
	d := p.Decide(Report{Conclusions: map[string]checks.Conclusion{"c": checks.Success}, HeadSHA: "aaa"},
		PRState{Approved: true, HeadSHA: "bbb", CheckedSHA: "aaa", Mergeable: &yes})
	if d.Merge || d.Method != MethodRebase || d.SHA != "aaa" || !d.Recheck {
		t.Errorf("got %+v", d)
	}
}

// TestHoldingLabel is the one rule for the hold label: it matches without
// regard to case, wherever the labels come from.
func TestHoldingLabel(t *testing.T) {
	cases := []struct {
		name   string
		hold   string
		labels []string
		want   string
	}{
		{"exact", DefaultHoldLabel, []string{"lgtm", "do-not-merge/hold"}, "do-not-merge/hold"},
		{"other case", DefaultHoldLabel, []string{"Do-Not-Merge/Hold"}, "Do-Not-Merge/Hold"},
		{"upper", "hold", []string{"HOLD"}, "HOLD"},
		{"prefix is not the label", DefaultHoldLabel, []string{"do-not-merge/hold-off", "do-not-merge"}, ""},
		{"no labels", DefaultHoldLabel, nil, ""},
		{"no hold label configured", "", []string{""}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (Merge{HoldLabel: c.hold}).HoldingLabel(c.labels); got != c.want {
				t.Errorf("HoldingLabel(%q) with %q = %q, want %q", c.labels, c.hold, got, c.want)
			}
		})
	}
}

// TestCodes keeps the set of codes closed and spelt alike: distinct,
// lower-case words joined by hyphens, as the blocked-by line and the
// metric's reason label show them.
func TestCodes(t *testing.T) {
	seen := map[Code]bool{}
	for _, c := range Codes() {
		if seen[c] {
			t.Errorf("code %q listed twice", c)
		}
		seen[c] = true
		if !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(string(c)) {
			t.Errorf("code %q is not lower-case words joined by hyphens", c)
		}
	}
	if !seen[CodeUnexplained] {
		t.Error("the codes lack unexplained")
	}
}

// TestDecisionJSON: the document carries the reasons beside the blocks,
// in the same order, so readers of either agree.
func TestDecisionJSON(t *testing.T) {
	d := Decision{Method: MethodSquash, SHA: "aaa", Blocks: []Block{
		{Code: CodeDraft, Text: "the pull request is a draft"},
		{Code: CodeApprovalMissing, Text: "the pull request is not approved"},
		{Code: CodeApprovalMissing, Text: "check owners concluded failure"},
	}}
	got, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"merge":false,"method":"squash","sha":"aaa",` +
		`"reasons":["the pull request is a draft","the pull request is not approved","check owners concluded failure"],` +
		`"blocks":[{"code":"draft","text":"the pull request is a draft"},` +
		`{"code":"approval-missing","text":"the pull request is not approved"},` +
		`{"code":"approval-missing","text":"check owners concluded failure"}],"recheck":false}`
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	if codes := JoinCodes(d.Codes()); codes != "draft,approval-missing" {
		t.Errorf("codes = %q", codes)
	}
}

// TestCodesDocumented: the App's page lists every code in its table, and
// no code that does not exist.
func TestCodesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "app.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|")
	var documented []Code
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		documented = append(documented, Code(m[1]))
	}
	if !slices.Equal(documented, Codes()) {
		t.Errorf("docs/app.md lists the codes %q; want %q, in that order", documented, Codes())
	}
}
