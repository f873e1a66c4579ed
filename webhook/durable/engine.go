package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/catalogbot/catalogbot/webhook"
)

// liveStates are the River job states in which a key's job is unique:
// River requires running among them, which is what makes one worker per
// key.
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// riverEngine is River on a driver whose transactions are TTx.
type riverEngine[TTx any] struct {
	client *river.Client[TTx]
	now    func() time.Time
}

func (e *riverEngine[TTx]) insert(ctx context.Context, t tx, args workArgs, at time.Time) (int64, error) {
	opts := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
	if at.After(e.now()) {
		opts.ScheduledAt = at
	}
	ttx := t.raw().(TTx)
	res, err := e.client.InsertTx(ctx, ttx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("state: queueing %s: %w", args.Key, err)
	}
	if res.UniqueSkippedAsDuplicate && res.Job != nil && res.Job.ScheduledAt.After(at) &&
		(res.Job.State == rivertype.JobStateScheduled || res.Job.State == rivertype.JobStateRetryable) {
		// The key's job waits for a later time than this work's: bring
		// it forward; the worker holds it back again if it must.
		if _, err := e.client.JobRetryTx(ctx, ttx, res.Job.ID); err != nil {
			return 0, fmt.Errorf("state: queueing %s: %w", args.Key, err)
		}
	}
	return res.Job.ID, nil
}

func (e *riverEngine[TTx]) stuck(ctx context.Context, t tx, id int64, before time.Time) (bool, error) {
	job, err := e.client.JobGetTx(ctx, t.raw().(TTx), id)
	switch {
	case errors.Is(err, river.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	switch job.State {
	case rivertype.JobStateRunning:
		return job.AttemptedAt != nil && job.AttemptedAt.Before(before), nil
	case rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		// Finished, while the key has work: nothing would run it.
		return true, nil
	}
	return false, nil
}

func (e *riverEngine[TTx]) start(ctx context.Context) error { return e.client.Start(ctx) }
func (e *riverEngine[TTx]) stop(ctx context.Context) error  { return e.client.Stop(ctx) }

// workWorker runs catalogbot_work jobs.
type workWorker[TDriver riverdriver.Driver[TTx], TTx any] struct {
	river.WorkerDefaults[workArgs]
	q *Queue
}

func (w *workWorker[TDriver, TTx]) Work(ctx context.Context, job *river.Job[workArgs]) error {
	return w.q.work(ctx, job.Args, func(ctx context.Context, t tx) error {
		_, err := river.JobCompleteTx[TDriver](ctx, t.raw().(TTx), job)
		return err
	})
}

// resyncWorker queues a resync; River's leader inserts its job every
// ResyncInterval.
type resyncWorker struct {
	river.WorkerDefaults[resyncArgs]
	q *Queue
}

func (w *resyncWorker) Work(context.Context, *river.Job[resyncArgs]) error {
	w.q.enqueue(webhook.Job{Key: webhook.Key{Kind: webhook.KindResync}, Event: "resync"})
	return nil
}

// sweepArgs is the periodic job that forgets expired facts.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "catalogbot_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	q *Queue
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	q := w.q
	now := q.o.Now()
	return inTx(ctx, q.s.db, func(t tx) error {
		if err := sweepFacts(ctx, t, nsDelivery, now.Add(-q.o.DedupeTTL)); err != nil {
			return err
		}
		// A replay entry outlives its window only while its work is live;
		// one left live by a dead replica goes with the dedupe TTL.
		if err := sweepFacts(ctx, t, nsReplay, now.Add(-max(q.o.DedupeTTL, q.o.ReplayWindow))); err != nil {
			return err
		}
		_, err := t.exec(ctx, `DELETE FROM catalogbot_fact WHERE ns NOT LIKE 'q.%' AND at < $1`, now.Add(-q.o.FactTTL).UnixNano())
		return err
	})
}

func newEngine[TDriver riverdriver.Driver[TTx], TTx any](q *Queue, driver TDriver, poll time.Duration) (*riverEngine[TTx], error) {
	workers := river.NewWorkers()
	river.AddWorker(workers, &workWorker[TDriver, TTx]{q: q})
	river.AddWorker(workers, &resyncWorker{q: q})
	river.AddWorker(workers, &sweepWorker{q: q})
	periodic := []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(10*time.Minute),
			func() (river.JobArgs, *river.InsertOpts) { return sweepArgs{}, nil }, &river.PeriodicJobOpts{ID: "sweep"}),
	}
	if q.o.ResyncInterval > 0 {
		periodic = append(periodic, river.NewPeriodicJob(river.PeriodicInterval(q.o.ResyncInterval),
			func() (river.JobArgs, *river.InsertOpts) { return resyncArgs{}, nil },
			&river.PeriodicJobOpts{ID: "resync", RunOnStart: true}))
	}
	client, err := river.NewClient(driver, &river.Config{
		ID:     q.o.ID,
		Logger: slog.New(warnOnly{q.log.Handler()}),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: q.o.Workers}},
		// A job's deadlines are the processor's own; a replica that dies
		// is found by its lease, not by River's stuck-job rescue.
		JobTimeout:        -1,
		FetchCooldown:     20 * time.Millisecond,
		FetchPollInterval: poll,
		PeriodicJobs:      periodic,
		Workers:           workers,
	})
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return &riverEngine[TTx]{client: client, now: q.o.Now}, nil
}

func newSQLiteEngine(q *Queue, d *sqliteDB) (engine, error) {
	// SQLite has no LISTEN/NOTIFY: River polls, often, since the file is
	// local.
	return newEngine[*riversqlite.Driver](q, riversqlite.New(d.pool), 100*time.Millisecond)
}

func newPostgresEngine(q *Queue, d *pgDB) (engine, error) {
	return newEngine[*riverpgxv5.Driver](q, riverpgxv5.New(d.pool), time.Second)
}

func migrateSQLite(ctx context.Context, d *sqliteDB) error {
	m, err := rivermigrate.New(riversqlite.New(d.pool), nil)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("state: migrating River's tables: %w", err)
	}
	return migrate(ctx, d, sqliteIndexes)
}

// migrationLock is the advisory lock replicas starting together take, so
// that one migrates and the others find it done.
const migrationLock = 0x63617462 // "catb"

func migratePostgres(ctx context.Context, d *pgDB) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	m, err := rivermigrate.New(riverpgxv5.New(d.pool), nil)
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("state: migrating River's tables: %w", err)
	}
	return migrate(ctx, d, nil)
}

// warnOnly passes on River's warnings and errors only: its informational
// lines (a producer started, a leader elected) would drown the service's.
type warnOnly struct{ slog.Handler }

func (h warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}
func (h warnOnly) WithAttrs(a []slog.Attr) slog.Handler { return warnOnly{h.Handler.WithAttrs(a)} }
func (h warnOnly) WithGroup(n string) slog.Handler      { return warnOnly{h.Handler.WithGroup(n)} }
