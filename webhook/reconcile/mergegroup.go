package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// A branch whose ruleset requires catalogbot's check and a merge queue
// merges nothing until the check passes on the queue's own commit: the
// merge group's head (merge_group.head_sha, on gh-readonly-queue/<base>/
// pr-N-<sha>), the base's tip with the queued pull requests merged in.
// That commit is the future base branch, possibly several pull requests
// together, so it is what is judged: fetched by its ref into the git
// cache, its change from merge_group.base_sha read from git, and judged by
// the review core on its content (review.EvaluateGroup: each pull request's
// approvals were judged at its head before the queue took it). The verdict
// is the catalogbot check run on the group's head; a failure makes GitHub
// take the group out of the queue, as for any required check that fails.
//
// The job is keyed by the group's last pull request (webhook.KindMergeGroup).
// What a delivery said of the group is kept (groups) until its destroyed
// delivery, so that the retry of a check that could not judge, which
// carries no payload, judges the same commit; a group already destroyed,
// or whose ref moved on to another commit, is left alone. No resync comes
// back to a merge group, so a job on one that fails is its own retry
// (groupFailed).

// maxGroups bounds the merge groups remembered.
const maxGroups = 1000

// group is a merge group as its merge_group delivery told it, with the
// tries of a check that could not judge it. The zero group is one that
// was destroyed.
type group struct {
	BaseSHA string    `json:"baseSHA"`
	HeadSHA string    `json:"headSHA"`
	HeadRef string    `json:"headRef"`
	Tries   int       `json:"tries,omitempty"`
	Next    time.Time `json:"next,omitzero"`
	// Failed counts the jobs on the group that failed (groupFailed).
	Failed int `json:"failed,omitempty"`
}

// groupDelivery is the part of a merge_group delivery that is read.
type groupDelivery struct {
	Action     string `json:"action"`
	Reason     string `json:"reason"`
	MergeGroup struct {
		HeadSHA string `json:"head_sha"`
		HeadRef string `json:"head_ref"`
		BaseSHA string `json:"base_sha"`
	} `json:"merge_group"`
}

// mergeGroup does one merge group job: notes a group the queue built or
// destroyed, and judges the group it holds. The time returned is when a
// check that could not judge, or a job that failed, is tried again, zero
// for none.
func (a *App) mergeGroup(ctx context.Context, job webhook.Job) (time.Time, error) {
	start := time.Now()
	defer a.observe(start)
	owner, name, err := splitRepo(job.Key.Repo)
	if err != nil {
		return time.Time{}, a.fail("job", err)
	}
	key := prKey{strings.ToLower(job.Key.Repo), job.Key.PR}
	log := a.log.With("delivery", job.Delivery, "repo", job.Key.Repo, "merge_group", job.Key.PR)
	var g group
	if len(job.Payload) > 0 {
		var p groupDelivery
		if err := json.Unmarshal(job.Payload, &p); err != nil {
			return time.Time{}, a.fail("job", fmt.Errorf("%s: merge_group payload: %w", job.Key, err))
		}
		g = group{BaseSHA: p.MergeGroup.BaseSHA, HeadSHA: p.MergeGroup.HeadSHA, HeadRef: p.MergeGroup.HeadRef}
		if p.Action == "destroyed" {
			a.groups.update(key, maxGroups, func(old group, seen bool) (group, bool) {
				return group{}, seen && old.HeadSHA == g.HeadSHA
			})
			log.Info("merge group destroyed", "sha", g.HeadSHA, "reason", p.Reason)
			return time.Time{}, nil
		}
		if !isSHA(g.BaseSHA) || !isSHA(g.HeadSHA) {
			return time.Time{}, a.fail("job", fmt.Errorf("%s: merge_group.base_sha %q and head_sha %q must be commit ids", job.Key, g.BaseSHA, g.HeadSHA))
		}
		// Checks requested again of the same commit start its tries
		// again, as a re-requested check of a pull request does.
		a.groups.update(key, maxGroups, func(group, bool) (group, bool) { return g, true })
	} else {
		var ok bool
		if g, ok = a.groups.get(key); !ok || g.HeadSHA == "" {
			log.Info("the merge group is gone; nothing to judge")
			return time.Time{}, nil
		}
	}
	log = log.With("sha", g.HeadSHA, "base", g.BaseSHA)
	retryAt, err := a.judgeGroup(ctx, job, owner, name, key, g, log)
	if err != nil {
		return a.groupFailed(key, g), err
	}
	return retryAt, nil
}

// groupFailed notes that a job on group g failed (GitHub or git answered
// with an error) and says when to try it again. No resync comes back to
// a merge group, and the queue waits for its check, so the job is its own
// retry: with the backoff of a check that could not judge, as often; zero
// after that, when GitHub's check timeout is left to let go of the group.
func (a *App) groupFailed(key prKey, g group) time.Time {
	var next time.Time
	a.groups.update(key, maxGroups, func(old group, seen bool) (group, bool) {
		if !seen || old.HeadSHA != g.HeadSHA {
			return old, false
		}
		old.Failed++
		if old.Failed < a.pendingTries() {
			next = a.now().Add(a.pendingBackoff(old.Failed))
		}
		return old, true
	})
	return next
}

// judgeGroup fetches group g's commit, judges it and reports the verdict
// as the catalogbot run there.
func (a *App) judgeGroup(ctx context.Context, job webhook.Job, owner, name string, key prKey, g group, log *slog.Logger) (time.Time, error) {
	start := time.Now()
	inst, err := a.installationOf(ctx, job, owner, name)
	if err != nil {
		return time.Time{}, a.fail("github", err)
	}
	gh, err := a.gh.Installation(inst)
	if err != nil {
		return time.Time{}, a.fail("github", err)
	}
	repo, _, err := gh.Repositories.Get(ctx, owner, name)
	if err != nil {
		return time.Time{}, a.fail("github", fmt.Errorf("read %s/%s: %w", owner, name, err))
	}
	token, err := a.gh.InstallationToken(ctx, inst)
	if err != nil {
		return time.Time{}, a.fail("github", err)
	}
	src := gitcache.Source{Repo: owner + "/" + name, URL: repo.GetCloneURL(), Token: token}
	got, err := a.cache.Ref(ctx, src, g.HeadRef)
	if err != nil && !errors.Is(err, gitcache.ErrNoRef) {
		return time.Time{}, a.gitFailed(ctx, inst, token, err)
	}
	if got != g.HeadSHA {
		// The queue merged the group, built it again or let go of it:
		// what the ref holds now, if anything, has a delivery of its own.
		log.Info("the merge group's ref moved on; not judging the old commit", "ref", g.HeadRef, "now", got)
		return time.Time{}, nil
	}
	if err := a.writeCheckRun(ctx, gh, owner, name, g.HeadSHA, CheckRunName,
		checkOutput{Conclusion: checks.Pending, Title: checkingTitle, Summary: checkingSummary}, false); err != nil {
		return time.Time{}, a.fail("report", err)
	}
	ch, base, head, err := a.cache.Change(src.Repo, g.BaseSHA, g.HeadSHA)
	if err != nil {
		return time.Time{}, a.fail("git", err)
	}
	outcome, err := review.EvaluateGroup(ctx, &review.Group{
		Change: ch, Base: base, Head: head,
		ImageOptions: a.images, Renderer: a.renderer, Memory: a.memory,
		Index: a.index,
	})
	var tooLarge *review.MemoryError
	if errors.As(err, &tooLarge) {
		title, summary := review.TooLargeForMemory(tooLarge)
		if err := a.writeCheckRun(ctx, gh, owner, name, g.HeadSHA, CheckRunName, checkOutput{Conclusion: checks.Failure, Title: title, Summary: summary}, false); err != nil {
			return time.Time{}, a.fail("report", err)
		}
		log.Info("merge group too large for this service's memory", "bytes", tooLarge.Reads.Bytes, "budget", tooLarge.Budget)
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, a.fail("policy", fmt.Errorf("%s: review of merge group %s at %s: %w", src.Repo, change.ShortSHA(g.HeadSHA), change.ShortSHA(g.BaseSHA), err))
	}
	out := outputOf(outcome)
	var retryAt time.Time
	if out.Conclusion == checks.Pending {
		out, retryAt = a.pendingGroup(key, g, outcome)
	}
	if err := a.writeCheckRun(ctx, gh, owner, name, g.HeadSHA, CheckRunName, out, false); err != nil {
		return time.Time{}, a.fail("report", err)
	}
	log.Info("merge group judged", "conclusion", out.Conclusion, "files", len(ch.Files), "took", time.Since(start).Round(time.Millisecond))
	return retryAt, nil
}

// pendingGroup is the run of a group whose check could not judge, and
// when to try again (zero after the last try, when the run fails), as for
// a pull request (pendingRun): the queue waits for the verdict, and one
// that cannot be had fails the group rather than pass it.
func (a *App) pendingGroup(key prKey, g group, o *review.Outcome) (checkOutput, time.Time) {
	tries := a.pendingTries()
	now := a.now()
	w := g
	a.groups.update(key, maxGroups, func(old group, seen bool) (group, bool) {
		if !seen || old.HeadSHA != g.HeadSHA {
			old = g
		}
		old.Tries++
		old.Next = time.Time{}
		if old.Tries < tries {
			old.Next = now.Add(a.pendingBackoff(old.Tries))
		}
		w = old
		return old, true
	})
	retry := review.Retry{Try: min(w.Tries, tries), Tries: tries, Next: w.Next}
	if !w.Next.IsZero() {
		retry.In = w.Next.Sub(now)
	}
	c, title, summary := o.PendingRun(retry)
	return checkOutput{Conclusion: c, Title: title, Summary: summary, Findings: o.Findings()}, w.Next
}

// isSHA says whether s is a full commit id.
func isSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
