package durable

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/riverqueue/river"

	"github.com/catalogbot/catalogbot/webhook"
)

// work runs the key of one River job: it takes the key's queued job,
// runs it, and goes on while newer work came meanwhile; it completes the
// River job (through complete) in the transaction that finds the key
// without work and removes its row, so that work queued while it ran
// is never left without a River job.
func (q *Queue) work(ctx context.Context, args workArgs, complete func(context.Context, tx) error) error {
	if q.beforeTake != nil {
		q.beforeTake(args)
	}
	for {
		job, wait, done, err := q.take(ctx, args, complete)
		switch {
		case err != nil:
			return err // River tries again
		case done:
			return nil
		case wait > 0:
			return river.JobSnooze(wait)
		}
		q.run(ctx, args, job)
	}
}

// take takes the key's queued job under this replica's lease. It says
// wait when the job is held until later or another worker's lease is
// live, and done when there is nothing left (the River job is then
// completed).
func (q *Queue) take(ctx context.Context, args workArgs, complete func(context.Context, tx) error) (job webhook.Job, wait time.Duration, done bool, err error) {
	err = inTx(ctx, q.s.db, func(t tx) error {
		now := q.o.Now()
		var (
			enc               *string
			due, epoch, lease int64
			owner             string
		)
		err := t.queryRow(ctx, `SELECT job, due, epoch, owner, lease_until FROM catalogbot_key WHERE key = $1`+q.s.db.forUpdate(), args.Key).
			Scan(&enc, &due, &epoch, &owner, &lease)
		switch {
		case errNoRows(err) || (err == nil && epoch != args.Epoch):
			// Taken over, or done, after this River job was made.
			done = true
			return complete(ctx, t)
		case err != nil:
			return err
		}
		// Leases are told by the database's clock; due by the clock of
		// whoever queued the work.
		leaseNow, err := q.s.db.clock(ctx, t, q.o.Now)
		if err != nil {
			return err
		}
		if owner != "" && owner != q.o.ID && lease > leaseNow.UnixNano() {
			wait = time.Unix(0, lease).Sub(leaseNow) + time.Second
			return nil
		}
		if enc == nil {
			if _, err := t.exec(ctx, `DELETE FROM catalogbot_key WHERE key = $1`, args.Key); err != nil {
				return err
			}
			done = true
			return complete(ctx, t)
		}
		if q.closed.Load() {
			// Draining: the key's work stays queued for another replica
			// or the next start, not held by this one's River job.
			wait = time.Second
			_, err := t.exec(ctx, `UPDATE catalogbot_key SET owner = '', lease_until = 0 WHERE key = $1`, args.Key)
			return err
		}
		if due > now.UnixNano() {
			wait = time.Unix(0, due).Sub(now)
			_, err := t.exec(ctx, `UPDATE catalogbot_key SET owner = '', lease_until = 0 WHERE key = $1`, args.Key)
			return err
		}
		if job, err = decodeJob(*enc); err != nil {
			// Dropped, not retried forever; resync finds its pull request.
			q.log.Error("state: dropping a queued job", "key", args.Key, "error", err)
			_, err := t.exec(ctx, `UPDATE catalogbot_key SET job = NULL WHERE key = $1`, args.Key)
			wait = time.Millisecond
			return err
		}
		_, err = t.exec(ctx, `UPDATE catalogbot_key SET running = job, job = NULL, due = 0, owner = $2, lease_until = $3 WHERE key = $1`,
			args.Key, q.o.ID, leaseNow.Add(q.o.LeaseTTL).UnixNano())
		if err == nil {
			q.m.QueueAge.Observe(now.Sub(job.Received).Seconds())
		}
		return err
	})
	return job, wait, done, err
}

// run processes one job under the key's lease, renewed meanwhile; a lost
// lease (the key was taken over), or one it could not renew twice running
// (the state out of reach), cancels the job.
func (q *Queue) run(ctx context.Context, args workArgs, job webhook.Job) {
	jctx, cancel := context.WithCancel(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(q.o.LeaseTTL / 3)
		defer t.Stop()
		lastRenewal := q.o.Now()
		for {
			select {
			case <-jctx.Done():
				return
			case <-t.C:
			}
			if q.o.Now().Sub(lastRenewal) >= q.o.LeaseTTL-q.o.LeaseTTL/3 {
				// Two renewals missed: cut off from the state. Stopped a
				// third of a lease before it lapses and another replica
				// may take the key, so that the two never overlap.
				q.log.Warn("state: could not renew the lease of a running job; stopping it", "key", args.Key)
				cancel()
				return
			}
			var n int64
			// A partition may swallow the packets rather than refuse
			// them: a renewal gets a third of the lease.
			rctx, rcancel := context.WithTimeout(jctx, q.o.LeaseTTL/3)
			err := inTx(rctx, q.s.db, func(t tx) error {
				leaseNow, err := q.s.db.clock(rctx, t, q.o.Now)
				if err != nil {
					return err
				}
				n, err = t.exec(rctx, `UPDATE catalogbot_key SET lease_until = $4 WHERE key = $1 AND owner = $2 AND epoch = $3`,
					args.Key, q.o.ID, args.Epoch, leaseNow.Add(q.o.LeaseTTL).UnixNano())
				return err
			})
			rcancel()
			switch {
			case err == nil && n == 0:
				q.log.Warn("state: lost the lease of a running job; stopping it", "key", args.Key)
				cancel()
				return
			case err == nil:
				lastRenewal = q.o.Now()
			}
		}
	}()

	start := q.o.Now()
	log := q.log.With("delivery", job.Delivery, "event", job.Event, "action", job.Action,
		"repo", job.Key.Repo, "pr", job.Key.PR, "kind", job.Key.Kind)
	err, panicked := q.call(jctx, job)
	cancel()
	<-renewed
	switch {
	case panicked:
		q.m.Errors.WithLabelValues("panic").Inc()
		log.Error("job panicked", "error", err, "stack", string(debug.Stack()))
	case err != nil:
		q.m.Errors.WithLabelValues("process").Inc()
		log.Error("job failed", "error", err, "duration", q.o.Now().Sub(start))
		// Held in the key's row like any later work: a newer job of the
		// key replaces it, and a replica that dies leaves it queued.
		if next, class, ok := q.o.Retry.Retry(job, err, q.o.Now()); ok {
			q.m.Retries.WithLabelValues(class.String()).Inc()
			log.Info("job tried again later", "class", class, "attempt", next.Attempt+1, "at", next.NotBefore)
			q.enqueue(next)
		} else {
			log.Warn("job not tried again", "class", class, "attempt", job.Attempt+1)
		}
	default:
		log.Debug("job done", "duration", q.o.Now().Sub(start))
	}
	failed := err != nil
	// Recorded even when the job's context ended (a drain that timed out).
	ctx = context.WithoutCancel(ctx)
	ferr := inTx(ctx, q.s.db, func(t tx) error {
		now := q.o.Now()
		if failed && job.Delivery != "" {
			// Forgotten, so that GitHub's redelivery of it runs again.
			if _, err := t.exec(ctx, `DELETE FROM catalogbot_fact WHERE ns = $1 AND key = $2`, nsDelivery, job.Delivery); err != nil {
				return err
			}
		}
		if err := q.finishReplay(ctx, t, job.Replay, now, failed); err != nil {
			return err
		}
		if class, _ := webhook.Classify(err, now); failed && class == webhook.Canceled {
			// Stopped, not failed (a drain, a shutdown): the work goes
			// back in the key's row, unless newer work is there, for
			// the next start or another replica. A lease lost meanwhile
			// matches no row; the takeover queued it already.
			_, err := t.exec(ctx, `UPDATE catalogbot_key SET job = COALESCE(job, running),
				due = CASE WHEN job IS NULL THEN $4 ELSE due END, running = NULL
				WHERE key = $1 AND owner = $2 AND epoch = $3`, args.Key, q.o.ID, args.Epoch, now.UnixNano())
			return err
		}
		_, err := t.exec(ctx, `UPDATE catalogbot_key SET running = NULL WHERE key = $1 AND owner = $2 AND epoch = $3`, args.Key, q.o.ID, args.Epoch)
		return err
	})
	if ferr != nil {
		q.log.Error("state: recording a finished job", "key", args.Key, "error", ferr)
	}
}

// call runs the processor, recovering a panic, and queues what its Result
// asks for.
func (q *Queue) call(ctx context.Context, job webhook.Job) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = fmt.Errorf("panic processing %s: %v", job.Key, r), true
		}
	}()
	res, err := q.p.Process(ctx, job)
	for _, j := range res.Next(job, q.o.Now()) {
		// Taken even while draining: it is this job's own work.
		if r := q.enqueue(j); r == webhook.Full {
			q.log.Warn("state: could not queue a job's follow-up work; resync will find it", "key", j.Key.String())
		}
	}
	return err, false
}

// enqueue is EnqueueAll of one job, draining or not.
func (q *Queue) enqueue(j webhook.Job) webhook.EnqueueResult {
	ctx := context.Background()
	var res webhook.EnqueueResult
	err := inTx(ctx, q.s.db, func(t tx) error {
		var err error
		res, err = q.enqueueAll(ctx, t, []webhook.Job{j}, q.o.Now(), &pendingKeys{})
		return err
	})
	if err != nil {
		q.log.Error("state: queueing work", "error", err, "key", j.Key.String())
		return webhook.Full
	}
	return res
}
