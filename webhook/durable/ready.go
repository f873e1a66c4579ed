package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// Readiness probes: a state that cannot be written (PostgreSQL stopped or
// unreachable, the disk under a SQLite file full) takes no delivery, since
// every delivery would be refused (503) or lost.
const (
	// readyTTL is how long a probe's answer is kept: /readyz is asked
	// every few seconds by every load balancer, and one write per
	// TTL is all the state need bear.
	readyTTL = 3 * time.Second
	// readyTimeout bounds one probe: a state that takes longer to take
	// one small write cannot keep up with deliveries either.
	readyTimeout = 2 * time.Second
)

// nsProbe holds the probes' row: one, written by every replica.
const nsProbe = "q.probe"

// Ready reports whether the state can be written now: a small write, in a
// transaction as the intake makes them, whose answer is kept for a few
// seconds. It is safe to call from any goroutine.
func (s *State) Ready() error {
	now := s.o.Now()
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if !s.readyAt.IsZero() && now.Sub(s.readyAt) < readyTTL && now.Sub(s.readyAt) >= 0 {
		return s.readyErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	err := inTx(ctx, s.db, func(t tx) error {
		return putFact(ctx, t, nsProbe, "probe", "", now)
	})
	if err != nil {
		err = webhook.NotReady("the state store cannot be written", fmt.Errorf("state: a write failed: %w", err))
	}
	s.readyAt, s.readyErr = now, err
	return err
}
