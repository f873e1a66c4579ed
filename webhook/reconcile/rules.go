package reconcile

import (
	"context"
	"log/slog"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/webhook"
)

// recheckOnRulesChange re-checks every open pull request of a repository
// when a push to its default branch changed the files that judge them
// (policy.JudgesChanges). Their fingerprints did not move, so neither a webhook
// nor the resync would look at them again; their check runs and comments
// would go on showing approvals that no longer hold, or missing ones that
// now do. Merging is safe either way (every merge decision re-reads the
// base), so a failure here is logged, not returned: the publish goes on.
// The pull requests' jobs are returned for the queue.
func (a *App) recheckOnRulesChange(ctx context.Context, gh *github.Client, inst int64, owner, name, before, after string, log *slog.Logger) []webhook.Job {
	if strings.Trim(before, "0") == "" {
		return nil // a new branch: nothing was judged by it yet
	}
	full := strings.ToLower(owner + "/" + name)
	paths, err := a.cache.ChangedPaths(full, before, after)
	if err != nil {
		log.Warn("cannot tell whether the push changed OWNERS or the policy; open pull requests are not re-checked", "before", before, "err", err)
		return nil
	}
	var rules []string
	for _, p := range paths {
		if policy.JudgesChanges(p) {
			rules = append(rules, p)
		}
	}
	if len(rules) == 0 {
		return nil
	}

	a.mu.Lock()
	for k := range a.done {
		if k.repo == full {
			delete(a.done, k)
		}
	}
	a.resyncN++
	run := a.resyncN
	a.mu.Unlock()

	var jobs []webhook.Job
	open, err := a.resyncRepo(ctx, gh, inst, run, owner, name, true, &jobs)
	if err != nil {
		log.Warn("re-checking open pull requests after a rules change", "err", err)
	}
	log.Info("the push changed how pull requests are judged; re-checking them", "files", rules, "open", open, "queued", len(jobs))
	return jobs
}
