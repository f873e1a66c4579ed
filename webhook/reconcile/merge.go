package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// Merge results, the label values of Metrics.Merges.
const (
	MergeMerged   = "merged"
	MergeConflict = "conflict" // GitHub refused: 405 or 409
	MergeQueued   = "queued"   // put in the base branch's merge queue, which merges it
	MergeRefused  = "refused"  // what the forge says now refused a merge that what was known allowed
	// MergeUnjudged counts merges after which the base branch did not
	// hold the tree judged: something else reached it in between.
	MergeUnjudged = "unjudged"
	MergeError    = "error"
)

// maxMerges bounds the merges remembered for the approval attestation.
const maxMerges = 10000

// mergeableWaits are the pauses before reading a pull request again while
// GitHub is still computing whether it merges cleanly.
var mergeableWaits = []time.Duration{time.Second, 2 * time.Second}

// mergeInput is what a merge decision starts from: the check just made.
type mergeInput struct {
	outcome *review.Outcome
	pre     policy.Decision // on what was known before asking GitHub more
	snap    *gitcache.Snapshot
	merged  *change.Merged // the head merged onto snap's base: what was judged
	src     gitcache.Source
	base    string // base branch
	node    string // the pull request's GraphQL node id
}

// merge merges the pull request when the policy says so, pinned to the
// checked head. again asks the caller to check the pull request again: its
// head or base moved since the check, or GitHub refused the merge (405,
// 409), which is never forced.
func (r *prRun) merge(ctx context.Context, in mergeInput) (again bool, err error) {
	a := r.a
	checked := in.snap.HeadSHA
	log := r.log.With("sha", checked)
	// GitHub and the git cache are only asked more about pull requests
	// that could merge on what is known already.
	if !in.pre.Merge {
		log.Info("not merging", "reasons", in.pre.Reasons())
		if slices.Contains(in.pre.Codes(), policy.CodeHold) {
			return false, r.dequeueHeld(ctx, in)
		}
		return false, nil
	}

	// One merge decision at a time per repository (turn.go).
	got, by, err := a.turns.take(ctx, r.job.Key.Repo, r.holder, r.number, a.now())
	if err != nil {
		return false, a.fail("state", err)
	}
	if !got {
		r.waitTurn, r.retryAt, r.settled = true, a.turns.retryAt(a.now()), false
		log.Info("waiting for the merge turn", "first", by, "next", r.retryAt)
		r.blocks = []policy.Block{{Code: policy.CodeMerging, Text: fmt.Sprintf(
			"approved and green; waiting for its turn to merge after #%d, then judged again on %s as it is then", by, in.base)}}
		return false, nil
	}
	r.waitTurn = false
	r.keepTurn()

	pr, err := r.reread(ctx)
	if err != nil {
		return false, err
	}
	if pr.GetState() != "open" {
		log.Info("the pull request closed during the check", "state", pr.GetState())
		r.closed = true
		return false, nil
	}
	runs, err := r.checkRuns(ctx, checked)
	if err != nil {
		return false, a.fail("merge", err)
	}
	tip, err := a.cache.Branch(ctx, in.src, in.base)
	if err != nil {
		return false, a.fail("git", err)
	}
	moved, err := a.cache.ChangedPaths(in.src.Repo, in.snap.BaseSHA, tip)
	if err != nil {
		return false, a.fail("git", err)
	}
	own := checks.Conclusion(runs.ours)
	now := review.Forge{
		Head:             pr.GetHead().GetSHA(),
		Draft:            pr.GetDraft(),
		Labels:           labelsOf(pr),
		Mergeable:        pr.Mergeable,
		Checks:           runs.extra,
		Own:              &own,
		BaseMoved:        tip != in.snap.BaseSHA,
		BaseChangedPaths: moved,
	}
	d := in.outcome.Decide(now)
	if !d.Merge {
		if d.Recheck {
			log.Info("checking again before merging", "reasons", d.Reasons(), "head", now.Head, "base", tip)
			return true, nil
		}
		if pr.Mergeable == nil {
			// GitHub has not worked it out yet, and will send no event
			// when it has: let the next resync look again.
			r.settled = false
		}
		a.metrics.Merges.WithLabelValues(MergeRefused).Inc()
		log.Info("not merging", "reasons", d.Reasons())
		r.blocks = d.Blocks
		return false, nil
	}

	// The turn is renewed just before the merge call: a decision that
	// outlived its lease (a stalled process) must not merge beside the
	// one that took the turn over.
	if got, by, err := a.turns.take(ctx, r.job.Key.Repo, r.holder, r.number, a.now()); err != nil || !got {
		r.waitTurn, r.retryAt, r.settled = true, a.turns.retryAt(a.now()), false
		log.Warn("lost the merge turn before merging; judging again later", "first", by, "err", err)
		r.blocks = []policy.Block{{Code: policy.CodeMerging, Text: fmt.Sprintf(
			"approved and green; its turn to merge lapsed, and it is judged again after #%d", by)}}
		return false, nil
	}
	res, _, err := r.gh.PullRequests.Merge(ctx, r.owner, r.name, r.number, "", &github.PullRequestOptions{SHA: d.SHA, MergeMethod: d.Method})
	if err != nil && statusOf(err) == 405 && r.requiresQueue(ctx, in.base, err) {
		return r.enqueue(ctx, in, d.SHA, pr)
	}
	if err != nil {
		if code := statusOf(err); code == 405 || code == 409 {
			a.metrics.Merges.WithLabelValues(MergeConflict).Inc()
			log.Info("GitHub refused the merge; checking again", "status", code, "err", err)
			if r.mergeTried {
				r.blocks = []policy.Block{{Code: policy.CodeMergeRefused,
					Text: fmt.Sprintf("GitHub refused the merge at %s (HTTP %d) again after a re-check; the next event or resync tries again", change.ShortSHA(d.SHA), code)}}
				return false, nil
			}
			r.mergeTried = true
			return true, nil
		}
		a.metrics.Merges.WithLabelValues(MergeError).Inc()
		return false, a.fail("merge", fmt.Errorf("merge %s/%s#%d at %s: %w", r.owner, r.name, r.number, d.SHA, err))
	}
	a.metrics.Merges.WithLabelValues(MergeMerged).Inc()
	log.Info("merged", "method", d.Method, "merge_commit", res.GetSHA())
	pkgs, merged := in.outcome.Merged(r.number, pr.GetUser().GetLogin(), res.GetSHA())
	rec := review.MergeRecord{Packages: pkgs, PullRequest: merged}
	if d.Method == policy.MethodRebase {
		// The branch's tip just before the merge: a rebase replays
		// the pull request's commits after it.
		rec.Onto = tip
	}
	a.merges.update(r.job.Key.Repo+"@"+res.GetSHA(), maxMerges, func(review.MergeRecord, bool) (review.MergeRecord, bool) {
		return rec, true
	})
	a.forget(r.job.Key.Repo, r.number)
	r.final, r.closed = nil, true
	r.confirmMerged(ctx, in, res.GetSHA())
	return false, nil
}

// confirmMerged reads the base branch after a merge and compares its tree
// with the merge result that was judged. They differ when something else
// reached the branch in between (a person's merge or push) or GitHub
// merged differently: then main holds a tree nobody judged. The push it
// made is judged at once by the publish job (which refuses an invalid
// catalog and says so on the commit); here it is counted and logged, so
// that the alert on catalogbot_merges_total{result="unjudged"} fires.
func (r *prRun) confirmMerged(ctx context.Context, in mergeInput, commit string) {
	a := r.a
	tip, err := a.cache.Branch(ctx, in.src, in.base)
	if err != nil {
		r.log.Warn("could not read the branch after the merge", "err", a.fail("git", err))
		return
	}
	tree, err := a.cache.TreeID(in.src.Repo, tip)
	if err != nil {
		r.log.Warn("could not read the branch after the merge", "err", a.fail("git", err))
		return
	}
	if tree == in.merged.Tree {
		return
	}
	a.metrics.Merges.WithLabelValues(MergeUnjudged).Inc()
	r.log.Error("the base branch does not hold the tree that was judged; its catalog is judged again on the push",
		"branch", in.base, "tip", tip, "merge_commit", commit, "tree", tree, "judged_tree", in.merged.Tree, "onto", in.snap.BaseSHA)
}

// reread reads the pull request again, waiting a little while GitHub is
// still computing its mergeability.
func (r *prRun) reread(ctx context.Context) (*github.PullRequest, error) {
	for i := 0; ; i++ {
		pr, err := r.getPR(ctx)
		if err != nil {
			return nil, r.a.fail("github", fmt.Errorf("read %s/%s#%d again: %w", r.owner, r.name, r.number, err))
		}
		r.final = pr
		if pr.Mergeable != nil || pr.GetState() != "open" || i == len(mergeableWaits) {
			return pr, nil
		}
		t := time.NewTimer(mergeableWaits[i])
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// runsAt are the check runs of one commit.
type runsAt struct {
	ours  string                       // the catalogbot run's conclusion, "" if none
	extra map[string][]policy.CheckRun // the others': each App's newest of each name, newest first
}

// checkRuns reads the check runs at sha: this App's newest catalogbot run,
// and the newest run of each name by each App. A run counts as
// catalogbot's only when this App made it: any App may name its runs
// catalogbot, and such a run must neither stand in for ours nor hide it.
func (r *prRun) checkRuns(ctx context.Context, sha string) (runsAt, error) {
	out := runsAt{extra: map[string][]policy.CheckRun{}}
	type key struct {
		name string
		app  int64
	}
	newest := map[key]*github.CheckRun{}
	var ours *github.CheckRun
	opts := &github.ListCheckRunsOptions{Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := r.gh.Checks.ListCheckRunsForRef(ctx, r.owner, r.name, sha, opts)
		if err != nil {
			return out, fmt.Errorf("list the check runs of %s/%s@%s: %w", r.owner, r.name, sha, err)
		}
		for _, run := range res.CheckRuns {
			name, app := run.GetName(), run.GetApp().GetID()
			mine := app != 0 && app == r.a.gh.AppID()
			switch {
			case mine && name == CheckRunName:
				if ours == nil || run.GetID() > ours.GetID() {
					ours = run
				}
				continue
			case mine && name == PublishCheckRunName:
				continue
			}
			k := key{name, app}
			if prev := newest[k]; prev == nil || run.GetID() > prev.GetID() {
				newest[k] = run
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out.ours = ours.GetConclusion()
	byName := map[string][]*github.CheckRun{}
	for k, run := range newest {
		byName[k.name] = append(byName[k.name], run)
	}
	for name, runs := range byName {
		slices.SortFunc(runs, func(a, b *github.CheckRun) int { return cmp.Compare(b.GetID(), a.GetID()) })
		for _, run := range runs {
			out.extra[name] = append(out.extra[name], policy.CheckRun{
				Conclusion: checks.Conclusion(run.GetConclusion()),
				AppID:      run.GetApp().GetID(),
				AppSlug:    run.GetApp().GetSlug(),
			})
		}
	}
	return out, nil
}
