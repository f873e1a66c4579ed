package ghapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/owners"
)

// Events returns the conversation of pull request number as owners.Events:
// every review and every issue comment, all pages of each, in time order.
// Each event is bound to the head commit it was given on, because an
// approval covers only the commit its author saw:
//
//   - a review carries its own commit (commit_id);
//   - a comment carries none, so it is bound to headSHA only when it was
//     posted (or last edited) after headSHA reached GitHub, and otherwise to
//     "" (an earlier head, which owners then does not count for headSHA).
//
// When headSHA reached GitHub is taken from the server-side creation time of
// the earliest check suite of headSHA. Commit dates are set by whoever makes
// the commit and cannot be trusted for this. Without any check suite the
// time is unknown, and every comment is bound to "". A commit that existed
// on another branch before it became the head counts from its first push;
// a comment made in between for an older head is then read as given on
// headSHA, so approvals in repositories that reuse commits across branches
// are best given as reviews.
//
// An edited comment counts from its edit: editing "/approve" into an old
// comment must not date the approval before the push it approves. Bots keep
// their "[bot]" login (added when GitHub left it out), so that
// owners.ReadEvents ignores them.
func Events(ctx context.Context, c *github.Client, owner, repo string, number int, headSHA string) ([]owners.Event, error) {
	pushed, err := firstCheckSuite(ctx, c, owner, repo, headSHA)
	if err != nil {
		return nil, err
	}
	var events []owners.Event

	ropts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListReviews(ctx, owner, repo, number, ropts)
		if err != nil {
			return nil, fmt.Errorf("list the reviews of %s/%s#%d: %w", owner, repo, number, err)
		}
		for _, r := range page {
			// A pending review is a draft only its author sees; it
			// has not been given yet.
			if strings.EqualFold(r.GetState(), "PENDING") || r.SubmittedAt == nil {
				continue
			}
			events = append(events, owners.Event{
				User:        login(r.GetUser()),
				Body:        r.GetBody(),
				ReviewState: strings.ToUpper(r.GetState()),
				Time:        r.GetSubmittedAt().Time,
				CommitSHA:   r.GetCommitID(),
			})
		}
		if resp.NextPage == 0 || len(page) == 0 {
			break
		}
		ropts.Page = resp.NextPage
	}

	copts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.Issues.ListComments(ctx, owner, repo, number, copts)
		if err != nil {
			return nil, fmt.Errorf("list the comments of %s/%s#%d: %w", owner, repo, number, err)
		}
		for _, cm := range page {
			t := cm.GetCreatedAt().Time
			if u := cm.GetUpdatedAt().Time; u.After(t) {
				t = u
			}
			sha := ""
			if !pushed.IsZero() && t.After(pushed) {
				sha = headSHA
			}
			events = append(events, owners.Event{
				User:      login(cm.GetUser()),
				Body:      cm.GetBody(),
				Time:      t,
				CommitSHA: sha,
			})
		}
		if resp.NextPage == 0 || len(page) == 0 {
			break
		}
		copts.Page = resp.NextPage
	}

	slices.SortStableFunc(events, func(a, b owners.Event) int { return a.Time.Compare(b.Time) })
	return events, nil
}

// firstCheckSuite returns when the earliest check suite of sha was created:
// GitHub creates suites as a commit is pushed, so this is when the commit
// reached GitHub, by GitHub's own clock. It is the zero time when sha has
// no check suite.
func firstCheckSuite(ctx context.Context, c *github.Client, owner, repo, sha string) (time.Time, error) {
	var first time.Time
	if sha == "" {
		return first, nil
	}
	opts := &github.ListCheckSuiteOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := c.Checks.ListCheckSuitesForRef(ctx, owner, repo, sha, opts)
		if err != nil {
			return time.Time{}, fmt.Errorf("list the check suites of %s/%s@%s: %w", owner, repo, sha, err)
		}
		for _, s := range res.CheckSuites {
			if s.CreatedAt == nil {
				continue
			}
			if t := s.GetCreatedAt().Time; first.IsZero() || t.Before(first) {
				first = t
			}
		}
		if resp.NextPage == 0 || len(res.CheckSuites) == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return first, nil
}

// login is a user's login, with the "[bot]" suffix that marks a bot to
// owners.IsBot even if the API left it out.
func login(u *github.User) string {
	l := u.GetLogin()
	if l != "" && strings.EqualFold(u.GetType(), "Bot") && !strings.HasSuffix(strings.ToLower(l), "[bot]") {
		l += "[bot]"
	}
	return l
}
