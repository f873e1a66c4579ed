package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// A repository's merge decisions are made one at a time, whichever replica
// makes them: read the base's tip, judge the merge result on it, merge
// pinned to the head, confirm the branch holds the judged tree. Two
// decisions made at once could each judge a tip the other is about to
// move, and main would hold a tree nobody judged.
//
// The turn is a lease kept in the service's state (webhook.Facts, whose
// updates of one key are serialized across replicas), or in memory without
// one. The job that holds it renews it every third of its lease while it
// works, so that a holder that dies loses it after one lease (the
// service's leaseTTL, as for jobs) however long a check takes, and a
// decision that outlived its lease finds out before it merges.
//
// Pull requests that find the turn taken wait in line, first come first
// served: none is left to a resync because another merged first. Waiting
// costs nothing but a read of the state: a waiter's retry that finds the
// turn still taken asks again later without reading GitHub or judging
// anything, and the holder, when it leaves, hands the turn on by queueing
// the job of the first in line at once. The waiters' own retries
// (turnRetry) are the fallback when that job is lost.
const (
	// turnTTL bounds how long a dead holder keeps the turn, when the
	// service's configuration names no lease.
	turnTTL = 30 * time.Second
	// turnRetry is how soon a pull request that found the turn taken
	// asks again (plus up to as much jitter), unless handed the turn
	// sooner.
	turnRetry = 5 * time.Second
	// turnStale drops a waiter that stopped asking (closed, its approval
	// withdrawn): several of its retries.
	turnStale = 30 * time.Second
)

// turn is the stored lease of one repository.
type turn struct {
	Holder string    `json:"holder,omitempty"`
	PR     int       `json:"pr,omitempty"`
	Until  time.Time `json:"until,omitzero"`
	// Line are the pull requests waiting for the turn, by number: when
	// each first asked, and when it last did.
	Line map[int]waiter `json:"line,omitempty"`
}

type waiter struct {
	Since time.Time `json:"since"`
	Seen  time.Time `json:"seen"`
}

// turns are the merge turns of every repository.
type turns struct {
	facts webhook.Facts // nil: in memory
	ttl   time.Duration // 0: turnTTL
	retry time.Duration // 0: turnRetry
	mu    sync.Mutex
	mem   map[string]turn
}

// update applies fn to repo's turn, atomically across replicas.
func (t *turns) update(ctx context.Context, repo string, fn func(*turn)) error {
	if t.facts == nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.mem == nil {
			t.mem = map[string]turn{}
		}
		cur := t.mem[repo]
		fn(&cur)
		t.mem[repo] = cur
		return nil
	}
	return t.facts.Update(ctx, "turns", repo, func(old []byte, seen bool) ([]byte, bool) {
		var cur turn
		if seen && json.Unmarshal(old, &cur) != nil {
			// An unreadable lease is no lease: the worst is one
			// decision made beside a dead holder's, which the check
			// of the branch after the merge catches.
			cur = turn{}
		}
		fn(&cur)
		b, err := json.Marshal(cur)
		return b, err == nil
	})
}

// take gives the turn of repo to holder (pull request pr) when it is free,
// or already holder's, and no pull request that asked earlier is still
// waiting; otherwise holder joins the line and by is the pull request
// that holds the turn or comes first. An error means the state could not
// say: no turn.
func (t *turns) take(ctx context.Context, repo, holder string, pr int, now time.Time) (got bool, by int, err error) {
	err = t.update(ctx, repo, func(cur *turn) {
		got, by = false, 0
		if cur.Line == nil {
			cur.Line = map[int]waiter{}
		}
		for n, w := range cur.Line {
			if now.Sub(w.Seen) > turnStale {
				delete(cur.Line, n)
			}
		}
		if cur.Holder == holder {
			// A decision that must judge again keeps its turn.
			cur.Until, got = now.Add(t.lease()), true
			return
		}
		me, ok := cur.Line[pr]
		if !ok {
			me = waiter{Since: now}
		}
		me.Seen = now
		if cur.Holder != "" && now.Before(cur.Until) {
			cur.Line[pr], by = me, cur.PR
			return
		}
		for n, w := range cur.Line {
			if n != pr && (w.Since.Before(me.Since) || w.Since.Equal(me.Since) && n < pr) {
				if by == 0 || w.Since.Before(cur.Line[by].Since) {
					by = n
				}
			}
		}
		if by != 0 {
			cur.Line[pr] = me
			return
		}
		delete(cur.Line, pr)
		cur.Holder, cur.PR, cur.Until, got = holder, pr, now.Add(t.lease()), true
	})
	if err != nil {
		return false, 0, fmt.Errorf("the merge turn of %s: %w", repo, err)
	}
	return got, by, nil
}

func (t *turns) lease() time.Duration {
	if t.ttl > 0 {
		return t.ttl
	}
	return turnTTL
}

// waits says whether pull request pr is in line for repo's turn while
// another holds it, and keeps its place if so: its retry has nothing to do
// yet.
func (t *turns) waits(ctx context.Context, repo string, pr int, now time.Time) (wait bool, err error) {
	err = t.update(ctx, repo, func(cur *turn) {
		me, ok := cur.Line[pr]
		wait = ok && cur.Holder != "" && cur.PR != pr && now.Before(cur.Until) && now.Sub(me.Seen) <= turnStale
		if wait {
			me.Seen = now
			cur.Line[pr] = me
		}
	})
	return wait, err
}

// leave gives up holder's turn of repo, if it has it, and pull request
// pr's place in the line unless keepPlace: a pull request that comes back
// for the turn keeps its place, or joins the line if it held the turn. next
// is the first in line when the turn was given up, 0 when none waits or
// holder did not have it.
func (t *turns) leave(ctx context.Context, repo, holder string, pr int, now time.Time, keepPlace bool) (next int, err error) {
	err = t.update(ctx, repo, func(cur *turn) {
		next = 0
		if !keepPlace {
			delete(cur.Line, pr)
		}
		if cur.Holder != holder {
			return
		}
		cur.Holder, cur.PR, cur.Until = "", 0, time.Time{}
		if _, ok := cur.Line[pr]; keepPlace && !ok && pr != 0 {
			if cur.Line == nil {
				cur.Line = map[int]waiter{}
			}
			cur.Line[pr] = waiter{Since: now, Seen: now}
		}
		var first waiter
		for n, w := range cur.Line {
			if now.Sub(w.Seen) > turnStale {
				continue
			}
			if next == 0 || w.Since.Before(first.Since) || w.Since.Equal(first.Since) && n < next {
				next, first = n, w
			}
		}
	})
	return next, err
}

// retryAt is when a pull request that found the turn taken asks again.
func (t *turns) retryAt(now time.Time) time.Time {
	d := turnRetry
	if t.retry > 0 {
		d = t.retry
	}
	return now.Add(d + rand.N(d))
}
