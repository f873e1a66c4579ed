package reconcile

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
)

// A base branch whose rules require a merge queue refuses the REST merge
// (405); the pull request goes through the queue instead (enqueue), pinned
// to the checked head. The status comment says it is queued, and every
// later reconcile of the same facts leaves that comment as it is (the
// keep texts of syncComment): rewriting it back and forth would make
// GitHub deliver the App's own edits, forever.
//
// When the queue lets go of a pull request (pull_request dequeued: its
// checks failed, a conflict, someone took it out), queueing it again at
// once would loop. The App notes it in its status comment, on a hidden
// line (dequeueMarker) with the head, GitHub's time and the reason, and
// does not queue that head again until a new commit, a /recheck after it,
// or a re-run of its check run.
//
// A hold given after the pull request was queued takes it out of the queue
// again (dequeueHeld), which would otherwise merge it once its checks
// pass: a held pull request's reconcile asks GitHub for its queue entry,
// one GraphQL query. GitHub then delivers pull_request dequeued, sent by
// the App's own bot; that one is not the queue letting go, and the pull
// request is queued again once the hold is lifted.

// dequeueMarker opens the hidden line of a status comment that records
// the merge queue letting go of the pull request.
const dequeueMarker = "<!-- catalogbot:dequeued "

// dequeue is the merge queue letting go of a pull request at a head.
type dequeue struct {
	sha    string
	at     time.Time // GitHub's time of it
	reason string
}

func (d dequeue) line() string {
	return fmt.Sprintf("%s%s %s %s -->", dequeueMarker, d.sha, d.at.UTC().Format(time.RFC3339), d.reason)
}

// parseDequeue reads the dequeue line of a status comment.
func parseDequeue(body string) (dequeue, bool) {
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), dequeueMarker)
		if !ok {
			continue
		}
		f := strings.Fields(strings.TrimSuffix(rest, "-->"))
		if len(f) < 3 {
			return dequeue{}, false
		}
		at, err := time.Parse(time.RFC3339, f[1])
		if err != nil {
			return dequeue{}, false
		}
		return dequeue{sha: f[0], at: at, reason: strings.Join(f[2:], " ")}, true
	}
	return dequeue{}, false
}

// cleanReason keeps a reason from a delivery to what GitHub's reasons are
// made of (CI_FAILURE, MANUAL), so that it can neither end the hidden
// line nor say anything else there.
func cleanReason(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			return r
		}
		return ' '
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:100]
	}
	return cmp.Or(s, "no reason given")
}

// removedFromQueue says whether the merge queue let go of the pull request
// at head and it is not to be queued again yet: this job is GitHub's news
// of it, or the status comment recorded it and nothing since (a new commit,
// a later /recheck, a re-run of the check) asks for another try.
func (r *prRun) removedFromQueue(ctx context.Context, head string, outcome *review.Outcome) (*dequeue, error) {
	if r.job.Event == "pull_request" && r.job.Action == "dequeued" {
		var p struct {
			Reason string `json:"reason"`
			Sender struct {
				Login string `json:"login"`
			} `json:"sender"`
			PullRequest struct {
				UpdatedAt time.Time `json:"updated_at"`
				Head      struct {
					SHA string `json:"sha"`
				} `json:"head"`
			} `json:"pull_request"`
		}
		err := json.Unmarshal(r.job.Payload, &p)
		if bot := r.a.botLogin(); err == nil && bot != "" && strings.EqualFold(p.Sender.Login, bot) {
			// The App took it out itself, for a hold.
			return nil, nil
		}
		if err == nil && p.PullRequest.Head.SHA == head {
			at := p.PullRequest.UpdatedAt
			if at.IsZero() {
				at = r.a.now()
			}
			return &dequeue{sha: head, at: at.Truncate(time.Second), reason: cleanReason(p.Reason)}, nil
		}
	}
	if r.rerequest {
		return nil, nil
	}
	mine, err := r.statusComment(ctx)
	if err != nil || mine == nil {
		return nil, err
	}
	d, ok := parseDequeue(mine.GetBody())
	if !ok || d.sha != head || outcome.Activity.Recheck.After(d.at) {
		return nil, nil
	}
	return &d, nil
}

// queuedText is the status comment of a pull request the merge queue
// holds at its checked head, and removedText of one it let go of.
func queuedText(in mergeInput) string {
	return in.outcome.QueueComment(in.pre, review.Queue{Base: in.base, SHA: in.snap.HeadSHA})
}

func removedText(in mergeInput, d *dequeue) string {
	return in.outcome.QueueComment(in.pre, review.Queue{Base: in.base, SHA: d.sha, Removed: d.reason}) + "\n" + d.line()
}

// requiresQueue reports whether a 405 refusal of the merge is the base
// branch requiring a merge queue: GitHub's message says so, or the
// branch's rules list a merge_queue rule. A failure to read the rules is
// taken as no, and the refusal is handled as any 405.
func (r *prRun) requiresQueue(ctx context.Context, base string, refusal error) bool {
	if ghapi.MergeQueueRefusal(refusal) {
		return true
	}
	queued, err := ghapi.RequiresMergeQueue(ctx, r.gh, r.owner, r.name, base)
	if err != nil {
		r.log.Warn("could not read the base branch's rules after a refused merge", "branch", base, "err", err)
		return false
	}
	return queued
}

// enqueue puts the pull request in its base branch's merge queue, pinned
// to the checked head (expectedHeadOid), and says so in the status
// comment. A head that moved since the check is checked again, as a 409
// from the REST merge is; one the queue holds already stays queued.
func (r *prRun) enqueue(ctx context.Context, in mergeInput, sha string, pr *github.PullRequest) (again bool, err error) {
	a := r.a
	_, err = ghapi.EnqueuePullRequest(ctx, r.gh, pr.GetNodeID(), sha)
	switch {
	case errors.Is(err, ghapi.ErrAlreadyQueued):
		r.log.Info("already in the merge queue", "branch", in.base, "sha", sha)
		r.blocks = queuedBlocks(in.base, sha)
	case errors.Is(err, ghapi.ErrQueueHeadMoved):
		a.metrics.Merges.WithLabelValues(MergeConflict).Inc()
		r.log.Info("the head moved before it could be queued; checking again", "err", err)
		if r.mergeTried {
			r.blocks = []policy.Block{{Code: policy.CodeHeadMoved, Text: "the head moved before the pull request could be queued; the next event or resync checks it again"}}
			return false, nil
		}
		r.mergeTried = true
		return true, nil
	case err != nil:
		a.metrics.Merges.WithLabelValues(MergeError).Inc()
		return false, a.fail("merge", fmt.Errorf("queue %s/%s#%d at %s: %w", r.owner, r.name, r.number, sha, err))
	default:
		a.metrics.Merges.WithLabelValues(MergeQueued).Inc()
		r.log.Info("queued in the merge queue", "branch", in.base, "sha", sha)
		r.blocks = queuedBlocks(in.base, sha)
	}
	changed, err := r.syncComment(ctx, queuedText(in))
	if err != nil {
		return false, a.fail("comment", err)
	}
	if changed {
		// Our own comment moved updated_at: the resync fingerprint is
		// of the state this run leaves behind.
		if pr, err := r.getPR(ctx); err == nil {
			r.final = pr
		}
	}
	return false, nil
}

// queuedBlocks say that the merge queue of base holds the pull request at
// sha: GitHub merges it, once the queue's checks pass.
func queuedBlocks(base, sha string) []policy.Block {
	return []policy.Block{{Code: policy.CodeQueued,
		Text: fmt.Sprintf("queued in the merge queue of %s at %s; GitHub merges it once the queue's required checks pass", base, change.ShortSHA(sha))}}
}

// dequeueHeld takes a held pull request out of its base branch's merge
// queue, if a queue holds it.
func (r *prRun) dequeueHeld(ctx context.Context, in mergeInput) error {
	entry, err := ghapi.MergeQueueEntryOf(ctx, r.gh, in.node)
	if err != nil {
		return r.a.fail("merge", err)
	}
	if entry == nil {
		return nil
	}
	if err := ghapi.DequeuePullRequest(ctx, r.gh, in.node); err != nil {
		return r.a.fail("merge", err)
	}
	r.log.Info("held: taken out of the merge queue", "branch", in.base, "entry", entry.ID)
	return nil
}
