package durable

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
)

// TestBlockedWaitsInState: kept in the state, how long each pull request
// has waited outlives a restart (an alert on an hour's wait must fire for
// a service that restarts every half hour), and every replica reports the
// same waits: what one records, another reports, and a pull request one
// saw merge, none reports any more.
func TestBlockedWaitsInState(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		// One process owns a SQLite state: the two replicas share it.
		testBlockedWaits(t, func() *State { return openSQLiteState(t, dir, Options{}) }, false)
	})
	t.Run("postgres", func(t *testing.T) {
		url := durabletest.Postgres(t)
		testBlockedWaits(t, func() *State { return openPostgresState(t, url, Options{}) }, true)
	})
}

// testBlockedWaits runs TestBlockedWaitsInState on the states open
// opens; apart gives each replica a state of its own.
func testBlockedWaits(t *testing.T, open func() *State, apart bool) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := start
	waits := func(s *State) *webhook.BlockedWaits {
		m := webhook.NewMetrics(prometheus.NewRegistry())
		m.Blocked.Now = func() time.Time { return now }
		m.Blocked.Persist(s.Facts(), func(err error) { t.Error(err) })
		return m.Blocked
	}

	s := open()
	a, b := waits(s), waits(s) // two replicas on one state
	if apart {
		other := open()
		defer other.Close()
		b = waits(other)
	}
	a.Set("acme/catalog", 1, []policy.Code{policy.CodeApprovalMissing})
	now = start.Add(10 * time.Minute)
	b.Set("acme/catalog", 1, []policy.Code{policy.CodeApprovalMissing, policy.CodeChecksPending})
	b.Set("acme/catalog", 2, []policy.Code{policy.CodeHold})
	now = start.Add(20 * time.Minute)
	for name, w := range map[string]*webhook.BlockedWaits{"a": a, "b": b} {
		got := w.Longest()
		if got[policy.CodeApprovalMissing] != 1200 || got[policy.CodeChecksPending] != 600 || got[policy.CodeHold] != 600 {
			t.Errorf("replica %s reports %v; want approval-missing 1200 s (kept from the first record), checks-pending and hold 600 s", name, got)
		}
	}
	b.Done("acme/catalog", 2)
	if got := a.Longest()[policy.CodeHold]; got != 0 {
		t.Errorf("a pull request another replica saw merge still waits %v s on hold", got)
	}
	s.Close()

	s = open()
	defer s.Close()
	now = start.Add(time.Hour)
	c := waits(s)
	if got := c.Longest()[policy.CodeApprovalMissing]; got != 3600 {
		t.Errorf("after a restart the longest approval-missing wait is %v s, want 3600 (counted from before the restart)", got)
	}
	c.Set("acme/catalog", 1, []policy.Code{policy.CodeApprovalMissing})
	if got := c.Codes("acme/catalog", 1); len(got) != 1 || got[0] != policy.CodeApprovalMissing {
		t.Errorf("codes after a restart = %v, want approval-missing", got)
	}
	if got := c.Longest(); got[policy.CodeApprovalMissing] != 3600 || got[policy.CodeChecksPending] != 0 {
		t.Errorf("after the next reconcile %v; want approval-missing still 3600 s and checks-pending gone", got)
	}
	c.RetainRepos(func(string) bool { return false })
	if got := c.Longest()[policy.CodeApprovalMissing]; got != 0 {
		t.Errorf("a repository the App has no more still reports a wait of %v s", got)
	}
}
