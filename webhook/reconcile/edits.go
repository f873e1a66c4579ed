package reconcile

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// maxEdits bounds the edits remembered; the oldest go first. A forgotten
// edit fails closed: its comment counts for nothing.
const maxEdits = 10000

// editLog remembers who made each comment edit the App was told of, from
// the issue_comment "edited" deliveries: GitHub's REST API says that a
// comment was edited, never by whom, and a collaborator may edit anyone's
// comment (spec/owners.md section 2, rule 11). It is kept in the
// service's state (AppOptions.Facts), so an edit from before a restart is
// still known; in memory only, it is not, and its comment does not count.
type editLog struct {
	edits memo[editKey, edit]
}

type editKey struct {
	repo   string
	id     int64
	review bool
}

type edit struct {
	by string
	at time.Time
	// author and others are a review's author and the first editor who
	// was not its author: the review listing gives no edit time, so an
	// edit by anyone else taints the review for good.
	author, other string
}

// record notes the editor of an issue_comment or pull_request_review
// "edited" delivery; other jobs are ignored. Of two deliveries for one
// comment the later edit wins, whatever order they came in.
func (l *editLog) record(job webhook.Job) {
	if job.Action != "edited" {
		return
	}
	var p struct {
		Comment struct {
			ID        int64     `json:"id"`
			UpdatedAt time.Time `json:"updated_at"`
		} `json:"comment"`
		Review struct {
			ID   int64 `json:"id"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
		} `json:"review"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	if json.Unmarshal(job.Payload, &p) != nil || p.Sender.Login == "" {
		return
	}
	repo := strings.ToLower(job.Key.Repo)
	switch {
	case job.Event == "issue_comment" && p.Comment.ID != 0:
		l.edits.update(editKey{repo: repo, id: p.Comment.ID}, maxEdits, func(old edit, seen bool) (edit, bool) {
			if seen && old.at.After(p.Comment.UpdatedAt) {
				return old, false
			}
			return edit{by: p.Sender.Login, at: p.Comment.UpdatedAt}, true
		})
	case job.Event == "pull_request_review" && p.Review.ID != 0:
		l.edits.update(editKey{repo: repo, id: p.Review.ID, review: true}, maxEdits, func(old edit, seen bool) (edit, bool) {
			if !seen {
				old.author = p.Review.User.Login
			}
			if old.other == "" && !strings.EqualFold(p.Sender.Login, old.author) {
				old.other = p.Sender.Login
			}
			return old, true
		})
	}
}

// forRepo is the log of one repository, as ghapi.Events reads it.
func (l *editLog) forRepo(repo string) repoEdits { return repoEdits{l: l, repo: strings.ToLower(repo)} }

type repoEdits struct {
	l    *editLog
	repo string
}

// CommentEditor knows the editor only of the very edit that left the
// comment as it is: an edit after the one a delivery named (its delivery
// not yet come, or lost) is unknown.
func (r repoEdits) CommentEditor(id int64, updated time.Time) (string, bool) {
	e, ok := r.l.edits.get(editKey{repo: r.repo, id: id})
	if !ok || !e.at.Equal(updated) {
		return "", false
	}
	return e.by, true
}

// ReviewEditor says whether review id was edited, as far as the App was
// told, and by whom: its author when every edit was theirs, otherwise the
// first other editor.
func (r repoEdits) ReviewEditor(id int64) (string, bool) {
	e, ok := r.l.edits.get(editKey{repo: r.repo, id: id, review: true})
	if !ok {
		return "", false
	}
	if e.other != "" {
		return e.other, true
	}
	return e.author, true
}
