package webhook

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
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
	body := truncate(StatusMarker+"\n"+text, maxComment, "\n…\n")
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

// statusComment is the text of the status comment: the approval verdict,
// every OWNERS file whose approvers must approve with who did, whom to ask
// for the rest, approvals that do not count and why, and a hold. It holds
// nothing that changes unless the state does (no times), so that an
// unchanged state never rewrites the comment.
func statusComment(st *owners.State, act owners.Activity, pol *policy.Policy) string {
	var b strings.Builder
	if st.Approved {
		fmt.Fprintf(&b, "### ✅ Approved at %s\n\n", shortSHA(st.HeadSHA))
	} else {
		fmt.Fprintf(&b, "### ⏳ Waiting for approval at %s\n\n", shortSHA(st.HeadSHA))
	}
	b.WriteString(st.Reason + "\n")

	if len(st.Required) > 0 {
		b.WriteString("\n| OWNERS file | approved | by | paths |\n|---|---|---|---|\n")
		for _, req := range st.Required {
			mark := "no"
			if req.Approved {
				mark = "yes"
			}
			by := "—"
			if len(req.ApprovedBy) > 0 {
				by = strings.Join(req.ApprovedBy, ", ")
			}
			paths := req.Paths
			more := ""
			if len(paths) > 5 {
				more = fmt.Sprintf(" and %d more", len(paths)-5)
				paths = paths[:5]
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | `%s`%s |\n", req.File, mark, by, strings.Join(paths, "`, `"), more)
		}
	}
	for _, c := range st.Files {
		if c.Blocked != "" {
			fmt.Fprintf(&b, "\n`%s` cannot be approved: %s\n", c.Path, c.Blocked)
		}
	}
	if !st.Approved && len(st.Suggested) > 0 {
		ask := make([]string, len(st.Suggested))
		for i, s := range st.Suggested {
			ask[i] = "@" + s
		}
		fmt.Fprintf(&b, "\nTo approve the rest, ask %s: an owner comments `/approve` or approves a review.\n", strings.Join(ask, ", "))
	}
	if len(st.NotCounted) > 0 {
		b.WriteString("\nNot counted:\n")
		for _, n := range st.NotCounted {
			fmt.Fprintf(&b, "- %s: %s\n", n.Login, n.Reason)
		}
	}
	if act.Hold {
		by := ""
		if act.HoldBy != "" {
			by = " by " + act.HoldBy
		}
		fmt.Fprintf(&b, "\n🛑 Held%s: `/hold cancel` releases it.\n", by)
	}
	if pol != nil && !pol.Merge.Enabled {
		b.WriteString("\nMerging is off in this repository's policy; a maintainer merges.\n")
	}
	binding := "Approvals count for the commit they were given on."
	if pol != nil && pol.Owners.StickyApprovals {
		binding = "Approvals stay across pushes."
	}
	fmt.Fprintf(&b, "\n<sub>Commands: `/approve`, `/approve cancel`, `/hold`, `/hold cancel`, `/recheck`. %s</sub>\n", binding)
	return b.String()
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
