package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Breaker remembers, for one pass of a check, the registries that ran out
// of time. A registry that accepts connections and never answers would
// otherwise cost the per-reference deadline once for every image it holds;
// after its first timeout its other images fail at once, naming it.
// The zero value is ready; a nil *Breaker never opens.
type Breaker struct {
	// Hosts, when set, is the process's breaker of every host (see
	// Hosts): Check fails while it is open for host, and Record opens it
	// too, so that the checks that contact registries without taking a
	// slot (the references and templates renders) learn from other jobs
	// and teach them. The truthfulness render also takes a slot of it.
	Hosts *Hosts

	mu   sync.Mutex
	open map[string]bool
}

// Check returns a *BreakerError when host timed out earlier in the pass,
// or a *HostOpenError while the process's breaker for host is open.
func (b *Breaker) Check(host string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	open := b.open[host]
	b.mu.Unlock()
	if open {
		// This pass's own timeout is the truer account of the two.
		return &BreakerError{Host: host}
	}
	return b.Hosts.Check(host)
}

// Record opens the breaker for host when err says it ran out of time, and
// reports whether it did.
func (b *Breaker) Record(host string, err error) bool {
	if b == nil || !isTimeout(err) {
		return false
	}
	b.Hosts.Trip(host, err)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open == nil {
		b.open = map[string]bool{}
	}
	b.open[host] = true
	return true
}

// isTimeout reports whether err is a wait that ran out: a deadline, or a
// network timeout.
func isTimeout(err error) bool {
	if err == nil {
		return false
	}
	var be *BreakerError
	if errors.As(err, &be) {
		return false
	}
	var nerr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout()
}

// BreakerError is a request not sent because its registry timed out
// earlier in the same pass.
type BreakerError struct{ Host string }

func (e *BreakerError) Error() string {
	return fmt.Sprintf("registry %s did not answer in time earlier in this check, so it was not asked again", e.Host)
}
