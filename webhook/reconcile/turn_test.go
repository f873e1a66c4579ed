package reconcile

import (
	"context"
	"testing"
	"time"
)

// TestTurnLeave: a holder that gives up the turn frees it for the next
// holder of the same pull request (the job after a restart, or after its
// passes ran out), whether or not the pull request keeps its place in
// line; a waiter that keeps its place keeps its first-come order.
func TestTurnLeave(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		keepPlace bool
		// want is who gets the turn next among the later holder of #2
		// and #3, which asked after #2 took the turn.
		wantNext int
		want2    bool
	}{
		{"the job ends for good", false, 3, false},
		{"the pull request comes back", true, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tt turns
			if got, _, err := tt.take(ctx, "acme/catalog", "replica-a/job-1", 2, now); err != nil || !got {
				t.Fatalf("take: %v %v", got, err)
			}
			if got, by, _ := tt.take(ctx, "acme/catalog", "replica-a/job-2", 3, now.Add(time.Second)); got || by != 2 {
				t.Fatalf("#3 took the held turn, or was told %d holds it", by)
			}
			next, err := tt.leave(ctx, "acme/catalog", "replica-a/job-1", 2, now.Add(2*time.Second), tc.keepPlace)
			if err != nil || next != tc.wantNext {
				t.Fatalf("leave: next %d, %v; want %d", next, err, tc.wantNext)
			}
			// #2's next job asks before #3's retry: #3 asked first.
			got, by, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, now.Add(3*time.Second))
			if got != tc.want2 || by != 3 {
				t.Fatalf("#2's next job: got %v, first %d; want %v, first 3", got, by, tc.want2)
			}
			if got, _, _ := tt.take(ctx, "acme/catalog", "replica-a/job-2", 3, now.Add(4*time.Second)); !got {
				t.Fatal("#3 did not get the free turn")
			}
			// Once #3 leaves, #2 is first in line and its next job
			// takes the turn at once, without waiting out a lease.
			if next, _ := tt.leave(ctx, "acme/catalog", "replica-a/job-2", 3, now.Add(5*time.Second), false); next != 2 {
				t.Fatalf("after #3, next %d, want 2", next)
			}
			if got, _, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, now.Add(6*time.Second)); !got {
				t.Fatal("#2's next job waits for a turn nobody holds")
			}
		})
	}
}

// TestTurnKeptUntilLeft: without leave, the next holder of the same pull
// request waits out the lease: why a job that took the turn must give it
// up however it ends.
func TestTurnKeptUntilLeft(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var tt turns
	if got, _, _ := tt.take(ctx, "acme/catalog", "replica-a/job-1", 2, now); !got {
		t.Fatal("take")
	}
	if got, by, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, now.Add(time.Second)); got || by != 2 {
		t.Fatalf("a second holder of #2 took a held turn (%v, %d)", got, by)
	}
	if got, _, _ := tt.take(ctx, "acme/catalog", "replica-b/job-3", 2, now.Add(turnTTL+time.Second)); !got {
		t.Fatal("the lease did not expire")
	}
}

// TestTurnKeepPlace: a waiter whose job ends keeps its first-come place
// when it comes back for the turn, and loses it when it does not.
func TestTurnKeepPlace(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		keepPlace bool
		wantNext  int
	}{{true, 2}, {false, 3}} {
		var tt turns
		tt.take(ctx, "acme/catalog", "job-1", 1, now)
		tt.take(ctx, "acme/catalog", "job-2", 2, now.Add(time.Second))
		tt.take(ctx, "acme/catalog", "job-3", 3, now.Add(2*time.Second))
		if next, _ := tt.leave(ctx, "acme/catalog", "job-2", 2, now.Add(3*time.Second), tc.keepPlace); next != 0 {
			t.Fatalf("a waiter's leave handed on a turn it did not hold, to #%d", next)
		}
		if next, _ := tt.leave(ctx, "acme/catalog", "job-1", 1, now.Add(4*time.Second), false); next != tc.wantNext {
			t.Errorf("keepPlace %v: next #%d, want #%d", tc.keepPlace, next, tc.wantNext)
		}
	}
}
