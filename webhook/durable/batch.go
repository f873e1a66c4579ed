package durable

import (
	"context"
	"sync"

	"github.com/catalogbot/catalogbot/webhook"
)

// Group commit. A delivery is answered once its work is committed, and a
// commit costs the same for one delivery as for many: SQLite writes one
// transaction at a time, and PostgreSQL pays a round trip for BEGIN and
// for COMMIT. So deliveries offered while a transaction runs wait for the
// next one, and it takes them all (up to maxBatch): the batch is whatever
// arrived during the previous commit, with no timer added to any
// delivery's wait. Each caller still returns only after the transaction
// that holds its work has committed, so a delivery answered 2xx is in the
// state.

// maxBatch bounds the deliveries one transaction takes, so that a
// transaction stays short and one bad delivery costs a bounded retry.
const maxBatch = 64

// batcher is the deliveries waiting for a transaction. One caller at a
// time leads: it runs one batch, its own delivery first among those it
// takes, then hands the lead to the first still waiting.
type batcher struct {
	mu      sync.Mutex
	waiting []*offered
	leading bool
}

type offered struct {
	jobs []webhook.Job
	res  webhook.EnqueueResult
	err  error
	// next says true when this caller leads the next batch, false
	// when res and err are set.
	next chan bool
}

// offer commits jobs, alone or with others offered meanwhile.
func (q *Queue) offer(ctx context.Context, jobs []webhook.Job) (webhook.EnqueueResult, error) {
	o := &offered{jobs: jobs, next: make(chan bool, 1)}
	b := &q.batch
	b.mu.Lock()
	b.waiting = append(b.waiting, o)
	lead := !b.leading
	b.leading = true
	b.mu.Unlock()
	if !lead && !<-o.next {
		return o.res, o.err
	}
	q.runBatch(ctx)
	b.mu.Lock()
	if len(b.waiting) == 0 {
		b.leading = false
		b.mu.Unlock()
	} else {
		next := b.waiting[0]
		b.mu.Unlock()
		next.next <- true
	}
	return o.res, o.err
}

// runBatch runs the waiting deliveries (the leader's first) in one
// transaction. If that fails, nothing of it was kept, and each delivery
// is tried again in a transaction of its own, so that one delivery's
// error is its own.
func (q *Queue) runBatch(ctx context.Context) {
	b := &q.batch
	// The batch is taken once the transaction has begun, so that the
	// deliveries offered while BEGIN waited for the write lock join it.
	t, err := q.s.db.begin(ctx)
	b.mu.Lock()
	n := min(len(b.waiting), maxBatch)
	batch := append([]*offered(nil), b.waiting[:n]...)
	b.waiting = append(b.waiting[:0], b.waiting[n:]...)
	b.mu.Unlock()

	if err == nil {
		now := q.o.Now()
		var pending pendingKeys
		for _, o := range batch {
			if o.res, err = q.enqueueAll(ctx, t, o.jobs, now, &pending); err != nil {
				break
			}
		}
		if err != nil {
			t.rollback(context.WithoutCancel(ctx))
		} else {
			err = t.commit(ctx)
		}
	}
	if err != nil && len(batch) > 1 {
		for _, o := range batch {
			o.err = inTx(ctx, q.s.db, func(t tx) error {
				var err error
				o.res, err = q.enqueueAll(ctx, t, o.jobs, q.o.Now(), &pendingKeys{})
				return err
			})
		}
	} else if err != nil {
		batch[0].err = err
	}
	for _, o := range batch[1:] {
		o.next <- false
	}
}
