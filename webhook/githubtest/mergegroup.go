package githubtest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The merge queue's groups, as GitHub runs them where a ruleset requires
// both a merge queue and status checks (RequireChecks). The queue builds
// a group (StartMergeGroup, when the test says, as GitHub does once its
// minimum wait is over): a commit on refs/heads/gh-readonly-queue/<base>/
// pr-<N>-<base sha> made from the base branch's tip with each queued pull
// request merged in, in queue order, and delivers merge_group
// checks_requested. The required checks are then judged on that commit
// alone, never on the pull requests' heads: when each reported success
// (neutral and skipped pass too, as on GitHub), the queue fast-forwards
// the base branch to the group's commit, marks its pull requests merged
// and delivers merge_group destroyed (merged) and the push; when one
// fails, the group is destroyed (dequeued) and its pull requests leave
// the queue (pull_request dequeued, CI_FAILURE), the base branch
// untouched. Otherwise it waits. GitHub gives up after the rule's
// check_response_timeout_minutes; the fake never does, so a check that
// never reports stalls the queue for good, which a test can observe.

// MergeGroup is a group the merge queue of a branch builds and tests.
type MergeGroup struct {
	BaseRef string // the branch it merges into, "main"
	BaseSHA string // the branch's tip it was built on
	HeadRef string // refs/heads/gh-readonly-queue/<base>/pr-<N>-<base sha>, N its last pull request
	HeadSHA string // the group's commit: what the branch becomes when it merges
	PRs     []int  // its pull requests, in queue order
	entries []QueueEntry
}

// maxGroup is the merge queue rule's max_entries_to_build.
const maxGroup = 5

// queueBot is who the merge queue's commits and merges are by.
const queueBot = "github-merge-queue[bot]"

// RequireChecks makes branch's ruleset require the status checks names
// (check runs or commit statuses of those names): the merge queue merges
// a group only once each has succeeded on the group's commit, and admits a
// pull request only once each has succeeded on its head.
func (r *Repo) RequireChecks(branch string, names ...string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.required == nil {
		r.required = map[string][]string{}
	}
	r.required[branch] = append(r.required[branch], names...)
	if r.rulesetID == 0 {
		r.rulesetID = r.s.newID()
	}
}

// MergeGroupOf is the group branch's queue is testing, if any.
func (r *Repo) MergeGroupOf(branch string) (MergeGroup, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	g := r.groups[branch]
	if g == nil {
		return MergeGroup{}, false
	}
	return g.view(), true
}

func (g *MergeGroup) view() MergeGroup {
	v := *g
	v.PRs, v.entries = slices.Clone(g.PRs), nil
	return v
}

// StartMergeGroup builds a group of the pull requests branch's queue holds
// (at most five, first first), delivers merge_group checks_requested to
// the webhooks subscribed (SendWebhooks), and settles it at once when
// nothing is required. One group at a time is tested per branch.
func (r *Repo) StartMergeGroup(branch string) (MergeGroup, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if !r.queuedLocked(branch) {
		return MergeGroup{}, fmt.Errorf("githubtest: %s of %s requires no merge queue", branch, r.FullName())
	}
	if g := r.groups[branch]; g != nil {
		return MergeGroup{}, fmt.Errorf("githubtest: the queue of %s is testing %s already", branch, g.HeadRef)
	}
	base, ok := r.tip(branch)
	if !ok {
		return MergeGroup{}, fmt.Errorf("githubtest: no branch %s in %s", branch, r.FullName())
	}
	g := &MergeGroup{BaseRef: branch, BaseSHA: base.String()}
	cur := base
	for _, e := range r.queues[branch] {
		pr := r.prs[e.Number]
		if len(g.entries) == maxGroup || pr == nil || pr.state != "open" || pr.headSHA != e.HeadSHA {
			continue
		}
		tree, err := pr.treeOntoLocked(cur)
		if err != nil {
			return MergeGroup{}, err
		}
		msg := fmt.Sprintf("Merge pull request #%d from %s/%s\n\n%s", pr.Number, r.Owner, pr.headRef, pr.title)
		if cur, err = writeCommit(r.st, tree, []plumbing.Hash{cur, plumbing.NewHash(pr.headSHA)}, msg, queueBot, r.s.now()); err != nil {
			return MergeGroup{}, err
		}
		g.entries, g.PRs = append(g.entries, e), append(g.PRs, e.Number)
	}
	if len(g.entries) == 0 {
		return MergeGroup{}, fmt.Errorf("githubtest: the queue of %s holds no pull request to group", branch)
	}
	g.HeadSHA = cur.String()
	g.HeadRef = fmt.Sprintf("refs/heads/gh-readonly-queue/%s/pr-%d-%s", branch, g.PRs[len(g.PRs)-1], g.BaseSHA)
	if err := r.st.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(g.HeadRef), cur)); err != nil {
		return MergeGroup{}, err
	}
	r.suiteFor(g.HeadSHA, strings.TrimPrefix(g.HeadRef, "refs/heads/"), g.BaseSHA)
	if r.groups == nil {
		r.groups = map[string]*MergeGroup{}
	}
	r.groups[branch] = g
	r.s.sendLocked(r, "merge_group", "checks_requested", PayloadArgs{Repo: r, Group: g})
	r.settleLocked(branch)
	return g.view(), nil
}

// checkStateLocked is what the required check name says at sha: "success"
// (a run that succeeded, was neutral or skipped; a successful status),
// "failure" (a run of another conclusion; a failed or errored status), or
// "" while it is pending or has not reported. A run, newest first, speaks
// before a status of the same name.
func (r *Repo) checkStateLocked(sha, name string) string {
	var run *checkRun
	for _, cr := range r.checkRuns {
		if cr.HeadSHA == sha && cr.Name == name && (run == nil || cr.ID > run.ID) {
			run = cr
		}
	}
	if run != nil {
		if run.Status != "completed" {
			return ""
		}
		switch run.Conclusion {
		case "success", "neutral", "skipped":
			return "success"
		}
		return "failure"
	}
	st := lastOf(r.statuses, func(c *commitStatus) bool { return c.SHA == sha && c.Context == name })
	switch {
	case st == nil:
		return ""
	case st.State == "success":
		return "success"
	case st.State == "failure" || st.State == "error":
		return "failure"
	}
	return ""
}

// unmetLocked names the first check branch requires that has not
// succeeded at sha, "" when none.
func (r *Repo) unmetLocked(branch, sha string) string {
	for _, name := range r.required[branch] {
		if r.checkStateLocked(sha, name) != "success" {
			return name
		}
	}
	return ""
}

// settleAllLocked settles every group under test: a check run or status
// was reported.
func (r *Repo) settleAllLocked() {
	for _, branch := range slices.Sorted(func(yield func(string) bool) {
		for b := range r.groups {
			if !yield(b) {
				return
			}
		}
	}) {
		r.settleLocked(branch)
	}
}

// settleLocked merges branch's group once every required check succeeded
// on its commit, destroys it when one failed, and otherwise leaves it.
func (r *Repo) settleLocked(branch string) {
	g := r.groups[branch]
	if g == nil {
		return
	}
	pending := false
	for _, name := range r.required[branch] {
		switch r.checkStateLocked(g.HeadSHA, name) {
		case "failure":
			r.dropGroupLocked(g, "dequeued", "CI_FAILURE")
			return
		case "":
			pending = true
		}
	}
	if pending {
		return
	}
	if tip, _ := r.tip(branch); tip.String() != g.BaseSHA {
		// Someone moved the branch under the queue: the group is no
		// longer what the branch would become. Its pull requests stay
		// queued for the next group.
		r.dropGroupLocked(g, "invalidated", "")
		return
	}
	if err := r.moveBranch(branch, plumbing.NewHash(g.HeadSHA)); err != nil {
		r.s.t.Errorf("githubtest: merging %s: %v", g.HeadRef, err)
		return
	}
	now := r.s.now()
	for _, e := range g.entries {
		pr := r.prs[e.Number]
		pr.state, pr.merged, pr.mergedAt, pr.closedAt, pr.updated = "closed", true, now, now, now
		pr.mergedBy, pr.mergeCommitSHA = queueBot, g.HeadSHA
		r.merges = append(r.merges, Merge{Number: e.Number, SHA: g.HeadSHA, Method: "merge", HeadSHA: e.HeadSHA})
	}
	r.leaveQueueLocked(branch, g.PRs)
	r.endGroupLocked(g)
	r.s.sendLocked(r, "merge_group", "destroyed", PayloadArgs{Repo: r, Group: g, Reason: "merged"})
	r.s.sendLocked(r, "push", "", PayloadArgs{Repo: r, Ref: "refs/heads/" + branch, Before: g.BaseSHA, After: g.HeadSHA, Sender: queueBot})
}

// dropGroupLocked destroys g for reason (merge_group destroyed). A
// pull request reason takes the group's pull requests out of the queue
// too, each with a pull_request dequeued delivery.
func (r *Repo) dropGroupLocked(g *MergeGroup, reason, prReason string) {
	r.endGroupLocked(g)
	r.s.sendLocked(r, "merge_group", "destroyed", PayloadArgs{Repo: r, Group: g, Reason: reason})
	if prReason == "" {
		return
	}
	r.leaveQueueLocked(g.BaseRef, g.PRs)
	for _, n := range g.PRs {
		r.prs[n].updated = r.s.now()
		r.s.sendLocked(r, "pull_request", "dequeued", PayloadArgs{Repo: r, PR: n, Reason: prReason, Sender: queueBot})
	}
}

// endGroupLocked forgets g and its ref.
func (r *Repo) endGroupLocked(g *MergeGroup) {
	_ = r.st.RemoveReference(plumbing.ReferenceName(g.HeadRef))
	delete(r.groups, g.BaseRef)
}

// leaveQueueLocked takes the pull requests numbers out of branch's queue.
func (r *Repo) leaveQueueLocked(branch string, numbers []int) {
	r.queues[branch] = slices.DeleteFunc(r.queues[branch], func(e QueueEntry) bool { return slices.Contains(numbers, e.Number) })
}

// leftQueueLocked destroys the group holding pull request number, which
// left the queue: GitHub destroys every group that holds it, and builds
// the others again.
func (r *Repo) leftQueueLocked(branch string, number int) {
	if g := r.groups[branch]; g != nil && slices.Contains(g.PRs, number) {
		r.dropGroupLocked(g, "dequeued", "")
	}
}

// requiredChecksRule is the required_status_checks rule of branch, nil
// when it requires none.
func (r *Repo) requiredChecksRule(branch string) obj {
	names := r.required[branch]
	if len(names) == 0 {
		return nil
	}
	checks := []obj{}
	for _, n := range names {
		checks = append(checks, obj{"context": n})
	}
	return obj{
		"type":                "required_status_checks",
		"ruleset_source_type": "Repository",
		"ruleset_source":      r.FullName(),
		"ruleset_id":          r.rulesetID,
		"parameters": obj{
			"required_status_checks":               checks,
			"strict_required_status_checks_policy": false,
		},
	}
}
