package reconcile

import (
	"fmt"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// TestEditLog: the editor is known only for the very edit that left a
// comment as it reads now, whatever order the deliveries came in.
func TestEditLog(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 1, 12, m, 0, 0, time.UTC) }
	delivery := func(repo string, id int64, by string, m int) webhook.Job {
		return webhook.Job{Key: webhook.Key{Repo: repo, PR: 1, Kind: webhook.KindPR}, Event: "issue_comment", Action: "edited",
			Payload: []byte(fmt.Sprintf(`{"action": "edited", "comment": {"id": %d, "updated_at": %q}, "sender": {"login": %q}}`,
				id, at(m).Format(time.RFC3339), by))}
	}
	var l editLog
	l.record(delivery("acme/catalog", 1, "mallory", 5))
	l.record(delivery("acme/catalog", 1, "alice", 9))
	l.record(delivery("acme/catalog", 2, "alice", 9))
	l.record(delivery("acme/catalog", 2, "mallory", 5)) // late, for an older edit
	l.record(delivery("acme/other", 3, "alice", 9))
	created := delivery("acme/catalog", 4, "alice", 9)
	created.Action = "created"
	l.record(created)

	edits := l.forRepo("ACME/Catalog")
	tests := []struct {
		name    string
		id      int64
		updated int
		want    string
		ok      bool
	}{
		{name: "the latest edit", id: 1, updated: 9, want: "alice", ok: true},
		{name: "a late delivery of an older edit", id: 2, updated: 9, want: "alice", ok: true},
		{name: "an edit after the last delivery", id: 1, updated: 12},
		{name: "another repository's comment", id: 3, updated: 9},
		{name: "not an edit delivery", id: 4, updated: 9},
		{name: "never told", id: 5, updated: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := edits.CommentEditor(tt.id, at(tt.updated))
			if got != tt.want || ok != tt.ok {
				t.Errorf("CommentEditor(%d) = %q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.ok)
			}
		})
	}

	// Reviews carry no edit time: an edit by anyone but the author
	// taints the review whatever came after.
	review := func(id int64, author, by string) webhook.Job {
		return webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: 1, Kind: webhook.KindPR}, Event: "pull_request_review", Action: "edited",
			Payload: []byte(fmt.Sprintf(`{"action": "edited", "review": {"id": %d, "user": {"login": %q}}, "sender": {"login": %q}}`, id, author, by))}
	}
	l.record(review(10, "bob", "Bob"))
	l.record(review(11, "bob", "mallory"))
	l.record(review(11, "bob", "bob"))
	for _, tt := range []struct {
		id     int64
		want   string
		edited bool
	}{{10, "bob", true}, {11, "mallory", true}, {12, "", false}, {1, "", false}} {
		if got, edited := edits.ReviewEditor(tt.id); got != tt.want || edited != tt.edited {
			t.Errorf("ReviewEditor(%d) = %q, %v; want %q, %v", tt.id, got, edited, tt.want, tt.edited)
		}
	}

	// The log is bounded; the oldest edits go first.
	var big editLog
	for i := range maxEdits + 1 {
		big.record(delivery("acme/catalog", int64(i+1), "alice", 1))
	}
	if _, ok := big.forRepo("acme/catalog").CommentEditor(1, at(1)); ok {
		t.Error("the oldest edit was kept beyond the bound")
	}
	if _, ok := big.forRepo("acme/catalog").CommentEditor(maxEdits+1, at(1)); !ok {
		t.Error("the newest edit was dropped")
	}
}
