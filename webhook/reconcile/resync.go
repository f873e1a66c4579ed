package reconcile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/google/go-github/v60/github"
)

// prKey names a pull request: "owner/name" lower-cased, and its number.
type prKey struct {
	repo   string
	number int
}

// fingerprint is what a pull request's listing says about it that changes
// whenever there is something to reconcile: a push moves the head, and a
// comment, review, label or edit moves updated_at.
type fingerprint struct {
	head    string
	updated time.Time
}

func fingerprintOf(pr *github.PullRequest) fingerprint {
	return fingerprint{head: pr.GetHead().GetSHA(), updated: pr.GetUpdatedAt().Time}
}

// remember records that pr was reconciled as it is now, when GitHub's
// clock says so: pr was read at date (its response's Date, on GitHub's
// clock, to the second as updated_at is). updated_at has whole seconds,
// so a change made later in the same second as the last one seen (an
// /approve whose delivery was lost, landing just after the App's own
// comment) leaves it as it was; a fingerprint is remembered only when its
// updated_at is strictly older than the read, so that no change can
// still share its second. Otherwise, or when the read's date is not
// known, the next resync looks again.
func (a *App) remember(repo string, number int, pr *github.PullRequest, date time.Time) bool {
	fp := fingerprintOf(pr)
	if date.IsZero() || !fp.updated.Before(date.Truncate(time.Second)) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.done[prKey{strings.ToLower(repo), number}] = fp
	return true
}

// getPR reads the pull request, noting GitHub's clock at the read (its
// Date) beside it, for remember.
func (r *prRun) getPR(ctx context.Context) (*github.PullRequest, error) {
	pr, resp, err := r.gh.PullRequests.Get(ctx, r.owner, r.name, r.number)
	if err != nil {
		return nil, err
	}
	if r.readAt == nil {
		r.readAt = map[*github.PullRequest]time.Time{}
	}
	r.readAt[pr] = dateOf(resp)
	return pr, nil
}

// dateOf is the Date of a response, zero when it has none.
func dateOf(resp *github.Response) time.Time {
	if resp == nil || resp.Response == nil {
		return time.Time{}
	}
	t, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return time.Time{}
	}
	return t
}

// forget drops what is known of a pull request that closed or merged.
func (a *App) forget(repo string, number int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.done, prKey{strings.ToLower(repo), number})
}

// current reports whether pr was reconciled as it is now.
func (a *App) current(repo string, pr *github.PullRequest) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	fp, ok := a.done[prKey{strings.ToLower(repo), pr.GetNumber()}]
	return ok && fp == fingerprintOf(pr)
}

// Resync lists the open pull requests of every repository of every
// installation of the App and returns a KindPR job for each one that
// changed since it was last reconciled, or never was (after a restart,
// every one). Webhooks only make this faster: a lost delivery is found here.
// It goes on past a repository it cannot list and returns every such error
// beside the jobs it found.
func (a *App) Resync(ctx context.Context) ([]webhook.Job, error) {
	a.mu.Lock()
	a.resyncN++
	run := a.resyncN
	a.mu.Unlock()
	start := time.Now()

	var errs []error
	var jobs []webhook.Job
	open := 0
	listed := map[string]bool{}
	iopts := &github.ListOptions{PerPage: 100}
	for {
		insts, resp, err := a.gh.App().Apps.ListInstallations(ctx, iopts)
		if err != nil {
			return jobs, a.fail("resync", fmt.Errorf("resync: list the App's installations: %w", err))
		}
		for _, inst := range insts {
			if inst.SuspendedAt != nil {
				continue
			}
			n, err := a.resyncInstallation(ctx, inst.GetID(), run, &jobs, listed)
			open += n
			if err != nil {
				errs = append(errs, a.fail("resync", err))
			}
		}
		if resp.NextPage == 0 {
			break
		}
		iopts.Page = resp.NextPage
	}
	if len(errs) == 0 {
		// Repositories the App no longer has (uninstalled, suspended,
		// archived): their pull requests wait for it no more.
		a.metrics.Blocked.RetainRepos(func(repo string) bool { return listed[repo] })
	}
	a.log.Info("resync", "run", run, "open", open, "queued", len(jobs), "errors", len(errs), "took", time.Since(start).Round(time.Millisecond))
	return jobs, errors.Join(errs...)
}

// resyncInstallation adds to jobs those of the open pull requests of the
// installation's repositories that changed (resyncRepo), and to listed the
// repositories, "owner/name" lower-cased.
func (a *App) resyncInstallation(ctx context.Context, inst, run int64, jobs *[]webhook.Job, listed map[string]bool) (open int, err error) {
	gh, err := a.gh.Installation(inst)
	if err != nil {
		return 0, err
	}
	var errs []error
	ropts := &github.ListOptions{PerPage: 100}
	for {
		repos, resp, err := gh.Apps.ListRepos(ctx, ropts)
		if err != nil {
			return open, fmt.Errorf("resync: list the repositories of installation %d: %w", inst, err)
		}
		for _, repo := range repos.Repositories {
			if repo.GetArchived() {
				continue
			}
			listed[strings.ToLower(repo.GetOwner().GetLogin()+"/"+repo.GetName())] = true
			n, err := a.resyncRepo(ctx, gh, inst, run, repo.GetOwner().GetLogin(), repo.GetName(), false, jobs)
			open += n
			if err != nil {
				errs = append(errs, err)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		ropts.Page = resp.NextPage
	}
	return open, errors.Join(errs...)
}

// resyncRepo adds to jobs a job for each open pull request of owner/name
// that changed since it was last reconciled. A pull request waiting for the retry of
// a check that could not judge is left to it, unless waiting is set: the
// rules changed, and every pull request is judged again.
func (a *App) resyncRepo(ctx context.Context, gh *github.Client, inst, run int64, owner, name string, waiting bool, jobs *[]webhook.Job) (open int, err error) {
	full := strings.ToLower(owner + "/" + name)
	seen := map[int]bool{}
	opts := &github.PullRequestListOptions{State: "open", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := gh.PullRequests.List(ctx, owner, name, opts)
		if err != nil {
			return open, fmt.Errorf("resync: list the open pull requests of %s: %w", full, err)
		}
		for _, pr := range prs {
			open++
			seen[pr.GetNumber()] = true
			if a.current(full, pr) || (!waiting && a.isWaiting(full, pr)) {
				continue
			}
			// The delivery id names the process: the durable queue
			// remembers ids past a restart, and a new process counts
			// its runs from 1 again, so "resync-1-..." would be taken
			// for a duplicate of the last process's first round.
			*jobs = append(*jobs, webhook.Job{
				Key:          webhook.Key{Repo: full, PR: pr.GetNumber(), Kind: webhook.KindPR},
				Event:        "resync",
				Delivery:     fmt.Sprintf("resync-%s-%d-%s-%d", a.instance, run, full, pr.GetNumber()),
				Installation: inst,
				Received:     time.Now(),
			})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	// Pull requests that closed without an event to say so.
	a.mu.Lock()
	for k := range a.done {
		if k.repo == full && !seen[k.number] {
			delete(a.done, k)
		}
	}
	a.mu.Unlock()
	a.metrics.Blocked.Retain(full, func(n int) bool { return seen[n] })
	return open, nil
}

// RunResync runs Resync now and then every interval until ctx ends, giving
// the jobs it finds to enqueue and logging its errors: a failed round is
// made up by the next.
func (a *App) RunResync(ctx context.Context, interval time.Duration, enqueue func(webhook.Job)) {
	if interval <= 0 {
		interval = webhook.DefaultResyncInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		jobs, err := a.Resync(ctx)
		for _, j := range jobs {
			enqueue(j)
		}
		if err != nil && ctx.Err() == nil {
			a.log.Warn("resync incomplete", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
