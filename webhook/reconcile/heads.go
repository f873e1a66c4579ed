package reconcile

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// maxHeads bounds the head changes remembered; the oldest go first. A
// forgotten one fails closed: comments after an ordinary push to that head
// are bound to nothing, as after a restart.
const maxHeads = 10000

// headLog remembers when each pull request's head became its head, from
// GitHub's signed pull_request "opened", "synchronize" and "reopened"
// deliveries: their pull_request.updated_at is GitHub's clock at the
// change. The timeline gives no time for an ordinary push (a committed
// event carries only the dates its committer chose), so without this a
// comment after such a push cannot be tied to the new head. It is kept in
// the service's state (AppOptions.Facts), so a push from before a restart
// is still known; in memory only, it is not.
type headLog struct {
	heads memo[headKey, time.Time]
}

// headKey is one head of one pull request: a delivery for another pull
// request, or for another head, says nothing of this one.
type headKey struct {
	repo   string
	number int
	sha    string
}

// record notes the head a pull_request delivery that moves the head names;
// other jobs are ignored. Of two deliveries for one head the later time
// wins, whatever order they came in: a comment must follow the latest time
// the head became the head, and the later time fails closed.
func (l *headLog) record(job webhook.Job) {
	if job.Event != "pull_request" {
		return
	}
	switch job.Action {
	case "opened", "synchronize", "reopened":
	default:
		return
	}
	var p struct {
		Number      int `json:"number"`
		PullRequest struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
			UpdatedAt time.Time `json:"updated_at"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(job.Payload, &p) != nil || p.PullRequest.Head.SHA == "" || p.PullRequest.UpdatedAt.IsZero() {
		return
	}
	// The job's key is what the router read from the same payload; a
	// payload whose numbers disagree names no pull request for sure.
	n := p.PullRequest.Number
	if n <= 0 || n != job.Key.PR || (p.Number != 0 && p.Number != n) {
		return
	}
	k := headKey{repo: strings.ToLower(job.Key.Repo), number: n, sha: strings.ToLower(p.PullRequest.Head.SHA)}
	at := p.PullRequest.UpdatedAt
	l.heads.update(k, maxHeads, func(old time.Time, seen bool) (time.Time, bool) {
		return at, !seen || at.After(old)
	})
}

// forRepo is the log of one repository, as ghapi.Events reads it.
func (l *headLog) forRepo(repo string) repoHeads {
	return repoHeads{l: l, repo: strings.ToLower(repo)}
}

type repoHeads struct {
	l    *headLog
	repo string
}

// HeadSince implements ghapi.HeadLog.
func (r repoHeads) HeadSince(number int, sha string) (time.Time, bool) {
	at, ok := r.l.heads.get(headKey{repo: r.repo, number: number, sha: strings.ToLower(sha)})
	return at, ok
}
