package owners

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Commands understood in comments and review bodies.
const (
	CmdApprove       = "approve"
	CmdApproveCancel = "approve cancel"
	CmdHold          = "hold"
	CmdHoldCancel    = "hold cancel"
	CmdRecheck       = "recheck"
)

// Command is one command found in a comment.
type Command struct {
	Name string `json:"name"` // one of the Cmd constants
	Args string `json:"args,omitempty"`
	Line int    `json:"line"` // 1-based line of the comment it is on
}

// parseCommands finds the commands in a comment body, read as a person
// reads the rendered Markdown: a command starts a line of plain text of its
// own. "/approve" inside a sentence, a block quote, a fenced or indented
// code block, an HTML block or comment, a code span, or a table does not
// count (see commandLines). Names are case-insensitive. "/approve" takes
// any arguments (such as Prow's no-issue), and is a cancellation when one
// of them says "cancel", as is "/remove-approve"; "/hold" likewise, with "/unhold" and "/remove-hold".
func parseCommands(body string) []Command {
	var out []Command
	lines := strings.Split(body, "\n")
	counts := commandLines(lines)
	for i, line := range lines {
		line = strings.TrimRight(line, " \t\r")
		if !counts[i] || !strings.HasPrefix(line, "/") {
			continue
		}
		name, args := line[1:], ""
		if i := strings.IndexAny(name, " \t"); i >= 0 {
			name, args = name[:i], strings.TrimSpace(name[i+1:])
		}
		cancel := strings.Contains(strings.ToLower(args), "cancel")
		var cmd string
		switch strings.ToLower(name) {
		case "approve":
			cmd = CmdApprove
			if cancel {
				cmd = CmdApproveCancel
			}
		case "remove-approve":
			cmd = CmdApproveCancel
		case "hold":
			cmd = CmdHold
			if cancel {
				cmd = CmdHoldCancel
			}
		case "unhold", "remove-hold":
			cmd = CmdHoldCancel
		case "recheck":
			cmd = CmdRecheck
		default:
			continue
		}
		out = append(out, Command{Name: cmd, Args: args, Line: i + 1})
	}
	return out
}

// Review states, as GitHub spells them.
const (
	ReviewApproved         = "APPROVED"
	ReviewChangesRequested = "CHANGES_REQUESTED"
	ReviewCommented        = "COMMENTED"
	ReviewDismissed        = "DISMISSED"
)

// Event is a comment or a review on a change, as a GitHub App sees it:
// issue comments, review comments and reviews all come in as events.
type Event struct {
	User string `json:"user"`
	// Body is the comment's current (possibly edited) text, or the
	// review's body.
	Body string `json:"body,omitempty"`
	// ReviewState is set for reviews, empty for comments.
	ReviewState string    `json:"reviewState,omitempty"`
	Time        time.Time `json:"time"`
	// CommitSHA is the head commit the event was made on: a review's
	// commit_id, or for a comment the head when it was posted. Empty when
	// that is not known; Unbound then says why, for the report.
	CommitSHA string `json:"commitSHA,omitempty"`
	Unbound   string `json:"unbound,omitempty"`
	// Edited says the body was changed after it was posted, and EditedBy
	// who made the last change, when that is known. An edited body counts
	// only when its author is established to have made the edit
	// (spec/owners.md section 2, rule 11): GitHub lets collaborators edit
	// anyone's comments, and the edit keeps the author's name.
	Edited   bool   `json:"edited,omitempty"`
	EditedBy string `json:"editedBy,omitempty"`
}

// Voided is an event whose commands were not read, and why.
type Voided struct {
	User   string `json:"user"`
	Reason string `json:"reason"`
	Review bool   `json:"review,omitempty"`
}

// What names what was voided: "a comment by alice" or "a review by alice".
func (v Voided) What() string {
	if v.Review {
		return "a review by " + v.User
	}
	return "a comment by " + v.User
}

// editVoids says why an edited event's body does not count, or "" when it
// does: the event was not edited, or its author made the edit.
func editVoids(e Event) string {
	switch {
	case !e.Edited:
		return ""
	case NormLogin(e.EditedBy) == "":
		return "edited; the editor cannot be established: post the command in a new comment"
	case NormLogin(e.EditedBy) != NormLogin(e.User):
		return "edited by " + e.EditedBy + ", not its author; post the command in a new comment"
	}
	return ""
}

// Activity is what the events on a change ask for.
type Activity struct {
	// Approvals are the approvals and withdrawals, in time order.
	Approvals []Approval `json:"approvals"`
	// Hold is set while a /hold stands, and HoldBy names who placed
	// it, as HoldState(nil) decides: only a placer lifts their own hold.
	// A caller that knows who else may lift one (the approvers of the
	// touched paths) asks HoldState itself.
	Hold   bool   `json:"hold"`
	HoldBy string `json:"holdBy,omitempty"`
	// Holds are the /hold and /hold cancel commands, in time order.
	Holds []HoldCommand `json:"holds,omitempty"`
	// Recheck is the time of the latest /recheck, zero if none.
	Recheck time.Time `json:"recheck,omitzero"`
	// Voided are the comments and reviews with commands whose bodies did
	// not count because of an edit, for the report.
	Voided []Voided `json:"voided,omitempty"`
}

// HoldCommand is one /hold, or with Cancel one /hold cancel (/unhold).
type HoldCommand struct {
	User   string    `json:"user"`
	Cancel bool      `json:"cancel,omitempty"`
	Time   time.Time `json:"time"`
}

// HoldState replays the hold commands (spec/owners.md section 2, rule 13).
// A /hold holds the change; a /hold cancel lifts every hold when mayLift
// says its author may (an approver of a touched path, a collaborator),
// and otherwise only the author's own hold. Anyone else's lift is ignored
// and returned, so that it can be reported: a passer-by must not be able
// to release a hold an owner placed. by is the latest placer whose hold
// stands.
func (a Activity) HoldState(mayLift func(login string) bool) (held bool, by string, ignored []string) {
	var placers []string // in order of placing, each once
	for _, h := range a.Holds {
		user := NormLogin(h.User)
		i := slices.Index(placers, user)
		switch {
		case !h.Cancel:
			if i >= 0 {
				placers = slices.Delete(placers, i, i+1)
			}
			placers = append(placers, user)
		case mayLift != nil && mayLift(user):
			placers = nil
		case i >= 0:
			placers = slices.Delete(placers, i, i+1)
		case len(placers) > 0:
			ignored = append(ignored, h.User)
		}
	}
	if len(placers) == 0 {
		return false, "", ignored
	}
	last := placers[len(placers)-1]
	for i := len(a.Holds) - 1; i >= 0; i-- {
		if NormLogin(a.Holds[i].User) == last {
			return true, a.Holds[i].User, ignored
		}
	}
	return true, last, ignored
}

// ReadEvents turns comments and reviews into approvals and requests.
// An edited body's commands count only when its author made the edit
// (rule 11); the others are listed in Voided.
// Events by bots (see IsBot) are ignored entirely, and so are dismissed
// reviews, their bodies' commands included: a dismissal takes back the
// whole review (spec/owners.md section 2, rule 10). Within an event the
// commands of the body apply first, then the review state: APPROVED
// approves and CHANGES_REQUESTED withdraws. Evaluate keeps each user's
// latest intent.
func ReadEvents(events []Event, bots []string) Activity {
	events = slices.Clone(events)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	var act Activity
	for _, e := range events {
		if IsBot(e.User, bots) || NormLogin(e.User) == "" || strings.EqualFold(e.ReviewState, ReviewDismissed) {
			continue
		}
		via := ViaComment
		if e.ReviewState != "" {
			via = ViaReview
		}
		approval := func(cancel bool) Approval {
			return Approval{User: e.User, SHA: e.CommitSHA, Unbound: e.Unbound, Time: e.Time, Cancel: cancel, Via: via}
		}
		cmds := parseCommands(e.Body)
		if why := editVoids(e); why != "" {
			// The body is not the author's own words: none of its
			// commands count. A review's state is GitHub's record of
			// what its author submitted and stands.
			if len(cmds) > 0 {
				act.Voided = append(act.Voided, Voided{User: e.User, Reason: why, Review: e.ReviewState != ""})
			}
			cmds = nil
		}
		for _, c := range cmds {
			switch c.Name {
			case CmdApprove:
				act.Approvals = append(act.Approvals, approval(false))
			case CmdApproveCancel:
				act.Approvals = append(act.Approvals, approval(true))
			case CmdHold:
				act.Holds = append(act.Holds, HoldCommand{User: e.User, Time: e.Time})
			case CmdHoldCancel:
				act.Holds = append(act.Holds, HoldCommand{User: e.User, Cancel: true, Time: e.Time})
			case CmdRecheck:
				act.Recheck = e.Time
			}
		}
		switch strings.ToUpper(e.ReviewState) {
		case ReviewApproved:
			act.Approvals = append(act.Approvals, approval(false))
		case ReviewChangesRequested:
			act.Approvals = append(act.Approvals, approval(true))
		}
	}
	act.Hold, act.HoldBy, _ = act.HoldState(nil)
	return act
}
