package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// Hosts defaults.
const (
	DefaultHostContacts = 4
	DefaultHostWait     = 5 * time.Second
	DefaultCoolDown     = 30 * time.Second
	DefaultMaxCoolDown  = 10 * time.Minute
)

// maxHosts bounds the hosts Hosts remembers while they answer: pull
// requests name the hosts, so their number is anyone's to choose. Past it,
// a host that answered and has no contact under way is forgotten, and its
// next contact goes alone first again.
const maxHosts = 1024

// HostsOptions configure NewHosts. Zero fields take the defaults.
type HostsOptions struct {
	// Contacts bounds the contacts with one registry host under way at
	// once, across every check that shares the Hosts (default
	// DefaultHostContacts).
	Contacts int
	// Holders bounds the holders (checks) in contact with one host at
	// once; 0 is no bound beyond Contacts. The service sets it below its
	// workers, so that one host that turns slow cannot hold them all.
	Holders int
	// Wait bounds how long a holder with no contact of its own with the
	// host waits for a free slot, or for the outcome of the contact that
	// goes first, without the host answering any contact (default
	// DefaultHostWait): a host that keeps answering others is busy, and
	// its waiters keep their place. A waiter then gets a
	// *HostBusyError, which leaves its check pending: the job ends and
	// is tried again later, rather than hold a worker for another job's
	// registry.
	Wait time.Duration
	// CoolDown is how long a host's breaker stays open after it failed
	// (default DefaultCoolDown); every failed probe doubles it, up to
	// MaxCoolDown (default DefaultMaxCoolDown).
	CoolDown, MaxCoolDown time.Duration
	// Now is the clock of the breakers, for tests (default time.Now).
	// Waits for a slot use real time.
	Now func() time.Time
}

// Hosts is what one process knows about the registry hosts its checks
// contact, shared by all of them: the per-pass Breaker and HostGate forget
// everything when their check ends, so that without Hosts every job that
// names a registry which never answers waits out its deadline again, on a
// worker of its own.
//
// It bounds the contacts with each host (HostsOptions.Contacts and
// Holders) and keeps a circuit breaker per host:
//
//   - closed: contacts go, up to the bounds; a contact that timed out or
//     got no answer at all opens the breaker.
//   - open: every contact fails at once with a *HostOpenError naming the
//     host and when it is asked again, until the cool-down is over.
//   - half-open: after the cool-down, one contact (the probe) goes; an
//     answer closes the breaker, a failure opens it again for twice as
//     long.
//
// A host not yet heard from is treated as half-open: its first contact
// goes alone, and the others wait for its outcome. A nil *Hosts admits
// every contact at once and never opens.
type Hosts struct {
	o     HostsOptions
	mu    sync.Mutex
	hosts map[string]*hostState
	trips int64
}

// BreakerState is the state of a host's breaker.
type BreakerState int

const (
	Closed BreakerState = iota
	HalfOpen
	Open
)

func (s BreakerState) String() string {
	switch s {
	case Closed:
		return "closed"
	case HalfOpen:
		return "half-open"
	case Open:
		return "open"
	}
	return fmt.Sprintf("BreakerState(%d)", int(s))
}

// hostState is one host's breaker and the contacts under way with it.
type hostState struct {
	state BreakerState
	// known says a contact has had an answer since the host was added or
	// last open; until then a contact goes alone first (see Hosts).
	known bool
	// until is when an open breaker lets its probe go; coolDown the open
	// time that ends then.
	until    time.Time
	coolDown time.Duration
	// probing says the contact that goes alone is under way.
	probing  bool
	contacts int
	holders  map[any]int
	// changed is closed, and replaced, whenever a contact ends: the
	// waiters look again. answers counts the contacts that ended with an
	// answer: a waiter gives up only on a host that gave none for the
	// whole wait.
	changed chan struct{}
	answers int64
}

// NewHosts returns the shared state of registry hosts for one process.
func NewHosts(o HostsOptions) *Hosts {
	if o.Contacts <= 0 {
		o.Contacts = DefaultHostContacts
	}
	if o.Wait <= 0 {
		o.Wait = DefaultHostWait
	}
	if o.CoolDown <= 0 {
		o.CoolDown = DefaultCoolDown
	}
	if o.MaxCoolDown < o.CoolDown {
		o.MaxCoolDown = max(DefaultMaxCoolDown, o.CoolDown)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Hosts{o: o, hosts: map[string]*hostState{}}
}

// Acquire admits one contact of holder with host, or says why not: a
// *HostOpenError at once while the host's breaker is open, a *HostBusyError
// when holder has no contact with the host and none could start within
// HostsOptions.Wait, or ctx's error. A holder is whatever identifies one
// check (any comparable value); a holder that already has a contact with
// the host waits within ctx alone, since its check is held by that
// contact anyway. On success the caller contacts the host and must call
// release with the outcome (nil for any answer the registry gave).
func (h *Hosts) Acquire(ctx context.Context, host string, holder any) (release func(error), err error) {
	if h == nil {
		return func(error) {}, nil
	}
	var (
		timer   *time.Timer
		timeout <-chan time.Time
		answers int64
	)
	for {
		h.mu.Lock()
		s := h.state(host)
		now := h.o.Now()
		if s.state == Open && now.Before(s.until) {
			h.mu.Unlock()
			return nil, &HostOpenError{Host: host, Until: s.until}
		}
		if s.state == Open {
			s.state = HalfOpen
		}
		probe, admit := false, false
		switch {
		case s.state == HalfOpen || !s.known:
			// One contact goes alone; the rest wait for its outcome.
			probe, admit = !s.probing, !s.probing
		case s.contacts < h.o.Contacts && (s.holders[holder] > 0 || h.o.Holders <= 0 || len(s.holders) < h.o.Holders):
			admit = true
		}
		if admit {
			s.contacts++
			s.holders[holder]++
			s.probing = s.probing || probe
			h.mu.Unlock()
			var once sync.Once
			return func(err error) { once.Do(func() { h.release(host, holder, probe, err) }) }, nil
		}
		changed, mine := s.changed, s.holders[holder] > 0
		progress := s.answers != answers
		answers = s.answers
		h.mu.Unlock()
		switch {
		case !mine && timer == nil:
			timer = time.NewTimer(h.o.Wait)
			defer timer.Stop()
			timeout = timer.C
		case !mine && progress:
			// The host answers, only others hold its slots: a busy
			// host, not a silent one. The wait starts again.
			timer.Reset(h.o.Wait)
		}
		select {
		case <-changed:
		case <-timeout:
			return nil, &HostBusyError{Host: host, Waited: h.o.Wait}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// state is host's state, added closed and not yet known; h.mu is held.
func (h *Hosts) state(host string) *hostState {
	s, ok := h.hosts[host]
	if !ok {
		s = &hostState{holders: map[any]int{}, changed: make(chan struct{})}
		h.hosts[host] = s
	}
	return s
}

// release ends one contact and moves the breaker by its outcome.
func (h *Hosts) release(host string, holder any, probe bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.hosts[host]
	s.contacts--
	if s.holders[holder]--; s.holders[holder] <= 0 {
		delete(s.holders, holder)
	}
	if probe {
		s.probing = false
	}
	switch Outcome(err) {
	case HostFailed:
		h.open(s, probe)
	case HostAnswered:
		s.answers++
		if s.state != Open {
			s.state, s.known, s.coolDown = Closed, true, 0
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	if len(h.hosts) > maxHosts && s.state == Closed && s.contacts == 0 {
		delete(h.hosts, host)
	}
}

// open opens s's breaker: for the cool-down after a failure while closed,
// for twice the last one after a failed probe. h.mu is held.
func (h *Hosts) open(s *hostState, probe bool) {
	if s.state == Open && h.o.Now().Before(s.until) {
		return // opened already by another contact of the same outage
	}
	switch {
	case probe && s.coolDown > 0:
		s.coolDown = min(2*s.coolDown, h.o.MaxCoolDown)
	default:
		s.coolDown = h.o.CoolDown
	}
	s.state, s.known, s.until = Open, false, h.o.Now().Add(s.coolDown)
	h.trips++
}

// Check returns a *HostOpenError while host's breaker is open, without
// taking a slot: for the contacts of the checks that do not Acquire.
func (h *Hosts) Check(host string) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := h.hosts[host]; ok && s.state == Open && h.o.Now().Before(s.until) {
		return &HostOpenError{Host: host, Until: s.until}
	}
	return nil
}

// Trip opens host's breaker when err says the host failed (Outcome), for
// a contact made without Acquire, and reports whether it did.
func (h *Hosts) Trip(host string, err error) bool {
	if h == nil || Outcome(err) != HostFailed {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state(host)
	if s.probing {
		// The probe's own outcome decides, and doubles the cool-down
		// if it fails.
		return false
	}
	h.open(s, false)
	return true
}

// HostStatus is one host's breaker as Hosts.Status reports it.
type HostStatus struct {
	Host     string
	State    BreakerState
	Contacts int
	// Until is when an open breaker lets its probe go.
	Until time.Time
}

// Status lists the hosts whose breaker is not closed or that have contacts
// under way, by host, and counts the times a breaker opened.
func (h *Hosts) Status() (hosts []HostStatus, trips int64) {
	if h == nil {
		return nil, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.o.Now()
	for host, s := range h.hosts {
		st := s.state
		if st == Open && !now.Before(s.until) {
			st = HalfOpen // the next contact probes
		}
		if st == Closed && s.contacts == 0 {
			continue
		}
		hosts = append(hosts, HostStatus{Host: host, State: st, Contacts: s.contacts, Until: s.until})
	}
	slices.SortFunc(hosts, func(a, b HostStatus) int { return strings.Compare(a.Host, b.Host) })
	return hosts, h.trips
}

// HostOutcome is what a contact's error says about its host.
type HostOutcome int

const (
	// HostAnswered: the registry answered, whatever it said (an image,
	// 404, 401, 429 or 5xx): it is there.
	HostAnswered HostOutcome = iota
	// HostFailed: no answer came, in time or at all: a timeout, a
	// connection refused, reset or cut short.
	HostFailed
	// HostSilent: the error says nothing about the host: the caller's
	// own cancellation, a contact that was never made (a breaker, a
	// busy host, the egress rule, the credentials).
	HostSilent
)

// Outcome is what err, the outcome of a contact, says about its host.
func Outcome(err error) HostOutcome {
	var (
		terr    *transport.Error
		berr    *BreakerError
		oerr    *HostOpenError
		busy    *HostBusyError
		cerr    *CredentialError
		refused *egress.RefusedError
		perr    *egress.ProxyError
	)
	switch {
	case err == nil, errors.As(err, &terr):
		return HostAnswered
	case errors.Is(err, context.Canceled), errors.As(err, &berr), errors.As(err, &oerr), errors.As(err, &busy),
		errors.As(err, &cerr), errors.As(err, &refused), errors.As(err, &perr):
		return HostSilent
	}
	if _, unanswered := Unanswered(err); unanswered || isTimeout(err) {
		return HostFailed
	}
	// Anything else is an answer that was of no use (not an image, a
	// malformed manifest): the host is there.
	return HostAnswered
}

// HostOpenError is a contact not made because its host's breaker is open:
// the host failed in a check of this process a moment ago.
type HostOpenError struct {
	Host  string
	Until time.Time
}

func (e *HostOpenError) Error() string {
	return fmt.Sprintf("registry %s did not answer in an earlier check, so it was not asked; it is asked again after %s",
		e.Host, e.Until.UTC().Format(time.TimeOnly+" UTC"))
}

// HostBusyError is a contact not made because its host's slots were held
// by other checks, or its first contact was under way, and it answered
// none of them within the wait.
type HostBusyError struct {
	Host   string
	Waited time.Duration
}

func (e *HostBusyError) Error() string {
	return fmt.Sprintf("registry %s was busy with other checks and answered none of them for %s, so it was not asked in this try",
		e.Host, e.Waited)
}
