package registry

import (
	"context"
	"sync"
)

// HostGate lets, within one pass, one contact with each registry host go
// first: until the host's first handshake (the ping that learns its auth
// scheme and, for token auth, the token exchange) has an outcome, the
// handshakes for its other repositories wait rather than dial. A registry
// that never answers then takes one connection per pass, not one per
// concurrent reference. A host whose handshake failed at the transport or
// was rate limited is down for the rest of the pass: its later contacts
// fail at once with that failure rather than each wait through its own
// retries. The zero value is ready.
type HostGate struct {
	// Breaker, when set, is opened by a first contact that runs out of
	// time, and stops the contacts that waited for it.
	Breaker *Breaker

	mu sync.Mutex
	// contacts holds, per host, a channel closed once the first
	// contact has an outcome.
	contacts map[string]chan struct{}
	// down holds, per host, the failure that put it down.
	down map[string]error
}

// Down returns the failure that put host down in this pass, or nil.
func (g *HostGate) Down(host string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.down[host]
}

// Enter admits one handshake with host. The host's first goes at once; the
// others wait, within ctx, until the first has an outcome, and then fail
// with the host's failure if it is down or its breaker is open. When Enter
// returns no error, the caller makes the handshake and must call leave
// with its outcome, which lets the waiters go.
func (g *HostGate) Enter(ctx context.Context, host string) (leave func(error), err error) {
	g.mu.Lock()
	if err := g.down[host]; err != nil {
		g.mu.Unlock()
		return nil, err
	}
	contact, contacted := g.contacts[host]
	if !contacted {
		if g.contacts == nil {
			g.contacts = map[string]chan struct{}{}
		}
		contact = make(chan struct{})
		g.contacts[host] = contact
	}
	g.mu.Unlock()
	if !contacted {
		return func(err error) {
			// The outcome is recorded (down, breaker) before the
			// gate opens, so that no waiter dials a host already
			// found silent.
			g.record(ctx, host, err)
			if err != nil {
				g.Breaker.Record(host, err)
			}
			close(contact)
		}, nil
	}
	select {
	case <-contact:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := g.Down(host); err != nil {
		return nil, err
	}
	if err := g.Breaker.Check(host); err != nil {
		return nil, err
	}
	return func(err error) { g.record(ctx, host, err) }, nil
}

// record puts host down when a handshake failed in a way its other
// repositories would too: the registry could not be reached, or rate
// limits the client. A failure of the caller's own context says nothing
// about the host.
func (g *HostGate) record(ctx context.Context, host string, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	if class, _ := Classify(err); class != ClassTransport && class != ClassRateLimited {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.down == nil {
		g.down = map[string]error{}
	}
	g.down[host] = err
}
