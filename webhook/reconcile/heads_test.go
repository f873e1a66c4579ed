package reconcile

import (
	"fmt"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// TestHeadLog: a head's time comes only from a delivery that moved this
// pull request's head to that very commit, and the latest such time wins.
func TestHeadLog(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 11, 1, 12, m, 0, 0, time.UTC) }
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	delivery := func(repo string, key, number int, action, sha string, m int) webhook.Job {
		return webhook.Job{Key: webhook.Key{Repo: repo, PR: key, Kind: webhook.KindPR}, Event: "pull_request", Action: action,
			Payload: []byte(fmt.Sprintf(`{"action": %q, "number": %d, "pull_request": {"number": %d, "head": {"sha": %q}, "updated_at": %q}}`,
				action, number, number, sha, at(m).Format(time.RFC3339)))}
	}
	var l headLog
	l.record(delivery("acme/catalog", 1, 1, "opened", a, 1))
	l.record(delivery("acme/catalog", 1, 1, "synchronize", b, 9))
	l.record(delivery("acme/catalog", 1, 1, "synchronize", b, 5)) // late, for an older push
	l.record(delivery("acme/catalog", 2, 2, "synchronize", a, 20))
	l.record(delivery("acme/other", 3, 3, "synchronize", a, 2))
	l.record(delivery("acme/catalog", 4, 4, "edited", a, 3))   // a title edit moves no head
	l.record(delivery("acme/catalog", 5, 6, "reopened", a, 4)) // the numbers disagree
	l.record(delivery("acme/catalog", 7, 7, "reopened", b, 4))
	comment := delivery("acme/catalog", 8, 8, "synchronize", a, 4)
	comment.Event = "issue_comment"
	l.record(comment)

	heads := l.forRepo("ACME/Catalog")
	tests := []struct {
		name   string
		number int
		sha    string
		want   int
		ok     bool
	}{
		{name: "opened", number: 1, sha: a, want: 1, ok: true},
		{name: "the latest of two pushes, whatever their order", number: 1, sha: b, want: 9, ok: true},
		{name: "reopened", number: 7, sha: b, want: 4, ok: true},
		{name: "another pull request's push of the same head", number: 7, sha: a},
		{name: "another repository's", number: 3, sha: a},
		{name: "not a push delivery", number: 4, sha: a},
		{name: "a payload naming two pull requests", number: 5, sha: a},
		{name: "a payload naming two pull requests, by its number", number: 6, sha: a},
		{name: "another event", number: 8, sha: a},
		{name: "never told", number: 9, sha: a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := heads.HeadSince(tt.number, tt.sha)
			if ok != tt.ok || (ok && !got.Equal(at(tt.want))) {
				t.Errorf("HeadSince(%d, %.7s) = %v, %v; want %v, %v", tt.number, tt.sha, got, ok, at(tt.want), tt.ok)
			}
		})
	}

	// The log is bounded; the oldest heads go first.
	var big headLog
	for i := range maxHeads + 1 {
		big.record(delivery("acme/catalog", i+1, i+1, "synchronize", a, 1))
	}
	if _, ok := big.forRepo("acme/catalog").HeadSince(1, a); ok {
		t.Error("the oldest head was kept beyond the bound")
	}
	if _, ok := big.forRepo("acme/catalog").HeadSince(maxHeads+1, a); !ok {
		t.Error("the newest head was not kept")
	}
}
