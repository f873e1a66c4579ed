package membudget

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/semaphore"
)

// Amplification is the peak of the heap in use during a check per byte of
// catalog file it reads, with a margin. Measured on catalogbot serve
// checking a pull request that adds one 95 MB catalog file (one olm.bundle
// blob, nearly all of it a base64 olm.bundle.object: the most work per
// byte), with GODEBUG=gctrace=1 and no memory limit: the heap live after a
// collection peaked at 492 MiB, 5.3 times the file's 90.6 MiB
// (docs/performance.md, "Memory with large files"). What the check holds
// is the blob inflated from the fetched pack, the merged tree's view of
// it, the manifest decoded from base64 and parsed, and what the fbc,
// images and owners checks keep of it. Live after marking is a lower
// bound of the peak, hence 6. Since a whole load reads such a file in
// place, the same check's live heap peaks at 274 MiB, 3.0 times the file
// (runtime/metrics' /gc/heap/live, under the shipped 640 MiB GOMEMLIMIT);
// 6 is kept: a file of another shape (YAML, many manifests) has not been
// measured so.
const Amplification = 6

// Baseline is the memory the Go runtime holds in the service besides the
// catalogs its checks read: 32 MiB for the heap of the process idle (2 MiB
// live, measured with GODEBUG=gctrace=1), stacks, GitHub's responses, the
// work queue and the state store's buffers, and 16 MiB for the catalog
// documents kept typed from one check to the next (fbc.KeptDocsBytes,
// which TestBaselineHoldsKeptDocs holds this to).
const Baseline = 48 << 20

// BudgetFor is the catalog bytes the checks of a process may read at once
// under the memory limit limit: what the limit leaves above Baseline, over
// Amplification. No limit (0) is no budget (0): every check is admitted.
func BudgetFor(limit int64) int64 {
	if limit <= 0 {
		return 0
	}
	return max(limit-Baseline, 0) / Amplification
}

// ErrOverBudget is a reservation larger than the whole budget: it would
// never be granted.
var ErrOverBudget = errors.New("more than the whole memory budget")

// Budget is the catalog bytes the checks of one process may hold at once.
// Reservations are granted first come, first served: a large one that
// waits holds back smaller ones behind it, so it is never starved.
type Budget struct {
	size int64
	// wait bounds how long Acquire waits.
	wait    time.Duration
	sem     *semaphore.Weighted
	used    atomic.Int64
	waiting atomic.Int64
	inUse   prometheus.Gauge
	waiters prometheus.Gauge
}

// Options configure a Budget.
type Options struct {
	// Size is the budget in bytes (BudgetFor); 0 admits everything.
	Size int64
	// Wait bounds how long one reservation waits for the others to
	// release theirs; 0 is 10 minutes. The job that gave up is tried
	// again later, as any failed job.
	Wait time.Duration
	// Registerer gets the budget's gauges; nil leaves them unregistered.
	Registerer prometheus.Registerer
}

// New returns a budget of opts.Size bytes with its gauges:
// catalogbot_memory_budget_bytes (the size), _in_use_bytes (reserved now)
// and _waiting (reservations waiting).
func New(opts Options) *Budget {
	b := &Budget{size: opts.Size, wait: opts.Wait}
	if b.wait <= 0 {
		b.wait = 10 * time.Minute
	}
	if b.size > 0 {
		b.sem = semaphore.NewWeighted(b.size)
	}
	size := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogbot_memory_budget_bytes",
		Help: "Catalog bytes the checks of this process may read at once, derived from its memory limit (0: no limit).",
	})
	size.Set(float64(b.size))
	b.inUse = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogbot_memory_budget_in_use_bytes",
		Help: "Catalog bytes reserved by the checks running now.",
	})
	b.waiters = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogbot_memory_budget_waiting",
		Help: "Checks waiting for the memory budget.",
	})
	if opts.Registerer != nil {
		opts.Registerer.MustRegister(size, b.inUse, b.waiters)
	}
	return b
}

// Size is the whole budget in bytes; 0 when there is none.
func (b *Budget) Size() int64 { return b.size }

// InUse is what is reserved now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Waiting counts the reservations waiting now.
func (b *Budget) Waiting() int64 { return b.waiting.Load() }

// Acquire reserves n bytes, waiting while the others hold too much of the
// budget, until ctx ends or the budget's wait passes. release gives them
// back; call it once. More than the whole budget is ErrOverBudget at once.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	if b == nil || b.sem == nil || n <= 0 {
		return func() {}, nil
	}
	if n > b.size {
		return nil, fmt.Errorf("reserve %d bytes: %w (%d bytes)", n, ErrOverBudget, b.size)
	}
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	b.waiters.Set(float64(b.waiting.Add(1)))
	err = b.sem.Acquire(wctx, n)
	b.waiters.Set(float64(b.waiting.Add(-1)))
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("waited %s for %d bytes of the memory budget (%d of %d in use): %w", b.wait, n, b.used.Load(), b.size, err)
	}
	b.inUse.Set(float64(b.used.Add(n)))
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			b.inUse.Set(float64(b.used.Add(-n)))
			b.sem.Release(n)
		}
	}, nil
}
