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
func (r *prRun) syncComment(ctx context.Context, text string) (changed bool, err error) {
	body := checks.Truncate(StatusMarker+"\n"+text, maxComment, checks.Bytes, "\n…\n")
	login := r.a.botLogin()
	var mine *github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for mine == nil {
		page, resp, err := r.gh.Issues.ListComments(ctx, r.owner, r.name, r.number, opts)
		if err != nil {
			return false, fmt.Errorf("list the comments of %s/%s#%d: %w", r.owner, r.name, r.number, err)
		}
		for _, c := range page {
			if strings.Contains(c.GetBody(), StatusMarker) && ours(c.GetUser(), login) {
				mine = c
				break
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if mine != nil {
		if mine.GetBody() == body {
			return false, nil
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

// ours reports whether u is the App's bot user (login, when known).
func ours(u *github.User, login string) bool {
	if login != "" {
		return strings.EqualFold(u.GetLogin(), login)
	}
	return u.GetType() == "Bot" && strings.HasSuffix(strings.ToLower(u.GetLogin()), "[bot]")
}
