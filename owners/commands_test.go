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
