package reconcile

import (
	"errors"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
)

// maxWaiting bounds the pull requests whose tries are remembered; the
// oldest go first. A forgotten one starts its count again, as after a
// restart: it is tried a few times more, and still never passes.
const maxWaiting = 10000

// waiting is how often a pull request's check could not judge at one head,
// and when it is tried again (zero after the last try).
type waiting struct {
	head  string
	tries int
	next  time.Time
}

// pendingRun is the check run of an outcome that could not judge, and
// when to try again (zero when this was the last try, and the run says
// failure). Tries count per head: a push starts them again, and so does a
// re-requested check, so that a maintainer can ask once the registry is
// back.
func (r *prRun) pendingRun(o *review.Outcome, head string) (checkOutput, time.Time) {
	a := r.a
	tries := a.pendingTries()
	now := a.now()
	reopen := a.reopens(o)
	var w waiting
	a.waiting.update(prKey{strings.ToLower(r.job.Key.Repo), r.number}, maxWaiting, func(old waiting, _ bool) (waiting, bool) {
		if old.head != head || r.rerequest {
			old = waiting{head: head}
		}
		old.tries++
		old.next = time.Time{}
		if old.tries < tries {
			old.next = now.Add(a.pendingBackoff(old.tries))
			// A try before the registry's breaker lets a probe go
			// would fail at once and spend a try for nothing.
			if reopen.After(old.next) {
				old.next = reopen
			}
		}
		w = old
		return old, true
	})
	retry := review.Retry{Try: min(w.tries, tries), Tries: tries, Next: w.next}
	if !w.next.IsZero() {
		retry.In = w.next.Sub(now)
	}
	c, title, summary := o.PendingRun(retry)
	return checkOutput{Conclusion: c, Title: title, Summary: summary, Findings: o.Findings()}, w.next
}

// reopens is when the last of the registries o waits for whose breaker is
// open in the process (registry.Hosts) is asked again; zero when none is.
func (a *App) reopens(o *review.Outcome) time.Time {
	var at time.Time
	if a.images == nil {
		return at
	}
	for _, w := range o.Waits() {
		var open *registry.HostOpenError
		if w.Registry != "" && errors.As(a.images.Hosts.Check(w.Registry), &open) && open.Until.After(at) {
			at = open.Until
		}
	}
	return at
}

// pendingTries is how often a check that could not judge is tried in
// all: the first try and the configured retries.
func (a *App) pendingTries() int {
	retries := a.cfg.PendingRetries
	if retries <= 0 {
		retries = webhook.DefaultPendingRetries
	}
	return retries + 1
}

// judged forgets the tries of a pull request whose check could judge.
func (a *App) judged(repo string, number int) {
	a.waiting.update(prKey{strings.ToLower(repo), number}, maxWaiting, func(_ waiting, seen bool) (waiting, bool) {
		return waiting{}, seen
	})
}

// pendingBackoff is the wait after try (1 for the first): the configured
// backoff, doubled for each try after the first, capped.
func (a *App) pendingBackoff(try int) time.Duration {
	d, ceiling := a.cfg.PendingBackoff, max(webhook.MaxPendingBackoff, a.cfg.PendingBackoff)
	if d <= 0 {
		d = webhook.DefaultPendingBackoff
	}
	for i := 1; i < try && d < ceiling; i++ {
		d *= 2
	}
	return min(d, ceiling)
}

// isWaiting says whether pr waits for a retry at its current head, which
// the queue holds for it: resync leaves it to that retry rather than
// spend the backoff early.
func (a *App) isWaiting(repo string, pr *github.PullRequest) bool {
	w, ok := a.waiting.get(prKey{strings.ToLower(repo), pr.GetNumber()})
	return ok && w.head == pr.GetHead().GetSHA() && w.next.After(a.now())
}
