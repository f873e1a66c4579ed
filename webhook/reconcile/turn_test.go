package reconcile

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// turnClock is the tests' time zero; turnAt(s) is s seconds later.
var turnClock = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

func turnAt(s time.Duration) time.Time { return turnClock.Add(s * time.Second) }

// TestTurnLeave: a holder that gives up the turn frees it for the next
// holder of the same pull request (the job after a restart, or after its
// passes ran out), whether or not the pull request keeps its place; the
// pull requests that asked meanwhile come first.
func TestTurnLeave(t *testing.T) {
	ctx := context.Background()
	for _, keepPlace := range []bool{false, true} {
		var tt turns
		if got, _, err := tt.take(ctx, "acme/catalog", "replica-a/job-1", 2, turnAt(0)); err != nil || !got {
			t.Fatalf("take: %v %v", got, err)
		}
		if got, by, _ := tt.take(ctx, "acme/catalog", "replica-a/job-2", 3, turnAt(1)); got || by != 2 {
			t.Fatalf("#3 took the held turn, or was told #%d holds it", by)
		}
		if next, err := tt.leave(ctx, "acme/catalog", "replica-a/job-1", 2, turnAt(2), keepPlace); err != nil || next != 3 {
			t.Fatalf("keepPlace %v: leave handed the turn to #%d (%v), want #3", keepPlace, next, err)
		}
		if got, by, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, turnAt(3)); got || by != 3 {
			t.Fatalf("keepPlace %v: #2's next job got %v, first #%d; want #3 first", keepPlace, got, by)
		}
		if got, _, _ := tt.take(ctx, "acme/catalog", "replica-a/job-2", 3, turnAt(4)); !got {
			t.Fatalf("keepPlace %v: #3 did not get the free turn", keepPlace)
		}
		// Once #3 leaves, #2's next job takes the turn at once, without
		// waiting out a lease.
		if next, _ := tt.leave(ctx, "acme/catalog", "replica-a/job-2", 3, turnAt(5), false); next != 2 {
			t.Fatalf("keepPlace %v: after #3, next #%d, want #2", keepPlace, next)
		}
		if got, _, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, turnAt(6)); !got {
			t.Fatalf("keepPlace %v: #2's next job waits for a turn nobody holds", keepPlace)
		}
	}
}

// TestTurnKeptUntilLeft: without leave, the next holder of the same pull
// request waits out the lease: why a job that took the turn must give it
// up however it ends.
func TestTurnKeptUntilLeft(t *testing.T) {
	ctx := context.Background()
	var tt turns
	if got, _, _ := tt.take(ctx, "acme/catalog", "replica-a/job-1", 2, turnAt(0)); !got {
		t.Fatal("take")
	}
	if got, by, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, turnAt(1)); got || by != 2 {
		t.Fatalf("a second holder of #2 took a held turn (%v, #%d)", got, by)
	}
	if got, _, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, turnAt(1).Add(turnTTL)); !got {
		t.Fatal("the lease did not expire")
	}
}

// TestTurnKeepPlace: a waiter whose job ends keeps its first-come place
// when it comes back for the turn, and loses it when it does not.
func TestTurnKeepPlace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		keepPlace bool
		wantNext  int
	}{{true, 2}, {false, 3}} {
		var tt turns
		tt.take(ctx, "acme/catalog", "job-1", 1, turnAt(0))
		tt.take(ctx, "acme/catalog", "job-2", 2, turnAt(1))
		tt.take(ctx, "acme/catalog", "job-3", 3, turnAt(2))
		if next, _ := tt.leave(ctx, "acme/catalog", "job-2", 2, turnAt(3), tc.keepPlace); next != 0 {
			t.Fatalf("a waiter's leave handed on a turn it did not hold, to #%d", next)
		}
		if next, _ := tt.leave(ctx, "acme/catalog", "job-1", 1, turnAt(4), false); next != tc.wantNext {
			t.Errorf("keepPlace %v: next #%d, want #%d", tc.keepPlace, next, tc.wantNext)
		}
	}
}

// TestJobGivesUpItsTurn: a job that took the turn and ends waiting in
// line (its renewal before merging failed, say to a restart) gives the
// turn up, so that the pull request's next job, another holder, takes it
// at once instead of waiting out the lease.
func TestJobGivesUpItsTurn(t *testing.T) {
	ctx := context.Background()
	a := &App{clock: func() time.Time { return turnAt(0) }}
	r := &prRun{a: a, job: webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: 2, Kind: webhook.KindPR}},
		number: 2, holder: "replica-a/job-1", log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if got, _, err := a.turns.take(ctx, "acme/catalog", r.holder, 2, a.now()); err != nil || !got {
		t.Fatalf("take: %v %v", got, err)
	}
	r.keepTurn()
	r.waitTurn = true
	if next := r.leaveTurn(); len(next) != 0 {
		t.Errorf("the job handed the turn on to %v, with nobody else in line", next)
	}
	if got, by, _ := a.turns.take(ctx, "acme/catalog", "replica-b/job-2", 2, a.now()); !got {
		t.Fatalf("#2's next job waits for the turn its predecessor kept (first #%d)", by)
	}
}
