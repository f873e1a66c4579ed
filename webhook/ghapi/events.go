package ghapi

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// EditLog is what a front end saw of comment edits: the issue_comment
// "edited" deliveries, whose sender is the editor. GitHub's REST listing
// of a comment says that it was edited (updated_at), never by whom.
type EditLog interface {
	// CommentEditor returns who made the edit that left comment id as
	// last updated at updated, when a delivery said so.
	CommentEditor(id int64, updated time.Time) (login string, ok bool)
	// ReviewEditor says whether review id's body was edited, as far as
	// deliveries told, and by whom: the author only when every edit was
	// theirs. GitHub's review listing shows no edit at all.
	ReviewEditor(id int64) (login string, edited bool)
}

// HeadLog is what a front end saw of pushes to pull requests: the
// pull_request "opened", "synchronize" and "reopened" deliveries, signed by
// GitHub, which name the pull request, its new head and GitHub's time of
// the change (pull_request.updated_at). The timeline gives no time for an
// ordinary push; a delivery does.
type HeadLog interface {
	// HeadSince returns when a delivery said that sha became the head of
	// pull request number, the latest such time when there were several.
	HeadSince(number int, sha string) (at time.Time, ok bool)
}

// Events returns the conversation of pull request number as owners.Events:
// every review and every issue comment, all pages of each, in time order.
// Each event is bound to the head commit it was given on, because an
// approval covers only the commit its author saw:
//
//   - a review carries its own commit (commit_id);
//   - a comment carries none, so it is bound to headSHA only when it was
//     posted (or last edited) after headSHA became this pull request's
//     head, by the pull request's own timeline or by heads, what GitHub's
//     deliveries said of this pull request's pushes (see headSince), and
//     otherwise to "", with the reason in Unbound. heads is nil where no
//     deliveries come (the Action).
//
// Nothing another pull request or branch can create takes part: not check
// suites (which belong to a commit wherever it was pushed), not commit
// dates (which whoever makes the commit sets).
//
// A comment edited after it was posted (updated_at after created_at) is
// marked Edited, with its editor when edits knows it; owners then reads
// it only when its author made the edit. A review's edits show only in
// deliveries: one edited by someone else, as edits knows, is marked so
// too (its state stands; its body's commands do not). An edited comment
// counts from its edit: editing "/approve" into an old comment must not
// date the approval before the push it approves. Bots keep their "[bot]"
// login (added when GitHub left it out), so that owners.ReadEvents
// ignores them.
func Events(ctx context.Context, c *github.Client, owner, repo string, number int, headSHA string, edits EditLog, heads HeadLog) ([]owners.Event, error) {
	timeline, err := listTimeline(ctx, c, owner, repo, number)
	if err != nil {
		return nil, err
	}
	var pushed *time.Time
	if heads != nil {
		pushed = new(time.Time)
		if at, ok := heads.HeadSince(number, headSHA); ok && headSHA != "" {
			*pushed = at
		}
	}
	since, bound, unbound := headSince(timeline, headSHA, pushed)
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
			ev := owners.Event{
				User:        login(r.GetUser()),
				Body:        r.GetBody(),
				ReviewState: strings.ToUpper(r.GetState()),
				Time:        r.GetSubmittedAt().Time,
				CommitSHA:   r.GetCommitID(),
			}
			if edits != nil {
				ev.EditedBy, ev.Edited = edits.ReviewEditor(r.GetID())
			}
			events = append(events, ev)
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
			edited := false
			if u := cm.GetUpdatedAt().Time; u.After(t) {
				t, edited = u, true
			}
			ev := owners.Event{
				User:   login(cm.GetUser()),
				Body:   cm.GetBody(),
				Time:   t,
				Edited: edited,
			}
			switch {
			case !bound:
				ev.Unbound = unbound
			case t.After(since):
				ev.CommitSHA = headSHA
			default:
				ev.Unbound = fmt.Sprintf("commented before the head %s became this pull request's head (%s); a push after an approval needs a fresh one",
					change.ShortSHA(headSHA), since.UTC().Format(time.RFC3339))
			}
			if edited && edits != nil {
				ev.EditedBy, _ = edits.CommentEditor(cm.GetID(), cm.GetUpdatedAt().Time)
			}
			events = append(events, ev)
		}
		if resp.NextPage == 0 || len(page) == 0 {
			break
		}
		copts.Page = resp.NextPage
	}

	slices.SortStableFunc(events, func(a, b owners.Event) int { return a.Time.Compare(b.Time) })
	return events, nil
}

// listTimeline reads every page of the pull request's timeline.
func listTimeline(ctx context.Context, c *github.Client, owner, repo string, number int) ([]*github.Timeline, error) {
	var all []*github.Timeline
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.Issues.ListIssueTimeline(ctx, owner, repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the timeline of %s/%s#%d: %w", owner, repo, number, err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 || len(page) == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return all, nil
}

// headSince says since when head has been the pull request's head (spec/
// owners.md section 2, rule 12): a comment counts for head only when it was
// written after that moment. ok is false, with the reason, when it cannot
// be established; no comment is then bound.
//
// The timeline records force-pushes with the new head and GitHub's time
// (head_ref_force_pushed), and commits (committed) with their SHA but no
// push time; a commit's dates are its maker's to choose, and the timeline
// orders commits by them, so neither the dates nor the order say when a
// commit arrived. pushed is what deliveries said: nil where none come (the
// Action), zero when none named head for this pull request (as after a
// restart), else GitHub's time when head became its head. So:
//
//   - the latest head change counts: when the latest force-push moved the
//     head to head, head has been the head since that force-push, even
//     when head existed before (on this pull request or elsewhere) or a
//     delivery named it earlier: an approval given on a later head, or
//     before the force-push, does not carry over;
//   - otherwise, when a delivery said head became the head and no
//     force-push came after it, head has been the head since then;
//   - when the latest force-push went elsewhere, after any such delivery,
//     head came after it by an ordinary push whose time is unknown;
//   - without force-pushes, a pull request whose only commit is head has
//     had it as its head since it was opened, so every comment is after;
//     with more commits head may have been pushed at any time.
func headSince(timeline []*github.Timeline, head string, pushed *time.Time) (since time.Time, ok bool, why string) {
	const push = "approve with a review, which names the commit it approves"
	if head == "" {
		return time.Time{}, false, "the head commit is unknown, so no comment can be tied to it"
	}
	var last *github.Timeline
	var commits []string
	for _, ev := range timeline {
		switch ev.GetEvent() {
		case "head_ref_force_pushed":
			// The latest by GitHub's clock; of equal times the later
			// in the timeline.
			if last == nil || !ev.GetCreatedAt().Time.Before(last.GetCreatedAt().Time) {
				last = ev
			}
		case "committed":
			if !slices.ContainsFunc(commits, func(s string) bool { return strings.EqualFold(s, ev.GetSHA()) }) {
				commits = append(commits, ev.GetSHA())
			}
		}
	}
	// Why an ordinary push has no known time: the Action is told of no
	// pushes, the App only of those since it started.
	unknown := "its timeline does not say when, and the Action is told of no pushes"
	if pushed != nil {
		unknown = "its timeline does not say when, and no push delivery for it has reached the App since it started"
	}
	delivered := pushed != nil && !pushed.IsZero()
	switch {
	case last != nil && last.CreatedAt == nil:
		return time.Time{}, false, "the pull request's timeline records a force-push without a time; " + push
	case delivered && (last == nil || !last.GetCreatedAt().Time.After(*pushed)):
		return *pushed, true, ""
	case last != nil && strings.EqualFold(last.GetCommitID(), head):
		return last.GetCreatedAt().Time, true, ""
	case last != nil:
		return time.Time{}, false, fmt.Sprintf("the head %s was pushed after a force-push, and %s; %s",
			change.ShortSHA(head), unknown, push)
	case len(commits) == 1 && strings.EqualFold(commits[0], head):
		return time.Time{}, true, ""
	case slices.ContainsFunc(commits, func(s string) bool { return strings.EqualFold(s, head) }):
		return time.Time{}, false, fmt.Sprintf("the head %s was pushed after the pull request was opened, and %s; %s",
			change.ShortSHA(head), unknown, push)
	}
	return time.Time{}, false, fmt.Sprintf("the head %s is not in the pull request's timeline; %s", change.ShortSHA(head), push)
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
