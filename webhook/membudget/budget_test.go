package membudget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

func TestBudgetFor(t *testing.T) {
	for _, tc := range []struct {
		limit, want int64
	}{
		{0, 0},
		{Baseline / 2, 0},
		// The shipped deployment.
		{RuntimeLimit(768 << 20), (RuntimeLimit(768<<20) - Baseline) / Amplification},
	} {
		if got := BudgetFor(tc.limit); got != tc.want {
			t.Errorf("BudgetFor(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
	// The shipped limit admits a file of the default limits.fileBytes
	// (100 MB) with its package, one at a time: not two of 95 MB.
	if b := BudgetFor(RuntimeLimit(768 << 20)); b < 100_000_000+1<<20 || b >= 2*95_000_000 {
		t.Errorf("the shipped limit's budget is %d bytes; want a 100 MB file, and not two of 95 MB", b)
	}
}

// TestBaselineHoldsKeptDocs holds Baseline to what it counts: the idle
// service and the typed documents the checks keep between them, which the
// budget's checks do not reserve.
func TestBaselineHoldsKeptDocs(t *testing.T) {
	const idle = 32 << 20
	if Baseline < idle+fbc.KeptDocsBytes {
		t.Errorf("Baseline is %d MiB, less than the idle service's %d MiB and the %d MiB of fbc.KeptDocsBytes", Baseline>>20, idle>>20, fbc.KeptDocsBytes>>20)
	}
}

// waitFor waits until cond holds; the budget's state changes on other
// goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestBudgetTakesTurns: a reservation that does not fit waits until one
// held is released; the gauges say what is reserved and what waits.
func TestBudgetTakesTurns(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := New(Options{Size: 100, Registerer: reg})
	ctx := context.Background()
	first, err := b.Acquire(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	granted := make(chan func())
	go func() {
		release, err := b.Acquire(ctx, 60)
		if err != nil {
			t.Error(err)
		}
		granted <- release
	}()
	waitFor(t, "the second reservation waits", func() bool { return b.Waiting() == 1 })
	if got := gauge(t, reg, "catalogbot_memory_budget_in_use_bytes"); got != 60 {
		t.Errorf("in use %v while the second waits, want 60", got)
	}
	if got := gauge(t, reg, "catalogbot_memory_budget_waiting"); got != 1 {
		t.Errorf("waiting %v, want 1", got)
	}
	select {
	case <-granted:
		t.Fatal("granted 120 of 100 bytes")
	default:
	}
	first()
	first() // a second release gives nothing back twice
	second := <-granted
	if b.InUse() != 60 || b.Waiting() != 0 {
		t.Errorf("in use %d, waiting %d; want 60, 0", b.InUse(), b.Waiting())
	}
	second()
	if b.InUse() != 0 || gauge(t, reg, "catalogbot_memory_budget_in_use_bytes") != 0 {
		t.Errorf("in use %d after every release", b.InUse())
	}
	if got := gauge(t, reg, "catalogbot_memory_budget_bytes"); got != 100 {
		t.Errorf("budget gauge %v, want 100", got)
	}
}

// gauge is the value of the gauge name gathered from reg.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

func TestBudgetRefuses(t *testing.T) {
	b := New(Options{Size: 100, Wait: time.Millisecond})
	if _, err := b.Acquire(context.Background(), 101); !errors.Is(err, ErrOverBudget) {
		t.Errorf("101 of 100: %v, want ErrOverBudget", err)
	}
	hold, err := b.Acquire(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	// The wait is bounded by the budget's Wait...
	if _, err := b.Acquire(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "waited 1ms for 1 bytes") {
		t.Errorf("past the wait: %v", err)
	}
	// ...and by the caller's context, whose cause is returned.
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("job cancelled")
	cancel(cause)
	b2 := New(Options{Size: 1})
	hold2, _ := b2.Acquire(context.Background(), 1)
	defer hold2()
	if _, err := b2.Acquire(ctx, 1); !errors.Is(err, cause) {
		t.Errorf("an ended context: %v, want its cause", err)
	}
	if b.Waiting() != 0 || b2.Waiting() != 0 {
		t.Error("a reservation that gave up is still counted as waiting")
	}
	// No budget admits everything.
	if release, err := New(Options{}).Acquire(context.Background(), 1<<40); err != nil {
		t.Error(err)
	} else {
		release()
	}
}
