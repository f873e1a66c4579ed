package owners_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/owners"
)

func TestParseCommands(t *testing.T) {
	tests := []struct {
		body string
		want []owners.Command
	}{
		{"/approve", []owners.Command{{Name: owners.CmdApprove, Line: 1}}},
		{"/approve no-issue", []owners.Command{{Name: owners.CmdApprove, Args: "no-issue", Line: 1}}},
		{"/APPROVE", []owners.Command{{Name: owners.CmdApprove, Line: 1}}},
		{"/approve cancel", []owners.Command{{Name: owners.CmdApproveCancel, Args: "cancel", Line: 1}}},
		{"/approve\tCANCEL ", []owners.Command{{Name: owners.CmdApproveCancel, Args: "CANCEL", Line: 1}}},
		{"/remove-approve", []owners.Command{{Name: owners.CmdApproveCancel, Line: 1}}},
		{"/hold", []owners.Command{{Name: owners.CmdHold, Line: 1}}},
		{"/hold cancel", []owners.Command{{Name: owners.CmdHoldCancel, Args: "cancel", Line: 1}}},
		{"/unhold", []owners.Command{{Name: owners.CmdHoldCancel, Line: 1}}},
		{"/remove-hold", []owners.Command{{Name: owners.CmdHoldCancel, Line: 1}}},
		{"/recheck", []owners.Command{{Name: owners.CmdRecheck, Line: 1}}},
		{"Thanks!\r\n/approve\r\n\r\n/hold\r\n", []owners.Command{{Name: owners.CmdApprove, Line: 2}, {Name: owners.CmdHold, Line: 4}}},
		// A command must start a line.
		{" /approve", nil},
		{"> /approve", nil},
		{"LGTM /approve", nil},
		{"`/approve`", nil},
		// Only whole command names.
		{"/approved", nil},
		{"/approvecancel", nil},
		{"/lgtm", nil},
		{"/", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := owners.ParseCommands(tt.body); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCommands(%q) = %+v, want %+v", tt.body, got, tt.want)
		}
	}
}

func TestReadEvents(t *testing.T) {
	at := func(m int) time.Time { return epoch.Add(time.Duration(m) * time.Minute) }
	events := []owners.Event{
		// Out of order on purpose: events are read in time order.
		{User: "carol", Body: "/hold cancel", Time: at(5)},
		{User: "alice", Body: "/approve", CommitSHA: "h1", Time: at(1)},
		{User: "carol", Body: "/hold", Time: at(2)},
		{User: "bob", ReviewState: "approved", CommitSHA: "h1", Time: at(3)},
		{User: "bob", ReviewState: owners.ReviewChangesRequested, Body: "/approve", CommitSHA: "h2", Time: at(4)},
		{User: "dave", ReviewState: owners.ReviewCommented, Body: "nice", Time: at(4)},
		{User: "dave", ReviewState: owners.ReviewDismissed, Time: at(4)},
		{User: "renovate[bot]", Body: "/approve\n/hold", Time: at(6)},
		{User: "catalogbot", Body: "/hold", Time: at(6)},
		{User: "erin", Body: "/recheck", Time: at(7)},
		{User: "", Body: "/approve", Time: at(8)},
	}
	got := owners.ReadEvents(events, []string{"catalogbot"})
	want := owners.Activity{
		Approvals: []owners.Approval{
			{User: "alice", SHA: "h1", Time: at(1), Via: owners.ViaComment},
			{User: "bob", SHA: "h1", Time: at(3), Via: owners.ViaReview},
			{User: "bob", SHA: "h2", Time: at(4), Via: owners.ViaReview},
			{User: "bob", SHA: "h2", Time: at(4), Cancel: true, Via: owners.ViaReview},
		},
		Holds: []owners.HoldCommand{
			{User: "carol", Time: at(2)},
			{User: "carol", Cancel: true, Time: at(5)},
		},
		Recheck: at(7),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadEvents:\n%+v\nwant:\n%+v", got, want)
	}

	held := owners.ReadEvents([]owners.Event{{User: "carol", Body: "/hold", Time: at(1)}}, nil)
	if !held.Hold || held.HoldBy != "carol" {
		t.Errorf("hold = %+v, want held by carol", held)
	}
}

// TestReadEventsEdited: an edited body counts only when its author made the
// edit (spec/owners.md section 2, rule 11); a review's state stands
// whatever its body says.
func TestReadEventsEdited(t *testing.T) {
	tests := []struct {
		name      string
		event     owners.Event
		approvals int
		voided    string
	}{
		{name: "not edited", event: owners.Event{User: "alice", Body: "/approve"}, approvals: 1},
		{name: "edited by its author", event: owners.Event{User: "alice", Body: "/approve", Edited: true, EditedBy: "ALICE"}, approvals: 1},
		{name: "edited by another user", event: owners.Event{User: "alice", Body: "/approve", Edited: true, EditedBy: "mallory"},
			voided: "edited by mallory, not its author; post the command in a new comment"},
		{name: "edited by someone unknown", event: owners.Event{User: "alice", Body: "/approve", Edited: true},
			voided: "edited; the editor cannot be established: post the command in a new comment"},
		// A login that only looks like the author's is someone else.
		{name: "edited by a look-alike", event: owners.Event{User: "alice", Body: "/approve", Edited: true, EditedBy: "alice-x"},
			voided: "edited by alice-x, not its author; post the command in a new comment"},
		{name: "an edit without commands is not reported", event: owners.Event{User: "alice", Body: "thanks", Edited: true}},
		{name: "an edited approving review keeps its state", event: owners.Event{User: "alice", Body: "/hold",
			ReviewState: owners.ReviewApproved, Edited: true, EditedBy: "mallory"}, approvals: 1,
			voided: "edited by mallory, not its author; post the command in a new comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			act := owners.ReadEvents([]owners.Event{tt.event}, nil)
			if len(act.Approvals) != tt.approvals {
				t.Errorf("approvals = %+v, want %d", act.Approvals, tt.approvals)
			}
			if act.Hold {
				t.Errorf("a /hold in an edited body held")
			}
			var voided string
			if len(act.Voided) > 0 {
				voided = act.Voided[0].Reason
			}
			if voided != tt.voided {
				t.Errorf("voided = %q, want %q", voided, tt.voided)
			}
		})
	}
}

// TestHoldState: a hold is lifted by its placer, or by someone the caller
// says may lift it (an approver of a touched path); anyone else's lift is
// ignored and reported (spec/owners.md section 2, rule 13).
func TestHoldState(t *testing.T) {
	hold := func(u string) owners.HoldCommand { return owners.HoldCommand{User: u} }
	lift := func(u string) owners.HoldCommand { return owners.HoldCommand{User: u, Cancel: true} }
	owner := func(login string) bool { return login == "olive" }
	tests := []struct {
		name    string
		holds   []owners.HoldCommand
		mayLift func(string) bool
		held    bool
		by      string
		ignored []string
	}{
		{"none", nil, owner, false, "", nil},
		{"held", []owners.HoldCommand{hold("carol")}, owner, true, "carol", nil},
		{"the placer lifts it", []owners.HoldCommand{hold("carol"), lift("Carol")}, owner, false, "", nil},
		{"a passer-by cannot", []owners.HoldCommand{hold("olive"), lift("mallory")}, owner, true, "olive", []string{"mallory"}},
		{"a passer-by's own hold and lift leave the owner's", []owners.HoldCommand{hold("olive"), hold("mallory"), lift("mallory")}, owner, true, "olive", nil},
		{"an approver lifts every hold", []owners.HoldCommand{hold("carol"), hold("dave"), lift("olive")}, owner, false, "", nil},
		{"without approvers only the placer", []owners.HoldCommand{hold("carol"), lift("olive")}, nil, true, "carol", []string{"olive"}},
		{"held again after a lift", []owners.HoldCommand{hold("carol"), lift("carol"), hold("dave")}, owner, true, "dave", nil},
		{"a lift with no hold is nothing to report", []owners.HoldCommand{lift("mallory")}, owner, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held, by, ignored := owners.Activity{Holds: tt.holds}.HoldState(tt.mayLift)
			if held != tt.held || by != tt.by || !reflect.DeepEqual(ignored, tt.ignored) {
				t.Errorf("HoldState = %v, %q, %q; want %v, %q, %q", held, by, ignored, tt.held, tt.by, tt.ignored)
			}
		})
	}
}
