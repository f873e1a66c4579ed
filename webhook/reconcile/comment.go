package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
)

// StatusMarker is the hidden line that marks the one status comment the
// App keeps on each pull request.
const StatusMarker = "<!-- catalogbot:status -->"

// maxComment is GitHub's limit on a comment body.
const maxComment = 65536

// syncComment makes the status comment of the pull request say body: the
// App's comment holding StatusMarker is edited when its text differs, and
// created when there is none. changed says whether anything was written.
//
// Only comments by the App's bot user are considered, so nobody can make
// the App edit, or stop it from updating, a comment of theirs by copying
// the marker into it. When the App's login cannot be learnt, any GitHub App
// bot's comment with the marker is taken: editing another App's comment
// fails, and then a comment of our own is created.
//
// A comment that says any of keep instead is left as it is: another state
// the same facts allow (a pull request the merge queue holds), which only
// a later step of the reconcile can tell, is not rewritten back and forth.
func (r *prRun) syncComment(ctx context.Context, text string, keep ...string) (changed bool, err error) {
	body := commentBody(text)
	login := r.a.botLogin()
	mine, err := r.statusComment(ctx)
	if err != nil {
		return false, err
	}
	if mine != nil {
		if mine.GetBody() == body {
			return false, nil
		}
		for _, k := range keep {
			if mine.GetBody() == commentBody(k) {
				return false, nil
			}
		}
		_, _, err := r.gh.Issues.EditComment(ctx, r.owner, r.name, mine.GetID(), &github.IssueComment{Body: github.String(body)})
		if err == nil {
			return true, nil
		}
		if login != "" || (statusOf(err) != 403 && statusOf(err) != 404) {
			return false, fmt.Errorf("edit the status comment %d of %s/%s#%d: %w", mine.GetID(), r.owner, r.name, r.number, err)
		}
	}
	if _, _, err := r.gh.Issues.CreateComment(ctx, r.owner, r.name, r.number, &github.IssueComment{Body: github.String(body)}); err != nil {
		return false, fmt.Errorf("comment on %s/%s#%d: %w", r.owner, r.name, r.number, err)
	}
	return true, nil
}

// commentBody is the status comment saying text, as it is written.
func commentBody(text string) string {
	return checks.Truncate(StatusMarker+"\n"+text, maxComment, checks.Bytes, "\n…\n")
}

// statusComment finds the App's status comment on the pull request, nil
// when there is none yet.
func (r *prRun) statusComment(ctx context.Context) (*github.IssueComment, error) {
	login := r.a.botLogin()
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := r.gh.Issues.ListComments(ctx, r.owner, r.name, r.number, opts)
		if err != nil {
			return nil, fmt.Errorf("list the comments of %s/%s#%d: %w", r.owner, r.name, r.number, err)
		}
		for _, c := range page {
			if strings.Contains(c.GetBody(), StatusMarker) && ours(c.GetUser(), login) {
				return c, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}

// ours reports whether u is the App's bot user (login, when known).
func ours(u *github.User, login string) bool {
	if login != "" {
		return strings.EqualFold(u.GetLogin(), login)
	}
	return u.GetType() == "Bot" && strings.HasSuffix(strings.ToLower(u.GetLogin()), "[bot]")
}
