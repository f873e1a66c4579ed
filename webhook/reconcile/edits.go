package reconcile

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// maxEdits bounds the edits remembered; the oldest go first. A forgotten
// edit fails closed: its comment counts for nothing.
const maxEdits = 10000

// editLog remembers who made each comment edit the App was told of, from
// the issue_comment "edited" deliveries: GitHub's REST API says that a
// comment was edited, never by whom, and a collaborator may edit anyone's
// comment (spec/owners.md section 2, rule 11). It lives in memory only; an
// edit from before a restart is unknown, and its comment does not count.
type editLog struct {
	mu    sync.Mutex
	edits map[editKey]edit
	order []editKey
}

type editKey struct {
	repo string
	id   int64
}

type edit struct {
	by string
	at time.Time
}

// record notes the editor of an issue_comment "edited" delivery; other
// jobs are ignored. Of two deliveries for one comment the later edit
// wins, whatever order they came in.
func (l *editLog) record(job webhook.Job) {
	if job.Event != "issue_comment" || job.Action != "edited" {
		return
	}
	var p struct {
		Comment struct {
			ID        int64     `json:"id"`
			UpdatedAt time.Time `json:"updated_at"`
		} `json:"comment"`
		Sender struct {
			Login string `json:"login"`
		} `json:"sender"`
	}
	if json.Unmarshal(job.Payload, &p) != nil || p.Comment.ID == 0 || p.Sender.Login == "" {
		return
	}
	k := editKey{repo: strings.ToLower(job.Key.Repo), id: p.Comment.ID}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.edits == nil {
		l.edits = make(map[editKey]edit)
	}
	old, seen := l.edits[k]
	if seen && old.at.After(p.Comment.UpdatedAt) {
		return
	}
	if !seen {
		l.order = append(l.order, k)
		if len(l.order) > maxEdits {
			delete(l.edits, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.edits[k] = edit{by: p.Sender.Login, at: p.Comment.UpdatedAt}
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
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	e, ok := r.l.edits[editKey{repo: r.repo, id: id}]
	if !ok || !e.at.Equal(updated) {
		return "", false
	}
	return e.by, true
}
