package images_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
)

// fakeClock makes retries instant and records the waits asked for.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// testBackoff gives waits of 100 ms, 200 ms, 400 ms with the jitter fixed
// at 1 (the upper end).
var testBackoff = registry.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Factor: 2}

// options are Verifier options for tests: anonymous, instant retries, a
// debug log into buf when buf is not nil.
func options(clock *fakeClock, buf *bytes.Buffer) images.Options {
	o := images.Options{
		Policy:   images.DefaultPolicy(),
		Keychain: authn.NewMultiKeychain(), // anonymous: the machine's credentials play no part
		Timeout:  5 * time.Second,
		Backoff:  testBackoff,
		Clock:    clock,
		Jitter:   func() float64 { return 1 },
	}
	if buf != nil {
		o.Log = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

func newVerifier(t testing.TB, o images.Options) *images.Verifier {
	t.Helper()
	v, err := images.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// verifyOne checks one image of the given kind.
func verifyOne(t testing.TB, v *images.Verifier, image string, kind images.Kind) images.Result {
	t.Helper()
	res, err := v.VerifyUses(context.Background(), []images.Use{{Image: image, Location: images.Location{Kind: kind, File: "catalog.yaml", Line: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	return res[0]
}
