package registry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// hostStep is one step of a Hosts scenario: a contact asked for (acquire)
// or ended (release), the clock moved on (advance), or a failure met
// without a slot (trip); then the breaker's state.
type hostStep struct {
	do string
	// id names a contact: acquire admits it under that name, release
	// ends it. holder is whose it is ("" is id).
	id, holder string
	err        error // release, trip: the contact's outcome
	d          time.Duration
	// want is acquire's outcome: "ok", "open" or "busy".
	want  string
	state BreakerState
}

// TestHostsStateMachine walks the breaker of one host through its states:
// closed → open on a failure of the timeout or transport class, open fails
// at once naming the host and the time it is asked again, half-open lets
// one probe through after the cool-down, closed on an answer.
func TestHostsStateMachine(t *testing.T) {
	timeout := fmt.Errorf("HEAD: %w", context.DeadlineExceeded)
	refused := &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name     string
		contacts int
		holders  int
		steps    []hostStep
	}{
		{name: "a new host's first contact goes alone", steps: []hostStep{
			{do: "acquire", id: "a", want: "ok", state: Closed},
			{do: "acquire", id: "b", want: "busy", state: Closed},
			{do: "release", id: "a", state: Closed},
			{do: "acquire", id: "b", want: "ok", state: Closed},
			{do: "acquire", id: "c", want: "ok", state: Closed},
		}},
		{name: "a timeout opens, the cool-down ends in one probe, an answer closes", steps: []hostStep{
			{do: "acquire", id: "a", want: "ok"},
			{do: "release", id: "a", err: timeout, state: Open},
			{do: "acquire", id: "b", want: "open", state: Open},
			{do: "advance", d: DefaultCoolDown - time.Second, state: Open},
			{do: "acquire", id: "b", want: "open", state: Open},
			{do: "advance", d: time.Second, state: HalfOpen},
			{do: "acquire", id: "b", want: "ok", state: HalfOpen},
			{do: "acquire", id: "c", want: "busy", state: HalfOpen},
			{do: "release", id: "b", err: &transport.Error{StatusCode: http.StatusNotFound}, state: Closed},
			{do: "acquire", id: "c", want: "ok", state: Closed},
		}},
		{name: "a failed probe opens for twice as long", steps: []hostStep{
			{do: "acquire", id: "a", want: "ok"},
			{do: "release", id: "a", err: refused, state: Open},
			{do: "advance", d: DefaultCoolDown, state: HalfOpen},
			{do: "acquire", id: "b", want: "ok", state: HalfOpen},
			{do: "release", id: "b", err: timeout, state: Open},
			{do: "advance", d: DefaultCoolDown, state: Open},
			{do: "acquire", id: "c", want: "open", state: Open},
			{do: "advance", d: DefaultCoolDown, state: HalfOpen},
			{do: "acquire", id: "c", want: "ok", state: HalfOpen},
		}},
		{name: "answers of every kind keep it closed", steps: []hostStep{
			{do: "acquire", id: "a", want: "ok"},
			{do: "release", id: "a", err: &transport.Error{StatusCode: http.StatusTooManyRequests}, state: Closed},
			{do: "acquire", id: "b", want: "ok"},
			{do: "release", id: "b", err: &transport.Error{StatusCode: http.StatusServiceUnavailable}, state: Closed},
			{do: "acquire", id: "c", want: "ok"},
			{do: "release", id: "c", err: &transport.Error{StatusCode: http.StatusUnauthorized}, state: Closed},
		}},
		{name: "a cancelled probe says nothing: the next contact probes", steps: []hostStep{
			{do: "acquire", id: "a", want: "ok"},
			{do: "release", id: "a", err: context.Canceled, state: Closed},
			{do: "acquire", id: "b", want: "ok"},
			{do: "acquire", id: "c", want: "busy"},
		}},
		{name: "contacts are bounded across holders", contacts: 2, steps: []hostStep{
			{do: "acquire", id: "a", want: "ok"},
			{do: "release", id: "a"},
			{do: "acquire", id: "b", want: "ok"},
			{do: "acquire", id: "c", want: "ok"},
			{do: "acquire", id: "d", want: "busy"},
			{do: "release", id: "b"},
			{do: "acquire", id: "d", want: "ok"},
		}},
		{name: "holders are bounded, not their contacts", holders: 1, steps: []hostStep{
			{do: "acquire", id: "a", holder: "x", want: "ok"},
			{do: "release", id: "a"},
			{do: "acquire", id: "b", holder: "x", want: "ok"},
			{do: "acquire", id: "c", holder: "x", want: "ok"},
			{do: "acquire", id: "d", holder: "y", want: "busy"},
			{do: "release", id: "b"},
			{do: "acquire", id: "d", holder: "y", want: "busy"},
			{do: "release", id: "c"},
			{do: "acquire", id: "d", holder: "y", want: "ok"},
		}},
		{name: "a failure met without a slot opens it too", steps: []hostStep{
			{do: "trip", err: errors.New("not an image"), state: Closed},
			{do: "trip", err: timeout, state: Open},
			{do: "acquire", id: "a", want: "open", state: Open},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
			h := NewHosts(HostsOptions{Contacts: tt.contacts, Holders: tt.holders, Wait: time.Millisecond, Now: func() time.Time { return now }})
			const host = "r.example"
			held := map[string]func(error){}
			for i, s := range tt.steps {
				switch s.do {
				case "acquire":
					holder := s.holder
					if holder == "" {
						holder = s.id
					}
					release, err := h.Acquire(context.Background(), host, holder)
					var open *HostOpenError
					var busy *HostBusyError
					got := "ok"
					switch {
					case errors.As(err, &open):
						got = "open"
						if !open.Until.After(now) || !strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), open.Until.Format(time.TimeOnly)) {
							t.Errorf("step %d: %v, want the host and the time it is asked again", i, err)
						}
					case errors.As(err, &busy):
						got = "busy"
					case err != nil:
						t.Fatalf("step %d: Acquire: %v", i, err)
					default:
						held[s.id] = release
					}
					if got != s.want {
						t.Fatalf("step %d: acquire %s: %s, want %s", i, s.id, got, s.want)
					}
					if err != nil {
						if class, unanswered := Unanswered(err); class != ClassTransport || !unanswered {
							t.Errorf("step %d: %v is %s, unanswered %v; want a transport failure that leaves the check pending", i, err, class, unanswered)
						}
					}
				case "release":
					held[s.id](s.err)
					delete(held, s.id)
				case "advance":
					now = now.Add(s.d)
				case "trip":
					h.Trip(host, s.err)
				}
				state := Closed
				status, _ := h.Status()
				for _, st := range status {
					if st.Host == host {
						state = st.State
					}
				}
				if state != s.state {
					t.Fatalf("step %d (%s %s): the breaker is %s, want %s", i, s.do, s.id, state, s.state)
				}
			}
		})
	}
}

// TestHostsHolderWaitsOnItsOwn: a holder that has a contact with the host
// already waits for a slot beyond the bound (its check is held by that
// contact anyway), where another holder gives up.
func TestHostsHolderWaitsOnItsOwn(t *testing.T) {
	h := NewHosts(HostsOptions{Contacts: 1, Wait: time.Millisecond})
	first, err := h.Acquire(context.Background(), "r.example", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Acquire(context.Background(), "r.example", "y"); !errors.As(err, new(*HostBusyError)) {
		t.Fatalf("another holder: %v, want busy", err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := h.Acquire(context.Background(), "r.example", "x")
		if err == nil {
			release(nil)
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the holder's second contact returned (%v) while its first was under way", err)
	case <-time.After(50 * time.Millisecond):
	}
	first(nil)
	if err := <-got; err != nil {
		t.Fatalf("the holder's second contact: %v", err)
	}
	if _, trips := h.Status(); trips != 0 {
		t.Errorf("%d trips, want none", trips)
	}
	var none *Hosts
	if release, err := none.Acquire(context.Background(), "r.example", "x"); err != nil {
		t.Fatalf("a nil Hosts: %v", err)
	} else {
		release(context.DeadlineExceeded)
	}
	if none.Check("r.example") != nil || none.Trip("r.example", context.DeadlineExceeded) {
		t.Error("a nil Hosts opened")
	}
}

// TestHostsBusyHostKeepsWaiters: a holder kept out by another holder that
// keeps getting answers from the host waits beyond the bound, since the
// host is busy, not silent; it goes once the other is done.
func TestHostsBusyHostKeepsWaiters(t *testing.T) {
	const wait = 300 * time.Millisecond
	h := NewHosts(HostsOptions{Holders: 1, Wait: wait})
	ctx := context.Background()
	held, err := h.Acquire(ctx, "r.example", "x")
	if err != nil {
		t.Fatal(err)
	}
	held(nil) // the host is known
	if held, err = h.Acquire(ctx, "r.example", "x"); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		release, err := h.Acquire(ctx, "r.example", "y")
		if err == nil {
			release(nil)
		}
		got <- err
	}()
	// x checks one reference after another for well beyond the wait,
	// each answered.
	start := time.Now()
	for time.Since(start) < 2*wait {
		next, err := h.Acquire(ctx, "r.example", "x")
		if err != nil {
			t.Fatal(err)
		}
		held(&transport.Error{StatusCode: http.StatusNotFound})
		held = next
		select {
		case err := <-got:
			t.Fatalf("y returned (%v) while x held the host and it kept answering", err)
		case <-time.After(wait / 10):
		}
	}
	held(nil)
	if err := <-got; err != nil {
		t.Fatalf("y, once x was done: %v", err)
	}
}
