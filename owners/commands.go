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

// ParseCommands finds the commands in a comment body, read as a person
// reads the rendered Markdown: a command starts a line of plain text of its
// own. "/approve" inside a sentence, a block quote, a fenced or indented
// code block, an HTML block or comment, a code span, or a table does not
// count (see commandLines). Names are case-insensitive. "/approve" takes
// any arguments (such as Prow's no-issue), and is a cancellation when one
// of them says "cancel", as is "/remove-approve"; "/hold" likewise, with "/unhold" and "/remove-hold".
func ParseCommands(body string) []Command {
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
	// commit_id, or for a comment the head when it was posted.
	CommitSHA string `json:"commitSHA,omitempty"`
}

// Activity is what the events on a change ask for.
type Activity struct {
	// Approvals are the approvals and withdrawals, in time order.
	Approvals []Approval `json:"approvals"`
	// Hold is set while the latest /hold has not been cancelled.
	Hold   bool   `json:"hold"`
	HoldBy string `json:"holdBy,omitempty"`
	// Recheck is the time of the latest /recheck, zero if none.
	Recheck time.Time `json:"recheck,omitzero"`
}

// ReadEvents turns comments and reviews into approvals and requests.
// Events by bots (see IsBot) are ignored entirely. Within an event the
// commands of the body apply first, then the review state: APPROVED
// approves and CHANGES_REQUESTED withdraws. Evaluate keeps each user's
// latest intent.
func ReadEvents(events []Event, bots []string) Activity {
	events = slices.Clone(events)
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
	var act Activity
	for _, e := range events {
		if IsBot(e.User, bots) || NormLogin(e.User) == "" {
			continue
		}
		via := ViaComment
		if e.ReviewState != "" {
			via = ViaReview
		}
		approval := func(cancel bool) Approval {
			return Approval{User: e.User, SHA: e.CommitSHA, Time: e.Time, Cancel: cancel, Via: via}
		}
		for _, c := range ParseCommands(e.Body) {
			switch c.Name {
			case CmdApprove:
				act.Approvals = append(act.Approvals, approval(false))
			case CmdApproveCancel:
				act.Approvals = append(act.Approvals, approval(true))
			case CmdHold:
				act.Hold, act.HoldBy = true, e.User
			case CmdHoldCancel:
				act.Hold, act.HoldBy = false, ""
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
	return act
}
