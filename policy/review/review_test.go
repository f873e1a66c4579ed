package review

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

const (
	baseSHA = "b000000000000000000000000000000000000000"
	headSHA = "a111111111111111111111111111111111111111"
)

// repo is the base tree every case starts from: packages foo (alice) and
// bar (bob) under catalog/, and a policy with one bot of its own.
func repo() fstest.MapFS {
	bar := strings.ReplaceAll(fbctest.Foo, "foo", "bar")
	return fstest.MapFS{
		".catalogbot.yaml":          {Data: []byte("owners:\n  bots: [policy-robot]\n")},
		"OWNERS":                    {Data: []byte("approvers: [root-owner]\n")},
		"catalog/foo/OWNERS":        {Data: []byte("approvers: [alice]\n")},
		"catalog/foo/catalog.yaml":  {Data: []byte(fbctest.Foo)},
		"catalog/bar/OWNERS":        {Data: []byte("approvers: [bob]\n")},
		"catalog/bar/catalog.yaml":  {Data: []byte(bar)},
		"catalog/foo/.indexignore":  {Data: []byte("OWNERS\nnotes\n")},
		"catalog/bar/.indexignore":  {Data: []byte("OWNERS\nnotes\n")},
		"catalog/foo/notes/README":  {Data: []byte("notes\n")},
		"catalog/bar/notes/README2": {Data: []byte("notes\n")},
	}
}

// edit is a change of one file in foo, by author.
func edit(author string) (*change.Change, fstest.MapFS, fstest.MapFS) {
	base, head := repo(), repo()
	head["catalog/foo/notes/README"] = &fstest.MapFile{Data: []byte("more notes\n")}
	c := &change.Change{Number: 7, Author: author, BaseSHA: baseSHA, HeadSHA: headSHA,
		Files: []change.File{{Path: "catalog/foo/notes/README", Status: change.Modified}}}
	return c, base, head
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func comment(user, body string, minutes int) owners.Event {
	return owners.Event{User: user, Body: body, Time: t0.Add(time.Duration(minutes) * time.Minute), CommitSHA: headSHA}
}

// TestEvaluate is the table of the rules the review core owns; each case
// is one rule, run the same way whichever front end fills the PR.
func TestEvaluate(t *testing.T) {
	cases := []struct {
		name     string
		pr       func() *PR
		approved bool
		hold     Hold
		merge    bool
		reasons  []string
	}{
		{
			name:     "an owner's change merges",
			pr:       func() *PR { c, b, h := edit("alice"); return &PR{Change: c, Base: b, Head: h} },
			approved: true, merge: true,
		},
		{
			name:    "a non-owner's change waits",
			pr:      func() *PR { c, b, h := edit("mallory"); return &PR{Change: c, Base: b, Head: h} },
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an owner's /approve approves",
			pr: func() *PR {
				c, b, h := edit("mallory")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{comment("alice", "/approve", 1)}}
			},
			approved: true, merge: true,
		},
		{
			name: "an owner's review approves",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "", 1)
				ev.ReviewState = owners.ReviewApproved
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			approved: true, merge: true,
		},
		{
			name: "the hold label holds in any case",
			pr: func() *PR {
				c, b, h := edit("alice")
				return &PR{Change: c, Base: b, Head: h, Labels: []string{"Do-Not-Merge/Hold"}}
			},
			approved: true, hold: Hold{Held: true, By: "the Do-Not-Merge/Hold label"},
			reasons: []string{"the pull request is held (do-not-merge/hold label or /hold)"},
		},
		{
			name: "a /hold holds, its cancel lifts it",
			pr: func() *PR {
				c, b, h := edit("alice")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{comment("carol", "/hold", 1)}}
			},
			approved: true, hold: Hold{Held: true, By: "a /hold from carol"},
			reasons: []string{"the pull request is held (do-not-merge/hold label or /hold)"},
		},
		{
			name: "a lifted hold",
			pr: func() *PR {
				c, b, h := edit("alice")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true,
					Events: []owners.Event{comment("carol", "/hold", 1), comment("carol", "/hold cancel", 2)}}
			},
			approved: true, merge: true,
		},
		{
			name: "a passer-by cannot lift an owner's hold",
			pr: func() *PR {
				c, b, h := edit("alice")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true,
					Events: []owners.Event{comment("bob", "/hold", 1), comment("mallory", "/unhold", 2)}}
			},
			approved: true, hold: Hold{Held: true, By: "a /hold from bob", IgnoredLifts: []string{"mallory"}},
			reasons: []string{"the pull request is held (do-not-merge/hold label or /hold)"},
		},
		{
			name: "an approver of a touched path lifts anyone's hold",
			pr: func() *PR {
				c, b, h := edit("alice")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true,
					Events: []owners.Event{comment("carol", "/hold", 1), comment("alice", "/hold cancel", 2)}}
			},
			approved: true, merge: true,
		},
		{
			name: "a dismissed review's /approve counts for nothing",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "/approve", 1)
				ev.ReviewState = owners.ReviewDismissed
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an /approve edited in by another user counts for nothing",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "/approve", 1)
				ev.Edited, ev.EditedBy = true, "mallory"
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an edited /approve whose editor is unknown counts for nothing",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "/approve", 1)
				ev.Edited = true
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an author's own edit counts",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "/approve", 1)
				ev.Edited, ev.EditedBy = true, "@Alice"
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			approved: true, merge: true,
		},
		{
			// An edit by someone else voids a /hold cancel too: the
			// hold stands.
			name: "a /hold cancel edited in by another user does not lift",
			pr: func() *PR {
				c, b, h := edit("alice")
				ev := comment("carol", "/hold cancel", 2)
				ev.Edited, ev.EditedBy = true, "mallory"
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{comment("carol", "/hold", 1), ev}}
			},
			approved: true, hold: Hold{Held: true, By: "a /hold from carol"},
			reasons: []string{"the pull request is held (do-not-merge/hold label or /hold)"},
		},
		{
			// The front end could not tie the comment to the head (the
			// head was force-pushed to after it): it does not approve.
			name: "an /approve not bound to the head counts for nothing",
			pr: func() *PR {
				c, b, h := edit("mallory")
				ev := comment("alice", "/approve", 1)
				ev.CommitSHA, ev.Unbound = "", "commented before the head became this pull request's head"
				return &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{ev}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "a bot of the policy neither holds nor approves",
			pr: func() *PR {
				c, b, h := edit("mallory")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true,
					Events: []owners.Event{comment("policy-robot", "/hold", 1), comment("policy-robot", "/approve", 2)}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "a bot of the front end neither holds nor approves",
			pr: func() *PR {
				c, b, h := edit("mallory")
				return &PR{Change: c, Base: b, Head: h, Bots: []string{"service-robot"}, EventsRead: true,
					Events: []owners.Event{comment("service-robot", "/hold", 1), comment("service-robot", "/approve", 2)}}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an approval given outside the conversation comes after it",
			pr: func() *PR {
				c, b, h := edit("mallory")
				return &PR{Change: c, Base: b, Head: h, EventsRead: true,
					Events:    []owners.Event{comment("alice", "/approve cancel", 30)},
					Approvals: []owners.Approval{{User: "alice", SHA: headSHA}}}
			},
			approved: true, merge: true,
		},
		{
			name: "a rename across two packages needs both owners",
			pr: func() *PR {
				base, head := repo(), repo()
				head["catalog/foo/notes/README2"] = head["catalog/bar/notes/README2"]
				delete(head, "catalog/bar/notes/README2")
				c := &change.Change{Number: 7, Author: "alice", BaseSHA: baseSHA, HeadSHA: headSHA,
					Files: []change.File{{Path: "catalog/foo/notes/README2", PreviousPath: "catalog/bar/notes/README2", Status: change.Renamed}}}
				return &PR{Change: c, Base: base, Head: head}
			},
			reasons: []string{"the pull request is not approved", "check owners concluded failure"},
		},
		{
			name: "an invalid policy checks nothing",
			pr: func() *PR {
				c, b, h := edit("alice")
				b[".catalogbot.yaml"] = &fstest.MapFile{Data: []byte("owners:\n  selfApprove: yes\n")}
				return &PR{Change: c, Base: b, Head: h}
			},
			reasons: []string{"the repository policy on the base branch is invalid"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Evaluate(context.Background(), tc.pr())
			if err != nil {
				t.Fatal(err)
			}
			if got := o.Approved(); got != tc.approved {
				t.Errorf("Approved() = %v, want %v; owners: %+v", got, tc.approved, o.Owners)
			}
			if !reflect.DeepEqual(o.Hold, tc.hold) {
				t.Errorf("Hold = %+v, want %+v", o.Hold, tc.hold)
			}
			d := o.Decide(Forge{Local: true})
			if d.Merge != tc.merge || !reflect.DeepEqual(d.Reasons(), tc.reasons) {
				t.Errorf("Decide = merge %v, reasons %q; want %v, %q", d.Merge, d.Reasons(), tc.merge, tc.reasons)
			}
			if d.SHA != headSHA {
				t.Errorf("the decision is pinned to %q, want the checked head %q", d.SHA, headSHA)
			}
		})
	}
}

// TestVoidedReported: the status comment says which comments did not count
// and why, so that their authors know to comment again.
func TestVoidedReported(t *testing.T) {
	c, b, h := edit("mallory")
	edited := comment("alice", "/approve", 1)
	edited.Edited, edited.EditedBy = true, "mallory"
	unknown := comment("bob", "/approve", 2)
	unknown.Edited = true
	unbound := comment("alice", "/approve", 3)
	unbound.CommitSHA, unbound.Unbound = "", "the head a111111 was pushed after the pull request was opened"
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h, EventsRead: true, Events: []owners.Event{edited, unknown, unbound}})
	if err != nil {
		t.Fatal(err)
	}
	text := o.StatusComment(o.Decide(Forge{Local: true}))
	var summary strings.Builder
	if err := o.JobSummary(&summary, o.Decide(Forge{Local: true}), ""); err != nil {
		t.Fatal(err)
	}
	if want := "Not read: a comment by alice, edited by mallory, not its author"; !strings.Contains(summary.String(), want) {
		t.Errorf("the job summary lacks %q:\n%s", want, summary.String())
	}
	for _, want := range []string{
		"a comment by alice: edited by mallory, not its author",
		"a comment by bob: edited; the editor cannot be established: post the command in a new comment",
		"alice: the head a111111 was pushed after the pull request was opened",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the status comment lacks %q:\n%s", want, text)
		}
	}
}

// TestTouchedRenames: both sides of a rename are touched, for the owners
// and for the base-moved overlap alike.
func TestTouchedRenames(t *testing.T) {
	c := &change.Change{Files: []change.File{
		{Path: "catalog/foo/a.yaml", Status: change.Modified},
		{Path: "catalog/foo/b.yaml", PreviousPath: "catalog/bar/b.yaml", Status: change.Renamed},
	}}
	want := []string{"catalog/foo/a.yaml", "catalog/foo/b.yaml", "catalog/bar/b.yaml"}
	if got := c.Paths(); !slices.Equal(got, want) {
		t.Errorf("Paths() = %q, want %q", got, want)
	}
	base, head := repo(), repo()
	head["catalog/foo/b.yaml"] = &fstest.MapFile{Data: []byte("---\n")}
	head["catalog/foo/.indexignore"] = &fstest.MapFile{Data: []byte("OWNERS\nnotes\nb.yaml\n")}
	c.BaseSHA, c.HeadSHA, c.Author = baseSHA, headSHA, "alice"
	c.Files = c.Files[1:]
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	// The base changed bar since the check: the rename's old side
	// overlaps, so the decision asks for a recheck.
	yes := true
	d := o.Decide(Forge{Head: headSHA, Mergeable: &yes, Checks: map[string][]policy.CheckRun{},
		BaseMoved: true, BaseChangedPaths: []string{"catalog/bar/catalog.yaml"}})
	if !d.Recheck {
		t.Errorf("a base change to the rename's old package did not ask for a recheck: %+v", d)
	}
}

// TestDecideForge: what only the forge knows is judged only when the forge
// is asked, and what it says now adds to what was checked.
func TestDecideForge(t *testing.T) {
	c, b, h := edit("alice")
	b[".catalogbot.yaml"] = &fstest.MapFile{Data: []byte("merge:\n  enabled: true\n  requiredChecks: [e2e, {name: ci, app: github-actions}]\n")}
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	const actionsID, otherID = 15368, 666
	actions := func(c checks.Conclusion) policy.CheckRun {
		return policy.CheckRun{Conclusion: c, AppID: actionsID, AppSlug: "github-actions"}
	}
	other := func(c checks.Conclusion) policy.CheckRun {
		return policy.CheckRun{Conclusion: c, AppID: otherID, AppSlug: "other-app"}
	}
	own := func(c checks.Conclusion) *checks.Conclusion { return &c }
	ready := func() Forge {
		return Forge{Head: headSHA, Mergeable: &yes, Checks: map[string][]policy.CheckRun{
			"e2e": {actions(checks.Success)},
			"ci":  {actions(checks.Success)},
		}, Own: own(checks.Success)}
	}
	cases := []struct {
		name    string
		forge   func(*Forge)
		merge   bool
		recheck bool
		reason  string
	}{
		{"ready", nil, true, false, ""},
		{"required check missing", func(f *Forge) { delete(f.Checks, "e2e") }, false, false, "required check e2e has not reported"},
		{"checks not read yet: can only say no", func(f *Forge) { f.Checks = nil }, true, false, ""},
		{"head moved", func(f *Forge) { f.Head = baseSHA }, false, true, ""},
		{"labelled hold since", func(f *Forge) { f.Labels = []string{"DO-NOT-MERGE/HOLD"} }, false, false, ""},
		{"draft since", func(f *Forge) { f.Draft = true }, false, false, ""},
		{"mergeability unknown", func(f *Forge) { f.Mergeable = nil }, false, false, ""},
		// The front end's own run at the checked head must say success,
		// whatever the outcome says.
		{"own run failed", func(f *Forge) { f.Own = own(checks.Failure) }, false, false,
			"catalogbot's check run at " + headSHA[:12] + " concluded failure"},
		{"own run not concluded", func(f *Forge) { f.Own = own("") }, false, false,
			"catalogbot's check run at " + headSHA[:12] + " has not concluded"},
		{"own run not read yet: can only say no", func(f *Forge) { f.Own = nil }, true, false, ""},
		{"local: no own run", func(f *Forge) { f.Local, f.Own = true, own("") }, true, false, ""},
		// Check runs are identified by the App that made them.
		{"a check of a named App reported by another App", func(f *Forge) {
			f.Checks["ci"] = []policy.CheckRun{other(checks.Success)}
		}, false, false, "check ci was reported by app other-app, not github-actions"},
		{"another App's newer success over the named App's failure", func(f *Forge) {
			f.Checks["ci"] = []policy.CheckRun{other(checks.Success), actions(checks.Failure)}
		}, false, false, "required check ci concluded failure"},
		{"another App's newer failure over the named App's success", func(f *Forge) {
			f.Checks["ci"] = []policy.CheckRun{other(checks.Failure), actions(checks.Success)}
		}, true, false, ""},
		{"a bare name accepts any source", func(f *Forge) {
			f.Checks["e2e"] = []policy.CheckRun{other(checks.Success)}
		}, true, false, ""},
		{"another App's run named catalogbot is no catalogbot check", func(f *Forge) {
			f.Checks["catalogbot"] = []policy.CheckRun{other(checks.Failure)}
		}, true, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := ready()
			if tc.forge != nil {
				tc.forge(&f)
			}
			d := o.Decide(f)
			if d.Merge != tc.merge || d.Recheck != tc.recheck {
				t.Errorf("Decide = %+v, want merge %v recheck %v", d, tc.merge, tc.recheck)
			}
			if tc.reason != "" && !slices.Contains(d.Reasons(), tc.reason) {
				t.Errorf("reasons %q lack %q", d.Reasons(), tc.reason)
			}
		})
	}
}

// imageEdit is an owner's change of foo's bundle image to image.
func imageEdit(image string) *PR {
	base, head := repo(), repo()
	head["catalog/foo/catalog.yaml"] = &fstest.MapFile{Data: []byte(strings.Replace(fbctest.Foo, "quay.io/example/foo-bundle:v1.0.0", image, 1))}
	c := &change.Change{Number: 7, Author: "alice", BaseSHA: baseSHA, HeadSHA: headSHA,
		Files: []change.File{{Path: "catalog/foo/catalog.yaml", Status: change.Modified}}}
	return &PR{Change: c, Base: base, Head: head, ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}}
}

// TestCouldNotJudge is the table of a registry that cannot be asked: the
// verdict is pending (never neutral or success), it blocks the merge,
// says what it waits for, and leaves the valid output unset; a refusal
// and a failure are judged.
func TestCouldNotJudge(t *testing.T) {
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("foo-bundle:v1.0.1"))
	limited := registrytest.New(t)
	limited.Fail(registrytest.Fault{Status: 429})
	locked := registrytest.New(t)
	locked.RequireBasic("u", "p")
	down := registrytest.NewHangup(t)

	cases := []struct {
		name    string
		image   string
		verdict checks.Conclusion
		reason  string
		says    string // in CouldNotJudge; "" for none
		judged  bool
	}{
		{name: "the registry answers", image: reg.Ref("foo-bundle:v1.0.1"), verdict: checks.Success, judged: true},
		{name: "rate limited", image: limited.Ref("foo-bundle:v1.0.1"), verdict: checks.Pending,
			reason: "check images could not judge yet", says: "Could not judge yet: registry " + limited.Host + " (1 reference) rate limited the requests."},
		{name: "unreachable", image: down.Ref("foo-bundle:v1.0.1"), verdict: checks.Pending,
			reason: "check images could not judge yet", says: "registry " + down.Host + " (1 reference) did not answer in time or could not be reached"},
		// Credentials do not come by waiting: a refusal is judged.
		{name: "unauthorized", image: locked.Ref("foo-bundle:v1.0.1"), verdict: checks.Failure,
			reason: "check images concluded failure", judged: true},
		{name: "missing", image: reg.Ref("foo-bundle:v9"), verdict: checks.Failure,
			reason: "check images concluded failure", judged: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Evaluate(context.Background(), imageEdit(tc.image))
			if err != nil {
				t.Fatal(err)
			}
			if c, title := o.Verdict(); c != tc.verdict {
				t.Fatalf("Verdict = %s %q, want %s", c, title, tc.verdict)
			}
			d := o.Decide(Forge{Local: true})
			if d.Merge != (tc.verdict == checks.Success) || (tc.reason != "" && !slices.Contains(d.Reasons(), tc.reason)) {
				t.Errorf("Decide = %+v, want merge %v with %q", d, tc.verdict == checks.Success, tc.reason)
			}
			if got := o.CouldNotJudge(); (tc.says == "") != (got == "") || !strings.Contains(got, tc.says) {
				t.Errorf("CouldNotJudge = %q, want it to say %q", got, tc.says)
			}
			if out := o.Outputs(d); out.Judged != tc.judged || (tc.judged && out.Valid != (tc.verdict == checks.Success)) {
				t.Errorf("Outputs = %+v, want judged %v", out, tc.judged)
			}
			var text strings.Builder
			if err := o.WriteText(&text, d, true); err != nil {
				t.Fatal(err)
			}
			if tc.says != "" && !strings.Contains(text.String(), tc.says) {
				t.Errorf("the text does not say %q:\n%s", tc.says, text.String())
			}
			var summary strings.Builder
			if err := o.JobSummary(&summary, d, ""); err != nil {
				t.Fatal(err)
			}
			if pending := tc.verdict == checks.Pending; pending != strings.Contains(summary.String(), "**Could not judge** `a11111111111`: registry ") {
				t.Errorf("the job summary says could not judge: %v, want %v:\n%s", !pending, pending, summary.String())
			}
		})
	}
}

// TestPendingRun: the App's run of a pending verdict stays pending while
// tries are left, saying when it tries again, and fails after the last.
func TestPendingRun(t *testing.T) {
	limited := registrytest.New(t)
	limited.Fail(registrytest.Fault{Status: 429})
	o, err := Evaluate(context.Background(), imageEdit(limited.Ref("foo-bundle:v1.0.1")))
	if err != nil {
		t.Fatal(err)
	}
	next := time.Date(2026, 11, 1, 12, 4, 0, 0, time.UTC)
	c, title, summary := o.PendingRun(Retry{Try: 2, Tries: 7, Next: next, In: 2 * time.Minute})
	if c != checks.Pending || title != "Could not judge: images" ||
		!strings.Contains(summary, "Try 2 of 7: the check stays in progress and tries again in 2m0s (at 12:04:00 UTC)") || !strings.Contains(summary, "rate limited") {
		t.Errorf("try 2 of 7 = %s %q\n%s", c, title, summary)
	}
	c, title, summary = o.PendingRun(Retry{Try: 7, Tries: 7})
	if c != checks.Failure || title != "Could not judge: images after 7 tries" || !strings.Contains(summary, "fails rather than pass") {
		t.Errorf("try 7 of 7 = %s %q\n%s", c, title, summary)
	}
}

// TestDecideCodes: the owners check failing is the approval missing, not
// a broken catalog, and an invalid policy has its own code.
func TestDecideCodes(t *testing.T) {
	cases := []struct {
		name  string
		pr    func() *PR
		forge Forge
		codes []policy.Code
	}{
		{
			name:  "a non-owner's change waits for approval",
			pr:    func() *PR { c, b, h := edit("mallory"); return &PR{Change: c, Base: b, Head: h} },
			forge: Forge{Local: true},
			codes: []policy.Code{policy.CodeApprovalMissing},
		},
		{
			name: "a held, unapproved change on a moved head",
			pr: func() *PR {
				c, b, h := edit("mallory")
				return &PR{Change: c, Base: b, Head: h, Labels: []string{policy.DefaultHoldLabel}}
			},
			forge: Forge{Head: "moved"},
			codes: []policy.Code{policy.CodeMergingDisabled, policy.CodeHold, policy.CodeApprovalMissing, policy.CodeHeadMoved, policy.CodeMergeability},
		},
		{
			name: "an invalid policy",
			pr: func() *PR {
				c, b, h := edit("alice")
				b[".catalogbot.yaml"] = &fstest.MapFile{Data: []byte("owners:\n  selfApprove: yes\n")}
				return &PR{Change: c, Base: b, Head: h}
			},
			forge: Forge{Local: true},
			codes: []policy.Code{policy.CodePolicyInvalid},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Evaluate(context.Background(), tc.pr())
			if err != nil {
				t.Fatal(err)
			}
			d := o.Decide(tc.forge)
			if got := d.Codes(); !slices.Equal(got, tc.codes) {
				t.Errorf("codes = %q, want %q; reasons %q", got, tc.codes, d.Reasons())
			}
		})
	}
}

// TestBlockedText: the blocked-by line a script reads gives the codes of
// the reasons listed under it, once each, and unexplained when there are
// none.
func TestBlockedText(t *testing.T) {
	cases := []struct {
		name   string
		blocks []policy.Block
		want   string
	}{
		{
			name: "codes once each, in order",
			blocks: []policy.Block{
				{Code: policy.CodeApprovalMissing, Text: "the pull request is not approved"},
				{Code: policy.CodeChecksPending, Text: "check images could not judge yet"},
				{Code: policy.CodeApprovalMissing, Text: "check owners concluded failure"},
			},
			want: "blocked-by: approval-missing,checks-pending\n\n" +
				"- `approval-missing`: the pull request is not approved\n" +
				"- `checks-pending`: check images could not judge yet\n" +
				"- `approval-missing`: check owners concluded failure\n",
		},
		{
			name: "none is unexplained",
			want: "blocked-by: unexplained\n\n" +
				"- `unexplained`: nothing recorded why this pull request is not merged; this is a bug in catalogbot\n",
		},
		{
			name:   "a reason stays on its line",
			blocks: []policy.Block{{Code: policy.CodeRetrying, Text: "one\nblocked-by: merging"}},
			want:   "blocked-by: retrying\n\n- `retrying`: one\\nblocked-by: merging\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := BlockedText(tc.blocks)
			if got != tc.want {
				t.Errorf("BlockedText:\n got %q\nwant %q", got, tc.want)
			}
			codes, ok := ParseBlockedBy(got)
			if want := policy.CodesOf(policy.OrUnexplained(tc.blocks)); !ok || !slices.Equal(codes, want) {
				t.Errorf("ParseBlockedBy = %q, %v; want %q", codes, ok, want)
			}
		})
	}
	if codes, ok := ParseBlockedBy("no such line\n"); ok || codes != nil {
		t.Errorf("ParseBlockedBy of a text without the line = %q, %v", codes, ok)
	}
}
