package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/review"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// Merge results, the label values of Metrics.Merges.
const (
	MergeMerged   = "merged"
	MergeConflict = "conflict" // GitHub refused: 405 or 409
	MergeRefused  = "refused"  // a last safety check refused
	MergeError    = "error"
)

// mergeableWaits are the pauses before reading a pull request again while
// GitHub is still computing whether it merges cleanly.
var mergeableWaits = []time.Duration{time.Second, 2 * time.Second}

// mergeInput is what a merge decision starts from: the check just made.
type mergeInput struct {
	outcome    *review.Outcome
	pre        policy.Decision   // on what was known before asking GitHub more
	conclusion checks.Conclusion // of the catalogbot check run written
	snap       *gitcache.Snapshot
	src        gitcache.Source
	base       string // base branch
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
		log.Info("not merging", "reasons", in.pre.Reasons)
		return false, nil
	}

	pr, err := r.reread(ctx)
	if err != nil {
		return false, err
	}
	if pr.GetState() != "open" {
		log.Info("the pull request closed during the check", "state", pr.GetState())
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
	now := review.Forge{
		Head:             pr.GetHead().GetSHA(),
		Draft:            pr.GetDraft(),
		Labels:           labelsOf(pr),
		Mergeable:        pr.Mergeable,
		Checks:           runs.extra,
		BaseMoved:        tip != in.snap.BaseSHA,
		BaseChangedPaths: moved,
	}
	d := in.outcome.Decide(now)
	if !d.Merge {
		if d.Recheck {
			log.Info("checking again before merging", "reasons", d.Reasons, "head", now.Head, "base", tip)
			return true, nil
		}
		if pr.Mergeable == nil {
			// GitHub has not worked it out yet, and will send no event
			// when it has: let the next resync look again.
			r.settled = false
		}
		log.Info("not merging", "reasons", d.Reasons)
		return false, nil
	}

	// Whatever the policy says, never merge a draft, a held pull request
	// or one whose catalogbot run at the checked head is not a success.
	draft, held := in.outcome.Blocked(now)
	switch {
	case draft, held, in.conclusion != checks.Success, runs.ours != string(checks.Success):
		a.metrics.Merges.WithLabelValues(MergeRefused).Inc()
		log.Warn("merge refused by the last checks", "draft", draft, "held", held, "conclusion", in.conclusion, "run", runs.ours)
		return false, nil
	}

	res, _, err := r.gh.PullRequests.Merge(ctx, r.owner, r.name, r.number, "", &github.PullRequestOptions{SHA: d.SHA, MergeMethod: d.Method})
	if err != nil {
		if code := statusOf(err); code == 405 || code == 409 {
			a.metrics.Merges.WithLabelValues(MergeConflict).Inc()
			log.Info("GitHub refused the merge; checking again", "status", code, "err", err)
			if r.mergeTried {
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
	a.forget(r.job.Key.Repo, r.number)
	r.final = nil
	return false, nil
}

// reread reads the pull request again, waiting a little while GitHub is
// still computing its mergeability.
func (r *prRun) reread(ctx context.Context) (*github.PullRequest, error) {
	for i := 0; ; i++ {
		pr, _, err := r.gh.PullRequests.Get(ctx, r.owner, r.name, r.number)
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
	extra map[string]checks.Conclusion // the others', by name
}

// checkRuns reads the newest run of each name at sha.
func (r *prRun) checkRuns(ctx context.Context, sha string) (runsAt, error) {
	out := runsAt{extra: map[string]checks.Conclusion{}}
	newest := map[string]int64{}
	opts := &github.ListCheckRunsOptions{Filter: github.String("latest"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := r.gh.Checks.ListCheckRunsForRef(ctx, r.owner, r.name, sha, opts)
		if err != nil {
			return out, fmt.Errorf("list the check runs of %s/%s@%s: %w", r.owner, r.name, sha, err)
		}
		for _, run := range res.CheckRuns {
			name := run.GetName()
			if id, ok := newest[name]; ok && id > run.GetID() {
				continue
			}
			newest[name] = run.GetID()
			mine := run.GetApp().GetID() == 0 || run.GetApp().GetID() == r.a.gh.AppID()
			switch {
			case name == CheckRunName && mine:
				out.ours = run.GetConclusion()
			case name == PublishCheckRunName && mine:
			default:
				out.extra[name] = checks.Conclusion(run.GetConclusion())
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
