// Package pipeline wires the checks of a change together: what they read
// (Input) and the checks themselves, each a checks.Check over *Input. It
// sits above checks, owners and policy, which all report checks.Findings
// and so cannot be imported by checks itself.
package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/olmv1"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// Input is everything the checks of one change read. Base and Head are the
// trees of the change's base and head commits; Policy must come from Base,
// never from Head, or a change could relax the rules it is judged by.
type Input struct {
	Change *change.Change
	Base   fs.FS
	Head   fs.FS
	Policy *policy.Policy
	// Targets are the catalogs of the policy resolved against Base and
	// Head (policy.Resolved); nil means the policy's catalogs resolved
	// here.
	Targets   []policy.Target
	Approvals []owners.Approval
	// Bots are the logins whose approvals never count; nil means the
	// policy's. The review core passes the policy's plus the front end's.
	Bots []string
	// Owners is the approval state when the caller evaluated it already
	// (EvaluateOwners), so that it is computed once per review.
	Owners *owners.State
	// Group says the change is a merge queue's group: the commit the queue
	// would make the base branch, holding pull requests that were each
	// judged whole, approvals included, at their own head before the queue
	// took them. The group is judged on its content: the owners check is
	// left out, and a release the group takes away is allowed, since only
	// an approval on the pull request that took it away let that one in.
	// What a group can break that none of its pull requests broke alone
	// is the catalog as a whole, which every other check judges as usual.
	Group bool
	// WriteAccess and NoAccess are owners.Input's, under
	// owners.requireAccess: the users whose approvals may count.
	WriteAccess []string
	NoAccess    string

	// ImageOptions, when set, are how the images check reaches
	// registries; the policy's image rules replace their Policy. Nil
	// leaves the images check out. The checks never need
	// credentials that can push: use a read-only keychain or none.
	ImageOptions *images.Options
	// AllImages verifies every image reference of the catalog rather than
	// only those the change adds or changes.
	AllImages bool
	// Renderer renders the reference list when the change touches it
	// (every entry of the head, and the base's side of the entries it
	// changes or removes), and the bundle images of the catalog
	// templates it touches. It must be made with RegistryOnly, since the
	// entries are the change's data. Nil leaves them unrendered
	// (neutral), and entries owned by their names alone.
	Renderer *render.Renderer
	// Breaker holds the registries that ran out of time in this pass, so
	// that the images and references checks wait on a registry once
	// between them. Run sets a new one when it is nil, over
	// ImageOptions.Hosts.
	Breaker *registry.Breaker
	// Index, when set, keeps the package index of the base's catalog
	// roots on disk across processes (see packageIndex); nil keeps it
	// in this process only.
	Index *pkgindex.Store

	// bindOnce puts Base and Head within the policy's limits once;
	// rawBase is the Base given, for the package index (see bind).
	bindOnce sync.Once
	rawBase  fs.FS
	// images is the pass's limits.images, shared by every check that
	// contacts a registry for the change's data (see imageCap).
	images *imageCap

	// touched are the touched packages as loaded once, whole, for the
	// release guard, the graphs, the OLM v1 readiness and the cards.
	touched touchedCatalogs
	// olmv1Memo is what the OLM v1 readiness read of the touched
	// packages' bundles, shared by the catalogs that hold them.
	olmv1Memo olmv1.Memo
	// listOnce is the reference list rendered whole, once, for the
	// owners, references and release checks (see list).
	listOnce renderedList
}

// Checks returns the checks in goes through. The images check runs only
// when in says how to reach registries, the truthfulness check only when
// it also has a renderer (and images.truthfulness is not off), the
// templates check only when the policy maps templates: a check that was
// switched off is left out of the report rather than blocking every merge
// as undecided.
func Checks(in *Input) []checks.Check[*Input] {
	cs := []checks.Check[*Input]{Owners{}, FBC{}, References{}, Release{}}
	if in.Group {
		cs = cs[1:]
	}
	if in.ImageOptions != nil {
		cs = append(cs, Images{})
		// Where images are verified and rendered, the bundle blobs the
		// change adds or changes are compared with their images too,
		// unless images.truthfulness is off.
		if in.Renderer != nil && (in.Policy == nil || in.Policy.Images.Truthfulness != images.TruthOff) {
			cs = append(cs, Truth{})
		}
	}
	// Like the images check, the templates check exists only where it has
	// something to judge: a policy that maps templates to outputs.
	if in.Policy != nil && len(in.Policy.Catalog.Templates) > 0 {
		cs = append(cs, Templates{})
	}
	// Under olmv1: report, the default, the readiness is a section of the
	// summary (OLMv1Readiness), not a check that could fail.
	if in.Policy != nil && (in.Policy.OLMv1 == policy.OLMv1Warning || in.Policy.OLMv1 == policy.OLMv1Error) {
		cs = append(cs, OLMv1{})
	}
	return cs
}

// Run runs every check of Checks on in, within the policy's deadline for
// a whole pull request check (limits.checkTimeout): a check still running
// then is reported as cut short, undecided, naming the limit. The App, the
// Action and the command line all come through here (review.Evaluate),
// so a pull request that names a registry which never answers ties none
// of them up for longer.
func Run(ctx context.Context, in *Input) checks.Report {
	if in.Breaker == nil {
		in.Breaker = &registry.Breaker{}
		// The process's breaker of every host, when the front end
		// keeps one, is the pass's too: the reference list's and the
		// templates' registries learn from other jobs.
		if in.ImageOptions != nil {
			in.Breaker.Hosts = in.ImageOptions.Hosts
		}
	}
	in.bind()
	// The checks of a pass decode the same catalog files (validation, the
	// release guard, its neighbouring catalogs): once each. A caller that
	// evaluated the owners under a cache (review.Evaluate) passes it on:
	// the owners evaluation typed the changed files' documents already.
	if fbc.CacheFrom(ctx) == nil {
		ctx = fbc.WithCache(ctx, fbc.NewCache())
	}
	if limit := in.Policy.Limits.CheckTimeout; limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limit, &DeadlineError{Limit: limit})
		defer cancel()
	}
	return checks.Run(ctx, in, Checks(in)...)
}

// DeadlineError is the cause of a check cut short by limits.checkTimeout.
type DeadlineError struct{ Limit time.Duration }

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("the pull request check took longer than limits.checkTimeout (%s); raise it in %s if this repository's checks need longer", e.Limit, policy.FileName)
}

// targets are the catalogs the change is judged in.
func (in *Input) targets() []policy.Target {
	if in.Targets != nil {
		return in.Targets
	}
	t, err := in.Policy.Targets(in.Base, in.Head)
	if err != nil {
		// Resolved reports this to the review core before any check
		// runs; a caller that skipped it gets the roots one by one.
		for _, r := range in.Policy.Catalog.Roots {
			t = append(t, policy.Target{Roots: []string{r}})
		}
	}
	return t
}
