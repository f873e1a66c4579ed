package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// maxPasses bounds how often one job reconciles a pull request again
// because it moved under it (a push during the check, a failed merge).
const maxPasses = 3

// prRun is the reconciliation of one pull request by one job.
type prRun struct {
	a      *App
	job    webhook.Job
	gh     *github.Client
	inst   int64
	owner  string
	name   string
	number int
	log    *slog.Logger

	// mergeTried is set once a merge call failed: one re-check follows,
	// and no second merge attempt in the same job.
	mergeTried bool
	// rerequest says the job re-requests this App's check (see
	// rerequested): its run is rewritten, and a check that could not
	// judge starts its tries again.
	rerequest bool
	// retryAt, when set, is when the check that could not judge is tried
	// again.
	retryAt time.Time
	// final is the pull request as last read, for the resync fingerprint;
	// settled is false when something transient (mergeability not yet
	// computed) means the next resync should look again.
	final   *github.PullRequest
	settled bool
	// readAt is GitHub's clock at each read of the pull request (getPR),
	// for the resync fingerprint.
	readAt map[*github.PullRequest]time.Time

	// head is the head the catalogbot run was begun at, "" before; blocks
	// are why the pull request is not merged, as this run left it, and
	// said what the run's text says now. closed is set once it is merged
	// or found closed: it waits for nothing.
	head   string
	blocks []policy.Block
	said   string
	closed bool

	// holder names this job in the repository's merge turn (turn.go);
	// waitTurn says the pull request is in line for it, and keeps its
	// place when the job ends.
	holder   string
	waitTurn bool
	// beat stops the renewal of the turn, nil while the job holds none.
	beat context.CancelFunc
}

// reconcile checks a pull request at its current head, reports the result
// and merges it when the policy says so. A check that could not judge is
// tried again at retryAt (see pending.go); zero means no retry.
func (a *App) reconcile(ctx context.Context, job webhook.Job) (retryAt time.Time, next []webhook.Job, err error) {
	start := time.Now()
	defer a.observe(start)
	owner, name, err := splitRepo(job.Key.Repo)
	if err != nil {
		return time.Time{}, nil, a.fail("job", err)
	}
	log := a.log.With("delivery", job.Delivery, "repo", job.Key.Repo, "pr", job.Key.PR)
	if job.Event == "retry" {
		// A pull request waiting for the merge turn while another
		// holds it has nothing to do yet: no GitHub read, no check.
		if wait, err := a.turns.waits(ctx, job.Key.Repo, job.Key.PR, a.now()); err == nil && wait {
			return a.turns.retryAt(a.now()), nil, nil
		}
	}
	inst, err := a.installationOf(ctx, job, owner, name)
	if err != nil {
		return time.Time{}, nil, a.fail("github", err)
	}
	gh, err := a.gh.Installation(inst)
	if err != nil {
		return time.Time{}, nil, a.fail("github", err)
	}
	r := &prRun{a: a, job: job, gh: gh, inst: inst, owner: owner, name: name, number: job.Key.PR, log: log}
	r.rerequest = r.rerequested()
	r.holder = fmt.Sprintf("%s/%s/%d", a.instance, job.Delivery, start.UnixNano())
	defer func() { next = r.leaveTurn() }()
	// However the job ends, the pull request says why it waits.
	for pass := 1; ; pass++ {
		again, err := r.pass(ctx)
		if err != nil {
			r.explain(ctx, err)
			return time.Time{}, nil, err
		}
		if !again {
			break
		}
		if pass == maxPasses {
			// Never left to a resync: the job comes back in a moment,
			// and the pull request keeps its place in the merge line.
			r.retryAt, r.waitTurn = a.turns.retryAt(a.now()), true
			log.Warn("the pull request or its base kept moving; trying again shortly", "passes", pass, "next", r.retryAt)
			r.blocks = []policy.Block{{Code: policy.CodeRetrying, Text: "the pull request or its base branch kept moving during the check; it is checked again in a few seconds"}}
			r.explain(ctx, nil)
			return r.retryAt, nil, nil
		}
	}
	if !r.explain(ctx, nil) {
		// The run does not say yet why the pull request waits: the next
		// resync must come back to it, changed or not.
		r.settled = false
	}
	if r.final != nil && r.settled {
		a.remember(job.Key.Repo, r.number, r.final, r.readAt[r.final])
	}
	if !r.retryAt.IsZero() {
		log.Info("could not judge; trying again later", "next", r.retryAt)
	}
	log.Info("reconciled", "took", time.Since(start).Round(time.Millisecond))
	return r.retryAt, nil, nil
}

// pass is one read-check-report-merge round. again asks for another round:
// the pull request moved under it.
func (r *prRun) pass(ctx context.Context) (again bool, err error) {
	a := r.a
	pr, err := r.getPR(ctx)
	if err != nil {
		return false, a.fail("github", fmt.Errorf("read %s/%s#%d: %w", r.owner, r.name, r.number, err))
	}
	r.final, r.settled = pr, true
	if pr.GetState() != "open" {
		r.log.Info("pull request is not open; nothing to do", "state", pr.GetState())
		a.forget(r.job.Key.Repo, r.number)
		r.final, r.closed = nil, true
		return false, nil
	}
	head := pr.GetHead().GetSHA()
	log := r.log.With("sha", head)
	r.blocks, r.head, r.said = nil, "", ""
	if err := r.begin(ctx, head); err != nil {
		return false, err
	}

	token, err := a.gh.InstallationToken(ctx, r.inst)
	if err != nil {
		return false, a.fail("github", err)
	}
	src := gitcache.Source{Repo: r.owner + "/" + r.name, URL: pr.GetBase().GetRepo().GetCloneURL(), Token: token}
	if src.URL == "" {
		return false, a.fail("github", fmt.Errorf("%s/%s#%d: the pull request names no clone URL", r.owner, r.name, r.number))
	}
	snap, err := a.cache.PullRequest(ctx, src, pr.GetBase().GetRef(), r.number, head)
	if errors.Is(err, gitcache.ErrHeadMoved) {
		log.Info("the head moved while fetching; reading the pull request again", "err", err)
		return true, nil
	}
	if err != nil {
		return false, a.gitFailed(ctx, r.inst, token, err)
	}
	log = log.With("base", snap.BaseSHA)
	// The verdict that can merge is on the tree the base branch will
	// hold: the head merged onto its tip.
	judged, how, merged, err := r.mergeResult(snap, src.Repo, pr.GetBase().GetRef())
	if err != nil {
		return false, a.fail("git", err)
	}

	files, err := ghapi.PRFiles(ctx, r.gh, r.owner, r.name, r.number)
	if errors.Is(err, ghapi.ErrTooManyFiles) {
		log.Info("too many files to check; failing closed")
		title, summary := review.TooLarge()
		r.blocks = []policy.Block{{Code: policy.CodeChecksFailed, Text: "the pull request changes more files than can be checked"}}
		return false, r.report(ctx, head, checkOutput{Conclusion: checks.Failure, Title: title, Summary: summary})
	}
	if err != nil {
		return false, a.fail("github", err)
	}

	events, err := ghapi.Events(ctx, r.gh, r.owner, r.name, r.number, head, a.edits.forRepo(r.job.Key.Repo), a.heads.forRepo(r.job.Key.Repo))
	if err != nil {
		return false, a.fail("github", err)
	}

	ch := &change.Change{
		Repo:    src.Repo,
		Number:  r.number,
		Author:  pr.GetUser().GetLogin(),
		BaseSHA: snap.BaseSHA,
		HeadSHA: head,
		Files:   files,
	}
	outcome, err := review.Evaluate(ctx, &review.PR{
		Change: ch, Base: snap.Base, Head: judged,
		Merge: how,
		Draft: pr.GetDraft(), Labels: labelsOf(pr),
		Events: events, EventsRead: true,
		Bots:         a.ownBots(),
		ImageOptions: a.images, Renderer: a.renderer, Memory: a.memory,
		Index: a.index,
		Permission: func(ctx context.Context, login string) (string, error) {
			return ghapi.AccessOf(ctx, r.gh, r.owner, r.name, login)
		},
	})
	var tooLarge *review.MemoryError
	if errors.As(err, &tooLarge) {
		// Not a verdict on the catalog: a service with more memory
		// checks the same change.
		log.Info("too large for this service's memory; failing closed", "bytes", tooLarge.Reads.Bytes, "budget", tooLarge.Budget)
		title, summary := review.TooLargeForMemory(tooLarge)
		r.blocks = []policy.Block{{Code: policy.CodeChecksFailed, Text: "checking the pull request would read more than this service's memory allows"}}
		return false, r.report(ctx, head, checkOutput{Conclusion: checks.Failure, Title: title, Summary: summary})
	}
	if err != nil {
		return false, a.fail("policy", fmt.Errorf("%s: review at %s: %w", src.Repo, snap.BaseSHA, err))
	}
	out := outputOf(outcome)
	r.retryAt = time.Time{}
	gaveUp := false
	if out.Conclusion == checks.Pending {
		// Never reported as neutral or success: the run stays in
		// progress until a try can judge, and fails after the last.
		out, r.retryAt = r.pendingRun(outcome, head)
		gaveUp = out.Conclusion == checks.Failure
		if !r.retryAt.IsZero() {
			r.settled = false
		}
	} else {
		a.judged(r.job.Key.Repo, r.number)
	}
	// What is known already decides most pull requests; the comment and
	// the run say why one does not merge. Other tools' checks are read
	// only when nothing else stands in the way (merge).
	clean := true
	pre := outcome.Decide(review.Forge{Head: head, Mergeable: &clean})
	r.blocks = pre.Blocks
	if gaveUp {
		// No retry follows: the check that could not judge is, for
		// now, a failed run.
		r.blocks = append(slices.Clip(r.blocks), policy.Block{Code: policy.CodeChecksFailed,
			Text: "a check could not judge after its last try; a re-run of the check or a push tries again"})
	}
	if pre.Merge {
		r.blocks = []policy.Block{{Code: policy.CodeMerging, Text: "the checks and approvals allow the merge; it is being made"}}
	}
	if err := r.report(ctx, head, out); err != nil {
		return false, err
	}
	if !outcome.Valid() {
		log.Info("the policy on the base branch is invalid; nothing is checked", "findings", len(outcome.PolicyFindings))
		return false, nil
	}
	log.Info("checked", "conclusion", out.Conclusion, "approved", outcome.Approved())

	in := mergeInput{outcome: outcome, pre: pre, snap: snap, merged: merged, src: src, base: pr.GetBase().GetRef(), node: pr.GetNodeID()}
	removed, err := r.removedFromQueue(ctx, head, outcome)
	if err != nil {
		return false, a.fail("comment", err)
	}
	text, keep := outcome.StatusComment(pre), []string{queuedText(in)}
	if removed != nil {
		text, keep = removedText(in, removed), nil
	}
	changed, err := r.syncComment(ctx, text, keep...)
	if err != nil {
		return false, a.fail("comment", err)
	}
	if removed != nil {
		log.Info("the merge queue let go of this head; not queueing it again until a new commit or /recheck", "reason", removed.reason)
		r.blocks = append(slices.Clip(pre.Blocks), policy.Block{Code: policy.CodeQueueRemoved,
			Text: fmt.Sprintf("the merge queue of %s let go of %s (%s); a new commit or /recheck queues it again", in.base, change.ShortSHA(removed.sha), removed.reason)})
		if changed {
			if pr2, err := r.getPR(ctx); err == nil {
				r.final = pr2
			}
		}
		return false, nil
	}

	again, err = r.merge(ctx, in)
	if err != nil || again {
		return again, err
	}
	if changed && r.final == pr {
		// Our own comment moved updated_at; read it back so that the
		// resync fingerprint is of the state this run leaves behind.
		if pr2, err := r.getPR(ctx); err == nil {
			r.final = pr2
		}
	}
	return false, nil
}

// mergeResult is the tree a verdict that can merge is made on: the head
// merged onto the base's tip, or the head alone where the two conflict
// (review.Onto).
func (r *prRun) mergeResult(snap *gitcache.Snapshot, repo, branch string) (fs.FS, *review.Merge, *change.Merged, error) {
	t, m, err := r.a.cache.Merge(repo, snap.BaseSHA, snap.HeadSHA)
	if err != nil {
		return nil, nil, nil, err
	}
	if !m.Clean() {
		r.log.Info("the change does not apply onto the base branch", "branch", branch, "conflicts", m.Conflicts)
	}
	judged, how := review.Onto(branch, t, snap.Head, m)
	return judged, how, m, nil
}

// leaveTurn gives up the job's merge turn, and its place in line unless
// it comes back for it. Giving up the turn hands it on: the job of the
// first in line, to run at once. A job that took the turn gives it up
// however it ends, even when it comes back: the next job is another
// holder, which would otherwise wait out the lease of its own
// predecessor (a restart while the turn was renewed, the passes spent
// while the base kept moving).
func (r *prRun) leaveTurn() []webhook.Job {
	held := r.beat != nil
	if held {
		r.beat()
	}
	if r.waitTurn && !held {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	next, err := r.a.turns.leave(ctx, r.job.Key.Repo, r.holder, r.number, r.a.now(), r.waitTurn)
	if err != nil {
		// The lease expires by itself; the line forgets a waiter that
		// stops asking.
		r.log.Warn("could not give up the merge turn", "err", r.a.fail("state", err))
		return nil
	}
	if next == 0 || next == r.number {
		// Its own retry brings the pull request back at retryAt.
		return nil
	}
	r.log.Info("the merge turn goes to the next in line", "next", next)
	return []webhook.Job{{Key: webhook.Key{Repo: r.job.Key.Repo, PR: next, Kind: webhook.KindPR}, Event: "retry", Installation: r.inst}}
}

// keepTurn renews the job's merge turn every third of its lease until the
// job ends, however long its checks take.
func (r *prRun) keepTurn() {
	if r.beat != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.beat = cancel
	every := r.a.turns.lease() / 3
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				got, _, err := r.a.turns.take(ctx, r.job.Key.Repo, r.holder, r.number, r.a.now())
				if err != nil || !got {
					// The decision finds out when it renews the
					// turn just before merging.
					return
				}
			}
		}
	}()
}

// ownBots are the App's own bots, ignored besides the policy's: the
// service's configured bots and the App's login.
func (a *App) ownBots() []string {
	bots := slices.Clone(a.cfg.Bots)
	if login := a.botLogin(); login != "" {
		bots = append(bots, login)
	}
	return bots
}

// labelsOf lists the names of the pull request's labels.
func labelsOf(pr *github.PullRequest) []string {
	out := make([]string, 0, len(pr.Labels))
	for _, l := range pr.Labels {
		out = append(out, l.GetName())
	}
	return out
}
