// Package review is the one review core of a pull request. The GitHub App,
// the GitHub Action and the command line each fill a PR from their world,
// call Evaluate, and decide the merge with Outcome.Decide; render.go (with
// account.go, the opening every rendering shares: the catalogs a change
// deletes, its files and what is derived from them) is the one place an
// Outcome becomes text. The front ends only translate between
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
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
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

	// Overrides replace parts of the base's policy; nil for none. Only
	// the command line sets them, from flags a user gave explicitly.
	Overrides *Overrides

	// Memory, when set, is the memory the service's checks share: the
	// checks run once what they will read is reserved in it, and a
	// check that would read more than all of it is a MemoryError.
	Memory Memory

	// Index keeps the package index of the base's catalogs on disk, so
	// that a fresh process reads only the directories whose trees it
	// has not indexed; nil keeps it in this process only.
	Index *pkgindex.Store

	// Permission asks the forge what access login has to the
	// repository, in GitHub's words (admin, maintain, write, triage,
	// read, none); nil when the front end cannot ask. It is called only
	// under owners.requireAccess, for the author and each approver.
	Permission func(ctx context.Context, login string) (string, error)
}

// Overrides are what a user may put in place of the base's policy when
// asking for a verdict on the command line. Each zero field leaves the
// policy's value.
type Overrides struct {
	// Sources replace owners.sources.
	Sources []string
	// Roots replace the catalogs: one catalog of these roots.
	Roots []string
	// ReferenceList replaces catalog.referenceList.
	ReferenceList string
	// NoSelfApproval and StickyApprovals turn those options on.
	NoSelfApproval, StickyApprovals bool
}

// apply puts the overrides in place in pol.
func (ov *Overrides) apply(pol *policy.Policy) {
	if ov == nil {
		return
	}
	if ov.Sources != nil {
		pol.Owners.Sources = slices.Clone(ov.Sources)
	}
	if ov.Roots != nil {
		pol.CatalogSets = nil
		pol.Catalog.Roots = slices.Clone(ov.Roots)
	}
	if ov.ReferenceList != "" {
		pol.Catalog.ReferenceList = ov.ReferenceList
	}
	pol.Owners.NoSelfApproval = pol.Owners.NoSelfApproval || ov.NoSelfApproval
	pol.Owners.StickyApprovals = pol.Owners.StickyApprovals || ov.StickyApprovals
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

// Onto is what a front end judges once it merged the head onto the base's
// tip (change.MergeTree gave merged, nil on conflicts, and m): the merge
// result, or the head's own tree when the two conflict, with the Merge
// that says which, for PR.Merge.
func Onto(branch string, merged, head fs.FS, m *change.Merged) (fs.FS, *Merge) {
	how := &Merge{Branch: branch, Onto: m.Onto, Conflicts: m.Conflicts}
	if merged == nil || len(m.Conflicts) > 0 {
		return head, how
	}
	return merged, how
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
	// Group says the outcome is a merge group's (EvaluateGroup): its
	// content alone was judged, and its approvals count as given.
	Group bool `json:"group,omitempty"`
	// Merge is how the head was put onto the base for the check; nil
	// when the head's own tree was judged against the base.
	Merge *Merge `json:"merge,omitempty"`

	// Touched are the paths the change touches, renames on both sides.
	Touched []string `json:"-"`
	// Files are the change's files as its diff lists them, for the
	// summary's account of the change in its author's terms.
	Files []change.File `json:"-"`
	// RemovedRoots are the catalog roots the base holds and the head
	// does not: every file under them is removed.
	RemovedRoots []string `json:"-"`
	// Graphs are the upgrade graphs, on the head, of the channels whose
	// graph the change changed; MoreGraphs counts those left out.
	Graphs     []pipeline.Graph `json:"-"`
	MoreGraphs int              `json:"-"`
	// Readiness is the OLM v1 readiness of the touched packages, read
	// under olmv1: report (the default), for the summary's section.
	Readiness []pipeline.Readiness `json:"-"`
	// Cards are the storefront cards of the touched packages, before
	// and after.
	Cards []pipeline.Card `json:"-"`
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
	return evaluate(ctx, pr, false)
}

// Group is a merge queue's group as a front end knows it. Change.BaseSHA
// is the group's base (merge_group.base_sha, the base branch's tip it was
// built on) and Change.HeadSHA its commit (merge_group.head_sha): the
// commit the queue makes the base branch when the group's required checks
// pass, holding one or more pull requests.
type Group struct {
	Change     *change.Change
	Base, Head fs.FS
	// ImageOptions, AllImages and Renderer are as for a PR. A group has
	// no conversation, so no bots to ignore in it.
	ImageOptions *images.Options
	AllImages    bool
	Renderer     *render.Renderer
	// Memory is as for a PR.
	Memory Memory
	Index  *pkgindex.Store
}

// GroupNote is what the report of a merge group says it judged.
const GroupNote = "A merge group: the commit the merge queue would make the base branch. Its content is judged whole; " +
	"the approvals were judged on each of its pull requests, at its own head, before the queue took it."

// EvaluateGroup reviews a merge queue's group on its content alone. The
// queue admits a pull request only once its required checks passed at its
// head, catalogbot's among them, which judged its approvals (and the root
// approvals that let it take a release away) against what it changes; the
// group's commit holds nothing else. What the queue's commit can break
// that none of its pull requests broke alone is the catalog as it will be
// published (two pull requests adding the same channel in different
// files, say), and every content check judges that as for a pull request
// (pipeline.Input.Group). Judging the group with the union of its pull
// requests' approvals instead would read each one's conversation again,
// to grant nothing the per-pull-request checks did not already require.
// A group is never a draft, holds no /hold and carries no labels: those
// were the pull requests' and were decided before the queue took them.
func EvaluateGroup(ctx context.Context, g *Group) (*Outcome, error) {
	return evaluate(ctx, &PR{Change: g.Change, Base: g.Base, Head: g.Head,
		ImageOptions: g.ImageOptions, AllImages: g.AllImages, Renderer: g.Renderer, Memory: g.Memory, Index: g.Index, NoEventsWhy: GroupNote}, true)
}

func evaluate(ctx context.Context, pr *PR, group bool) (*Outcome, error) {
	o, in, err := prepare(ctx, pr, group)
	if err != nil || in == nil {
		return o, err
	}
	// From here the checks read the catalogs, the owners evaluation
	// first (it attributes the changed files to packages).
	release, err := reserve(ctx, pr.Memory, in)
	if err != nil {
		return nil, err
	}
	defer release()
	// The owners evaluation and the checks decode the same changed files
	// (their blobs, then their validation): under one cache, once.
	pass := fbc.WithCache(ctx, fbc.NewCache())
	if !group {
		// The owners check and everything after it share one evaluation.
		if st, err := pipeline.EvaluateOwners(pass, in); err == nil {
			o.Owners, in.Owners = st, st
		}
		o.Hold = holdOf(o.Policy, pr.Labels, o.Activity, o.Owners)
	}
	o.Report = pipeline.Run(pass, in)
	// The graphs read what the release guard loaded; one that cannot be
	// drawn leaves the picture out, never the verdict.
	o.Graphs, o.MoreGraphs, _ = pipeline.Graphs(pass, in)
	if m := o.Policy.OLMv1; m == "" || m == policy.OLMv1Report {
		// A section, not a verdict: one that cannot be read is left out.
		o.Readiness, _ = pipeline.OLMv1Readiness(pass, in)
	}
	o.Cards, _ = pipeline.Cards(pass, in)
	// A read of either tree that got bytes other than the object git
	// named leaves no verdict, whatever a check made of the failure.
	if err := misread(pr); err != nil {
		return nil, err
	}
	return o, nil
}

// EvaluateOwners is the approval state of pr alone, as Evaluate computes
// it for the owners check, the status comment and the decision: the same
// policy read the same way, the same approvals, without the other checks.
// An invalid policy is an Outcome whose PolicyFindings say why; an error
// says the approvals could not be judged at all.
func EvaluateOwners(ctx context.Context, pr *PR) (*Outcome, error) {
	o, in, err := prepare(ctx, pr, false)
	if err != nil || in == nil {
		return o, err
	}
	st, err := pipeline.EvaluateOwners(ctx, in)
	if err != nil {
		return nil, err
	}
	o.Owners = st
	o.Hold = holdOf(o.Policy, pr.Labels, o.Activity, o.Owners)
	if err := misread(pr); err != nil {
		return nil, err
	}
	return o, nil
}

// prepare reads the base's policy and the conversation into an Outcome
// and the checks' Input; the Input is nil when the policy is invalid.
func prepare(ctx context.Context, pr *PR, group bool) (*Outcome, *pipeline.Input, error) {
	o := &Outcome{
		BaseSHA:     pr.Change.BaseSHA,
		HeadSHA:     pr.Change.HeadSHA,
		Draft:       pr.Draft,
		Group:       group,
		Merge:       pr.Merge,
		Touched:     pr.Change.Paths(),
		Files:       pr.Change.Files,
		eventsRead:  -1,
		noEventsWhy: pr.NoEventsWhy,
	}
	if pr.EventsRead {
		o.eventsRead = len(pr.Events)
	}
	var lo policy.LoadOptions
	if pr.Index != nil {
		// What the conventions derive from the base's operators/ is
		// kept beside the package index, by the directory's tree id.
		lo.Records = pr.Index
	}
	pol, findings, err := policy.LoadFrom(pr.Base, lo)
	if err != nil {
		return nil, nil, err
	}
	if len(findings) > 0 {
		o.PolicyFindings = findings
		return o, nil, nil
	}
	pr.Overrides.apply(pol)
	// The catalogs the policy names are found in both trees, so that one
	// the change adds or removes is judged as a catalog on both sides.
	pol, targets, err := pol.Resolved(pr.Base, pr.Head)
	if err != nil {
		o.PolicyFindings = []checks.Finding{policy.TargetsFinding(err)}
		return o, nil, nil
	}
	o.Policy = pol
	o.RemovedRoots = removedRoots(targets, pr.Base, pr.Head)

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
		Group:        group,
		Index:        pr.Index,
	}
	if pol.Owners.RequireAccess != "" && !group {
		if in.WriteAccess, in.NoAccess, err = writeAccess(ctx, pr, in.Approvals); err != nil {
			return nil, nil, err
		}
	}
	return o, in, nil
}

// writeAccess are the author and the approvers whom the forge says may
// write to the repository, for owners.requireAccess. Without a way to ask
// the forge nobody's approval counts, and why says so: the rule fails
// closed rather than passing approvals it could not check.
func writeAccess(ctx context.Context, pr *PR, approvals []owners.Approval) (writers []string, why string, err error) {
	writers = []string{}
	if pr.Permission == nil {
		return writers, "cannot be checked for write access here, which approvals need (owners.requireAccess); the App checks it", nil
	}
	logins := []string{pr.Change.Author}
	for _, a := range approvals {
		logins = append(logins, a.User)
	}
	asked := map[string]bool{}
	for _, l := range logins {
		n := owners.NormLogin(l)
		if n == "" || asked[n] {
			continue
		}
		asked[n] = true
		perm, err := pr.Permission(ctx, n)
		if err != nil {
			return nil, "", fmt.Errorf("read the access of %s to the repository: %w", n, err)
		}
		switch perm {
		case "admin", "maintain", "write":
			writers = append(writers, n)
		}
	}
	return writers, "", nil
}

// misread says whether a read of either tree got bytes other than the
// object git named.
func misread(pr *PR) error {
	for _, fsys := range []fs.FS{pr.Base, pr.Head} {
		if err := change.Misread(fsys); err != nil {
			return err
		}
	}
	return nil
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

// Approved says whether the owners approved the change at its head. A
// merge group's approvals were judged on each of its pull requests
// (EvaluateGroup): it counts as approved.
func (o *Outcome) Approved() bool {
	return o.Valid() && (o.Group || pipeline.Approved(o.Report))
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

// removedRoots are the roots of targets that are directories on base and
// absent from head.
func removedRoots(targets []policy.Target, base, head fs.FS) []string {
	var out []string
	for _, t := range targets {
		for _, r := range t.Roots {
			if r == "." || slices.Contains(out, r) {
				continue
			}
			if info, err := fs.Stat(base, r); err != nil || !info.IsDir() {
				continue
			}
			if _, err := fs.Stat(head, r); errors.Is(err, fs.ErrNotExist) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}
