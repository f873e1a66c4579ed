// Package review is the one review core of a pull request. The GitHub App,
// the GitHub Action and the command line each fill a PR from their world,
// call Evaluate, and decide the merge with Outcome.Decide; render.go is the
// one place an Outcome becomes text. The front ends only translate between
// GitHub, a workflow or a terminal and this package: a rule written in a
// front end is a rule written twice, and two copies drift.
//
// Every rule about a pull request that is not a check of its content lives
// here or below: which bots are ignored, what holds a pull request, which
// paths it touches, how approvals from the conversation and from the
// command line combine, and which parts of the merge decision only the
// forge can answer.
package review

import (
	"context"
	"io/fs"
	"slices"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// PR is a pull request as a front end knows it. Base and Head are the trees
// of the change's two commits; the policy and the OWNERS files are read from
// Base only.
type PR struct {
	Change     *change.Change
	Base, Head fs.FS

	// Draft and Labels are the pull request's as the front end last read
	// them.
	Draft  bool
	Labels []string

	// Events are the reviews and comments of the pull request, each
	// bound to the head it was given on. EventsRead says they were read
	// at all; without them only the author's approval (and Approvals)
	// count, and the report says why (NoEventsWhy).
	Events      []owners.Event
	EventsRead  bool
	NoEventsWhy string

	// Approvals are given outside the conversation (the command line's
	// --approve). They count as given after every event, so that a stale
	// "/approve cancel" does not undo an explicit approval.
	Approvals []owners.Approval

	// Bots are the front end's own bots, ignored besides the policy's:
	// the App's login and the service's configured bots.
	Bots []string

	// Merge, when set, says what Head is: the tree the base branch will
	// hold once the change is merged (the head merged onto the base's
	// tip, change.Merge), or, when the change does not apply there, the
	// pull request's own head with the paths that conflict. A merge is
	// only ever made from a verdict on the merge result.
	Merge *Merge

	// How the images and references checks reach registries; see
	// pipeline.Input.
	ImageOptions *images.Options
	AllImages    bool
	Renderer     *render.Renderer
}

// Merge is how a pull request's head was put onto its base branch for the
// check.
type Merge struct {
	// Branch is the base branch, Onto the commit of its tip the head was
	// merged onto.
	Branch string `json:"branch"`
	Onto   string `json:"onto"`
	// Conflicts are the paths both sides changed in ways that do not
	// combine; when there are any, Head is the pull request's own head,
	// judged alone, and nothing merges.
	Conflicts []string `json:"conflicts,omitempty"`
}

// Hold is what holds a pull request, if anything.
type Hold struct {
	Held bool `json:"held"`
	// By names what holds it: "the do-not-merge/hold label" or "a /hold
	// from alice".
	By string `json:"by,omitempty"`
	// IgnoredLifts are the users whose /hold cancel did not count: only
	// the hold's placer and the approvers of a touched path may lift one.
	IgnoredLifts []string `json:"ignoredLifts,omitempty"`
}

// Outcome is everything a review concluded about one head commit.
type Outcome struct {
	BaseSHA string `json:"baseSHA"`
	HeadSHA string `json:"headSHA"`
	// Policy is the base's policy; nil when PolicyFindings say it is
	// invalid, in which case nothing else was evaluated.
	Policy         *policy.Policy   `json:"-"`
	PolicyFindings []checks.Finding `json:"policy,omitempty"`
	// Report holds every check's result.
	Report checks.Report `json:"-"`
	// Owners is the approval state, computed once for the owners check,
	// the status comment and the decision alike. Nil when the OWNERS
	// files could not be read (the owners check then says why).
	Owners *owners.State `json:"-"`
	// Activity is what the conversation said: approvals and holds, bots
	// left out.
	Activity owners.Activity `json:"-"`
	Hold     Hold            `json:"hold"`
	Draft    bool            `json:"draft,omitempty"`
	// Merge is how the head was put onto the base for the check; nil
	// when the head's own tree was judged against the base.
	Merge *Merge `json:"merge,omitempty"`

	// Touched are the paths the change touches, renames on both sides.
	Touched []string `json:"-"`
	// Graphs are the upgrade graphs, on the head, of the channels whose
	// graph the change changed; MoreGraphs counts those left out.
	Graphs     []pipeline.Graph `json:"-"`
	MoreGraphs int              `json:"-"`
	// eventsRead is how many reviews and comments the approvals were
	// read from, -1 when the conversation was not read; noEventsWhy
	// then says why. The rendered notes tell the reader.
	eventsRead  int
	noEventsWhy string
}

// Valid says whether the policy could be read, so that checks ran.
func (o *Outcome) Valid() bool { return len(o.PolicyFindings) == 0 }

// Evaluate reviews pr: reads the base's policy, what the conversation
// said, the OWNERS state, and runs every check. An invalid policy is an
// Outcome whose PolicyFindings say why, with nothing else evaluated:
// checking against rules nobody wrote would apply rules nobody meant. The
// error is for failures that allow no verdict at all.
func Evaluate(ctx context.Context, pr *PR) (*Outcome, error) {
	o := &Outcome{
		BaseSHA:     pr.Change.BaseSHA,
		HeadSHA:     pr.Change.HeadSHA,
		Draft:       pr.Draft,
		Merge:       pr.Merge,
		Touched:     pr.Change.Paths(),
		eventsRead:  -1,
		noEventsWhy: pr.NoEventsWhy,
	}
	if pr.EventsRead {
		o.eventsRead = len(pr.Events)
	}
	pol, findings, err := policy.Load(pr.Base)
	if err != nil {
		return nil, err
	}
	if len(findings) > 0 {
		o.PolicyFindings = findings
		return o, nil
	}
	// The catalogs the policy names are found in both trees, so that one
	// the change adds or removes is judged as a catalog on both sides.
	pol, targets, err := pol.Resolved(pr.Base, pr.Head)
	if err != nil {
		o.PolicyFindings = []checks.Finding{{Rule: policy.RuleValue, Severity: checks.SeverityError, File: policy.FileName, Message: err.Error()}}
		return o, nil
	}
	o.Policy = pol

	bots := Bots(pol, pr.Bots)
	o.Activity = owners.ReadEvents(pr.Events, bots)

	in := &pipeline.Input{
		Change:       pr.Change,
		Base:         pr.Base,
		Head:         pr.Head,
		Policy:       pol,
		Targets:      targets,
		Approvals:    approvals(o.Activity.Approvals, pr.Approvals),
		Bots:         bots,
		ImageOptions: pr.ImageOptions,
		AllImages:    pr.AllImages,
		Renderer:     pr.Renderer,
	}
	// The owners check and everything after it share one evaluation.
	if st, err := pipeline.EvaluateOwners(ctx, in); err == nil {
		o.Owners, in.Owners = st, st
	}
	o.Hold = holdOf(pol, pr.Labels, o.Activity, o.Owners)
	o.Report = pipeline.Run(ctx, in)
	// The graphs read what the release guard loaded; one that cannot be
	// drawn leaves the picture out, never the verdict.
	o.Graphs, o.MoreGraphs, _ = pipeline.Graphs(ctx, in)
	// A read of either tree that got bytes other than the object git
	// named leaves no verdict, whatever a check made of the failure.
	for _, fsys := range []fs.FS{pr.Base, pr.Head} {
		if err := change.Misread(fsys); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// Bots are the logins whose comments and reviews never count: the
// policy's and the front end's own. Every "[bot]" login is ignored too, by
// owners.
func Bots(pol *policy.Policy, own []string) []string {
	bots := slices.Clone(pol.Owners.Bots)
	for _, b := range own {
		if b != "" && !slices.Contains(bots, b) {
			bots = append(bots, b)
		}
	}
	return bots
}

// holdOf says what holds the pull request: the hold label (in any case)
// first, since it is what a maintainer sees, then a /hold that stands. A
// /hold is lifted by its placer or by an approver of a touched path
// (spec/owners.md section 2, rule 13); without an OWNERS state only the
// placer may, which fails closed.
func holdOf(pol *policy.Policy, labels []string, act owners.Activity, st *owners.State) Hold {
	held, placer, ignored := act.HoldState(func(login string) bool { return approvesTouched(st, login) })
	h := Hold{IgnoredLifts: ignored}
	if l := pol.Merge.HoldingLabel(labels); l != "" {
		h.Held, h.By = true, "the "+l+" label"
		return h
	}
	if held {
		h.Held, h.By = true, "a /hold"
		if placer != "" {
			h.By += " from " + placer
		}
	}
	return h
}

// approvesTouched says whether login may approve any path the change
// touches.
func approvesTouched(st *owners.State, login string) bool {
	if st == nil {
		return false
	}
	for _, f := range st.Files {
		for _, a := range f.Approvers {
			if owners.NormLogin(a) == login {
				return true
			}
		}
	}
	return false
}

// approvals puts the extra approvals after the conversation's: each is
// dated a second after the one before it, starting after the latest event.
func approvals(fromEvents, extra []owners.Approval) []owners.Approval {
	if len(extra) == 0 {
		return fromEvents
	}
	var latest time.Time
	for _, ap := range fromEvents {
		if ap.Time.After(latest) {
			latest = ap.Time
		}
	}
	out := slices.Clone(fromEvents)
	for i, ap := range extra {
		ap.Time = latest.Add(time.Duration(i+1) * time.Second)
		out = append(out, ap)
	}
	return out
}

// Approved says whether the owners approved the change at its head.
func (o *Outcome) Approved() bool {
	return o.Valid() && pipeline.Approved(o.Report)
}

// Forge is what only the forge knows about the pull request now, at the
// moment of deciding: the checked head may have moved, labels may have
// been added, other tools may have reported.
type Forge struct {
	// Local says there is no forge to ask (a check on this machine or in
	// a workflow step): the checked head is the head and merges cleanly,
	// and whether merging is enabled and the checks of other tools are
	// left to whoever merges.
	Local bool
	// Head is the pull request's head now.
	Head string
	// Draft and Labels as read now; they add to the Outcome's.
	Draft  bool
	Labels []string
	// Mergeable is GitHub's verdict; nil while it is computing.
	Mergeable *bool
	// Checks are other tools' check runs at the checked head, by name:
	// of each App that made a run of the name, its newest, newest first,
	// with the App's id and slug, so that a required check naming its App
	// is judged on that App's run alone. Nil means not read yet: the
	// required checks are not judged, so such a decision can only rule a
	// merge out, and the decision that merges must read them.
	Checks map[string][]policy.CheckRun
	// Own is the conclusion of the front end's own check run at the
	// checked head, as the forge shows it now: "" when there is none or
	// it has not concluded. Only a success merges (policy.PRState's
	// OwnRun). Nil means not read yet, as for Checks.
	Own *checks.Conclusion
	// BaseMoved says the base branch moved since the check, and
	// BaseChangedPaths what it changed.
	BaseMoved        bool
	BaseChangedPaths []string
}

// Blocked says whether the pull request is a draft or held, as checked or
// as the forge says now: either stops a merge whatever else holds.
func (o *Outcome) Blocked(f Forge) (draft, held bool) {
	draft = o.Draft || f.Draft
	held = o.Hold.Held
	if o.Policy != nil && o.Policy.Merge.HoldingLabel(f.Labels) != "" {
		held = true
	}
	return draft, held
}

// Decide says whether the pull request may merge now, pinned to the
// checked head, with every reason against.
func (o *Outcome) Decide(f Forge) policy.Decision {
	if !o.Valid() {
		return policy.Decision{SHA: o.HeadSHA, Blocks: []policy.Block{{Code: policy.CodePolicyInvalid, Text: "the repository policy on the base branch is invalid"}}}
	}
	draft, held := o.Blocked(f)
	state := policy.PRState{
		Local:            f.Local,
		Draft:            draft,
		Held:             held,
		Approved:         o.Approved(),
		HeadSHA:          f.Head,
		CheckedSHA:       o.HeadSHA,
		Mergeable:        f.Mergeable,
		BaseMoved:        f.BaseMoved,
		BaseChangedPaths: f.BaseChangedPaths,
		TouchedPaths:     o.Touched,
		ExtraChecks:      f.Checks,
		OwnRun:           f.Own,
	}
	if o.Merge != nil {
		state.Conflicts, state.Onto = o.Merge.Conflicts, o.Merge.Onto
	}
	if f.Local {
		clean := true
		state.HeadSHA, state.Mergeable, state.ExtraChecks, state.OwnRun = o.HeadSHA, &clean, nil, nil
	}
	return o.Policy.Decide(policy.Report{Conclusions: o.Report.Conclusions(), Approvals: pipeline.OwnersName, HeadSHA: o.HeadSHA}, state)
}
