package registry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// TestHostGate: a host's first handshake goes at once, the others wait for
// its outcome, and what that outcome was decides whether they go.
func TestHostGate(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: errors.New("connection refused")}
	tests := []struct {
		name string
		// first is the outcome of the first handshake.
		first error
		// wantErr is what the waiting handshake gets; nil: it goes.
		wantErr error
		// down says whether the host is down afterwards.
		down bool
	}{
		{"first succeeded", nil, nil, false},
		{"unreachable", refused, refused, true},
		{"rate limited", &transport.Error{StatusCode: http.StatusTooManyRequests}, &transport.Error{StatusCode: http.StatusTooManyRequests}, true},
		{"denied is the repository's", &transport.Error{StatusCode: http.StatusUnauthorized}, nil, false},
		{"timed out", context.DeadlineExceeded, context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &HostGate{Breaker: &Breaker{}}
			ctx := context.Background()
			leave, err := g.Enter(ctx, "r.example")
			if err != nil {
				t.Fatalf("first Enter: %v", err)
			}
			// Another host is not held back by this one.
			if other, err := g.Enter(ctx, "s.example"); err != nil {
				t.Fatalf("Enter for another host: %v", err)
			} else {
				other(nil)
			}
			type entered struct {
				leave func(error)
				err   error
			}
			second := make(chan entered, 1)
			go func() {
				l, err := g.Enter(ctx, "r.example")
				second <- entered{l, err}
			}()
			select {
			case e := <-second:
				t.Fatalf("second Enter returned (%v) before the first left", e.err)
			case <-time.After(20 * time.Millisecond):
			}
			leave(tt.first)
			e := <-second
			switch {
			case tt.wantErr == nil && e.err != nil:
				t.Fatalf("second Enter: %v; want it to go", e.err)
			case tt.wantErr != nil && (e.err == nil || e.err.Error() != tt.wantErr.Error()):
				t.Fatalf("second Enter: %v; want %v", e.err, tt.wantErr)
			}
			if e.leave != nil {
				e.leave(nil)
			}
			if got := g.Down("r.example") != nil || g.Breaker.Check("r.example") != nil; got != tt.down {
				t.Errorf("host down = %v; want %v", got, tt.down)
			}
			if g.Down("s.example") != nil {
				t.Error("the other host is down")
			}
		})
	}
}

// TestHostGateWaitEndsWithContext: a handshake waits for the first only
// as long as its own context allows, and a failure of its own context
// does not put the host down.
func TestHostGateWaitEndsWithContext(t *testing.T) {
	g := &HostGate{}
	leave, err := g.Enter(context.Background(), "r.example")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := g.Enter(ctx, "r.example"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter with a deadline = %v; want it to end with the deadline", err)
	}

	cctx, ccancel := context.WithCancel(context.Background())
	leave2, err := g.Enter(cctx, "t.example")
	if err != nil {
		t.Fatal(err)
	}
	ccancel()
	leave2(context.Canceled)
	if err := g.Down("t.example"); err != nil {
		t.Errorf("host down after its contact's own context ended: %v", err)
	}
	leave(nil)
	if g.Down("r.example") != nil {
		t.Error("host down after a successful first contact")
	}
}
