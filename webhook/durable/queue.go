package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// Defaults of Options.
const (
	DefaultLeaseTTL = 30 * time.Second
	// DefaultFactTTL is how long an App fact (a head's push time, a
	// comment's editor, a pending retry) is kept after it was last
	// written: longer than a pull request usually stays open.
	DefaultFactTTL = 90 * 24 * time.Hour
)

// Options configure a State. Zero values take the defaults of
// webhook.QueueOptions and those above.
type Options struct {
	// DatabaseURL, when set, is the PostgreSQL database several replicas
	// share (postgres://...); otherwise the state is the SQLite file
	// FileName under StateDir.
	DatabaseURL string
	StateDir    string

	Workers      int           // jobs run at once by this replica
	MaxPending   int           // keys with queued work, all replicas together; beyond it Enqueue returns Full
	DedupeTTL    time.Duration // how long a delivery id is remembered
	ReplayWindow time.Duration // see webhook.QueueOptions.ReplayWindow
	// ResyncInterval is how often the leader queues a resync of every
	// open pull request (the first at start); 0 is
	// webhook.DefaultResyncInterval, negative none.
	ResyncInterval time.Duration
	// LeaseTTL is how long a key's worker may go without renewing its
	// lease (every LeaseTTL/3) before another replica takes the key's
	// work over: the bound on the takeover after a replica dies.
	LeaseTTL time.Duration
	// FactTTL is how long an App fact lives after its last write.
	FactTTL time.Duration
	// ID names this replica in leases and in River; "" is host-pid-random.
	ID      string
	Logger  *slog.Logger
	Metrics *webhook.Metrics
	// Now is the clock, for tests; nil is time.Now.
	Now func() time.Time
	// Retry is how a failed job is tried again; see webhook.RetryPolicy.
	Retry webhook.RetryPolicy
}

// State is an open state: the database, its Facts, and the Queue made on
// it.
type State struct {
	o      Options
	db     db
	facts  *Facts
	sqlite bool

	// The last readiness probe (Ready).
	readyMu  sync.Mutex
	readyAt  time.Time
	readyErr error
}

// Open opens the state Options name, creating or migrating it.
func Open(ctx context.Context, o Options) (*State, error) {
	if o.Workers <= 0 {
		o.Workers = webhook.DefaultWorkers
	}
	if o.MaxPending <= 0 {
		o.MaxPending = webhook.DefaultMaxPending
	}
	if o.DedupeTTL <= 0 {
		o.DedupeTTL = webhook.DefaultDedupeTTL
	}
	if o.ReplayWindow <= 0 {
		o.ReplayWindow = webhook.DefaultReplayWindow
	}
	if o.ResyncInterval == 0 {
		o.ResyncInterval = webhook.DefaultResyncInterval
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.FactTTL <= 0 {
		o.FactTTL = DefaultFactTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = webhook.NewMetrics(nil)
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		o.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	s := &State{o: o}
	var err error
	switch {
	case o.DatabaseURL != "":
		var pg *pgDB
		if pg, err = openPostgres(ctx, o.DatabaseURL); err != nil {
			return nil, err
		}
		s.db = pg
		err = migratePostgres(ctx, pg)
	case o.StateDir != "":
		var lite *sqliteDB
		if lite, err = openSQLite(o.StateDir); err != nil {
			return nil, err
		}
		s.db, s.sqlite = lite, true
		err = migrateSQLite(ctx, lite)
	default:
		return nil, errors.New("state: neither a state directory nor a database URL")
	}
	if err != nil {
		s.db.close()
		return nil, err
	}
	s.facts = &Facts{db: s.db, now: o.Now}
	return s, nil
}

// Facts are the App's records in this state.
func (s *State) Facts() *Facts { return s.facts }

// Close closes the database. Stop the Queue first.
func (s *State) Close() { s.db.close() }

// workArgs is the River job of a key: the key and the epoch of its row.
// A takeover gives the row a new epoch and a new River job, so a River
// job left running by a dead replica is told apart from the live one.
type workArgs struct {
	Key   string `json:"key" river:"unique"`
	Epoch int64  `json:"epoch" river:"unique"`
}

func (workArgs) Kind() string { return "catalogbot_work" }

// resyncArgs is the periodic job that queues a resync.
type resyncArgs struct{}

func (resyncArgs) Kind() string { return "catalogbot_resync" }

// Queue is the durable webhook.Intake: webhook.Queue's semantics (one job
// per key at a time, a newer job replacing the queued older one, delivery
// ids deduplicated for a TTL, replays dropped, jobs held until their
// NotBefore, a bound on queued keys) kept in the state's database, shared
// by every replica on it.
type Queue struct {
	s   *State
	p   webhook.Processor
	o   Options
	log *slog.Logger
	m   *webhook.Metrics
	eng engine

	// beforeTake, when set (tests), is called as a worker starts on a
	// key, between River's fetch and the key's lease.
	beforeTake func(workArgs)

	batch batcher // deliveries waiting for their transaction

	closed   atomic.Bool
	stopReap context.CancelFunc
	reaped   sync.WaitGroup
}

var _ webhook.Intake = (*Queue)(nil)

// engine is River on one driver, behind what the queue calls of it.
type engine interface {
	// insert adds the River job of a key due at at, in t; when the
	// key's job exists and is scheduled later, it is made due at once
	// (the worker holds it back again if it must).
	insert(ctx context.Context, t tx, args workArgs, at time.Time) (id int64, err error)
	// stuck says whether River job id is running since before before
	// (or gone): fetched by a replica that died before it took the key.
	stuck(ctx context.Context, t tx, id int64, before time.Time) (bool, error)
	start(ctx context.Context) error
	stop(ctx context.Context) error
}

// Queue makes the queue that runs jobs with p. Call it once.
func (s *State) Queue(p webhook.Processor) (*Queue, error) {
	q := &Queue{s: s, p: p, o: s.o, log: s.o.Logger, m: s.o.Metrics}
	var err error
	if s.sqlite {
		q.eng, err = newSQLiteEngine(q, s.db.(*sqliteDB))
	} else {
		q.eng, err = newPostgresEngine(q, s.db.(*pgDB))
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// jobRecord is a webhook.Job as the key's row holds it.
type jobRecord struct {
	Key          webhook.Key `json:"key"`
	Event        string      `json:"event,omitempty"`
	Action       string      `json:"action,omitempty"`
	Delivery     string      `json:"delivery,omitempty"`
	Installation int64       `json:"installation,omitempty"`
	Payload      []byte      `json:"payload,omitempty"`
	Received     time.Time   `json:"received"`
	NotBefore    time.Time   `json:"notBefore,omitzero"`
	Replay       string      `json:"replay,omitempty"`
	Attempt      int         `json:"attempt,omitempty"`
}

func encodeJob(j webhook.Job) string {
	r := jobRecord{Key: j.Key, Event: j.Event, Action: j.Action, Delivery: j.Delivery, Installation: j.Installation,
		Payload: j.Payload, Received: j.Received, NotBefore: j.NotBefore, Attempt: j.Attempt}
	if !j.Replay.IsZero() {
		r.Replay = hex.EncodeToString(j.Replay[:])
	}
	b, _ := json.Marshal(r) // nothing in it can fail to encode
	return string(b)
}

func decodeJob(s string) (webhook.Job, error) {
	var r jobRecord
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return webhook.Job{}, fmt.Errorf("state: a queued job does not decode: %w", err)
	}
	j := webhook.Job{Key: r.Key, Event: r.Event, Action: r.Action, Delivery: r.Delivery, Installation: r.Installation,
		Payload: r.Payload, Received: r.Received, NotBefore: r.NotBefore, Attempt: r.Attempt}
	if r.Replay != "" {
		if b, err := hex.DecodeString(r.Replay); err == nil && len(b) == len(j.Replay) {
			copy(j.Replay[:], b)
		}
	}
	return j, nil
}

// replayState is what the state knows of one signed body, as
// webhook.Queue keeps it: how many of its jobs are queued or running,
// when the last finished, whether one failed.
type replayState struct {
	Live   int   `json:"live"`
	Done   int64 `json:"done,omitempty"`
	Failed bool  `json:"failed,omitempty"`
}

// Admits implements webhook.Intake. It reads on the state's readers, in
// one statement: EnqueueAll checks again in its transaction, so this
// answer needs no lock.
func (q *Queue) Admits(delivery string, replay webhook.ReplayKey) webhook.EnqueueResult {
	res, err := q.admits(context.Background(), q.s.db.reader(), delivery, replay, q.o.Now())
	if err != nil {
		q.log.Error("state: checking a delivery", "error", err)
		return webhook.Full // refused with Retry-After; GitHub's redelivery or resync brings it back
	}
	return res
}

// admits reads when the delivery id was last seen and what is known of
// its signed body, in one statement (one round trip to PostgreSQL).
func (q *Queue) admits(ctx context.Context, r querier, delivery string, replay webhook.ReplayKey, now time.Time) (webhook.EnqueueResult, error) {
	if delivery == "" && replay.IsZero() {
		return webhook.Queued, nil
	}
	var (
		at *int64
		rv *string
	)
	err := r.queryRow(ctx, `SELECT (SELECT at FROM catalogbot_fact WHERE ns = $1 AND key = $2),
		(SELECT value FROM catalogbot_fact WHERE ns = $3 AND key = $4)`,
		nsDelivery, delivery, nsReplay, hex.EncodeToString(replay[:])).Scan(&at, &rv)
	if err != nil {
		return 0, fmt.Errorf("state: checking delivery %s: %w", delivery, err)
	}
	if delivery != "" && at != nil && now.Sub(time.Unix(0, *at)) < q.o.DedupeTTL {
		return webhook.Duplicate, nil
	}
	if !replay.IsZero() && rv != nil {
		var st replayState
		if json.Unmarshal([]byte(*rv), &st) == nil && // unreadable: as if unknown
			(st.Live > 0 || now.Sub(time.Unix(0, st.Done)) < q.o.ReplayWindow) {
			return webhook.Replay, nil
		}
	}
	return webhook.Queued, nil
}

func (q *Queue) replayState(ctx context.Context, t tx, lock string, k webhook.ReplayKey) (replayState, bool, error) {
	v, ok, err := getFact(ctx, t, lock, nsReplay, hex.EncodeToString(k[:]))
	if err != nil || !ok {
		return replayState{}, false, err
	}
	var st replayState
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return replayState{}, false, nil // unreadable: as if unknown
	}
	return st, true, nil
}

func (q *Queue) putReplay(ctx context.Context, t tx, k webhook.ReplayKey, st replayState, now time.Time) error {
	b, _ := json.Marshal(st)
	return putFact(ctx, t, nsReplay, hex.EncodeToString(k[:]), string(b), now)
}

// finishReplay notes that one job of k is no longer queued or running;
// see webhook.Queue's.
func (q *Queue) finishReplay(ctx context.Context, t tx, k webhook.ReplayKey, now time.Time, failed bool) error {
	if k.IsZero() {
		return nil
	}
	st, ok, err := q.replayState(ctx, t, q.s.db.forUpdate(), k)
	if err != nil || !ok {
		return err
	}
	st.Live--
	st.Failed = st.Failed || failed
	switch {
	case st.Live > 0:
	case st.Failed:
		_, err := t.exec(ctx, `DELETE FROM catalogbot_fact WHERE ns = $1 AND key = $2`, nsReplay, hex.EncodeToString(k[:]))
		return err
	default:
		st.Done = now.UnixNano()
	}
	return q.putReplay(ctx, t, k, st, now)
}

// Enqueue offers one job; see EnqueueAll.
func (q *Queue) Enqueue(j webhook.Job) webhook.EnqueueResult { return q.EnqueueAll([]webhook.Job{j}) }

// EnqueueAll implements webhook.Intake, with webhook.Queue.EnqueueAll's
// semantics, in one transaction: the jobs are taken or none is. The
// transaction may be shared with other deliveries offered meanwhile (see
// batcher); either way EnqueueAll returns once it is committed.
func (q *Queue) EnqueueAll(jobs []webhook.Job) webhook.EnqueueResult {
	if len(jobs) == 0 {
		return webhook.Queued
	}
	if q.closed.Load() {
		return webhook.Closed
	}
	res, err := q.offer(context.Background(), jobs)
	if err != nil {
		q.m.Errors.WithLabelValues("state").Inc()
		q.log.Error("state: queueing work", "error", err, "key", jobs[0].Key.String())
		return webhook.Full
	}
	return res
}

// pendingKeys is the number of keys with work as a transaction sees it:
// counted once, at its first delivery, and kept by put after.
type pendingKeys struct {
	n     int
	known bool
}

func (q *Queue) enqueueAll(ctx context.Context, t tx, jobs []webhook.Job, now time.Time, pending *pendingKeys) (webhook.EnqueueResult, error) {
	delivery := jobs[0].Delivery
	replay := jobs[0].Replay
	if delivery == "" {
		replay = webhook.ReplayKey{}
	}
	if res, err := q.admits(ctx, t, delivery, replay, now); err != nil || res != webhook.Queued {
		return res, err
	}
	if !pending.known {
		// catalogbot_key_pending makes this count read the index only.
		if err := t.queryRow(ctx, `SELECT COUNT(*) FROM catalogbot_key WHERE job IS NOT NULL`).Scan(&pending.n); err != nil {
			return 0, err
		}
		pending.known = true
	}
	if pending.n+len(jobs) > q.o.MaxPending {
		// Counted as if every job made a new key: near the bound, a
		// delivery may be refused that would only have replaced work.
		// Not remembered as seen: a redelivery once there is room is welcome.
		return webhook.Full, nil
	}
	if delivery != "" {
		if err := putFact(ctx, t, nsDelivery, delivery, "", now); err != nil {
			return 0, err
		}
	}
	if !replay.IsZero() {
		st, _, err := q.replayState(ctx, t, q.s.db.forUpdate(), replay)
		if err != nil {
			return 0, err
		}
		st.Live += len(jobs)
		if err := q.putReplay(ctx, t, replay, st, now); err != nil {
			return 0, err
		}
	}
	result := webhook.Replaced
	for _, j := range jobs {
		j.Replay = replay
		if j.Received.IsZero() {
			j.Received = now
		}
		r, added, err := q.put(ctx, t, j, now)
		if err != nil {
			return 0, err
		}
		if added {
			pending.n++
		}
		result = min(result, r)
	}
	return result, nil
}

// put makes j the key's work, as webhook.Queue does: a job due now
// replaces the queued or held one; a held job is redundant beside a queued
// one, and replaces an earlier held one. added says the key had no work
// before.
func (q *Queue) put(ctx context.Context, t tx, j webhook.Job, now time.Time) (_ webhook.EnqueueResult, added bool, _ error) {
	key := j.Key.String()
	// The row is made first, so that two deliveries for a new key meet
	// on its lock rather than on the primary key. A worker may be
	// deleting it meanwhile (its key's work done): the lock is then
	// granted on a row that is gone, and the row is made again.
	var (
		old             *string
		due, epoch, rcv int64
	)
	for try := 0; ; try++ {
		if _, err := t.exec(ctx, `INSERT INTO catalogbot_key (key, epoch) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
			key, now.UnixNano()); err != nil {
			return 0, false, err
		}
		err := t.queryRow(ctx, `SELECT job, due, epoch, received FROM catalogbot_key WHERE key = $1`+q.s.db.forUpdate(), key).
			Scan(&old, &due, &epoch, &rcv)
		if err == nil {
			break
		}
		if !errNoRows(err) || try == 2 {
			return 0, false, err
		}
	}
	queued := old != nil && due <= now.UnixNano()
	held := j.NotBefore.After(now)
	// As webhook.Queue says it: a held job replaces whatever the key has;
	// a job due now replaces only a queued one (a held one it supersedes).
	result := webhook.Queued
	if queued || (held && old != nil) {
		result = webhook.Replaced
	}
	if held && queued {
		return webhook.Replaced, false, nil
	}
	at := now
	if held {
		at = j.NotBefore
	}
	if queued {
		oldJob, err := decodeJob(*old)
		if err == nil {
			// The newer job does the older one's work (the processor is
			// level-triggered), so the older body counts as done now.
			if err := q.finishReplay(ctx, t, oldJob.Replay, now, false); err != nil {
				return 0, false, err
			}
			// The older job waited longer; its receipt time shows how
			// long the key has waited.
			if oldJob.Received.Before(j.Received) {
				j.Received = oldJob.Received
			}
		}
	}
	if queued && !held {
		// The key's work has been due since the queued job's time; the
		// newer job does not postpone it (reapFetched goes by it).
		at = time.Unix(0, min(due, at.UnixNano()))
	}
	// River's job first, so that the row, whose job holds the whole
	// body, is written once.
	id, err := q.eng.insert(ctx, t, workArgs{Key: key, Epoch: epoch}, at)
	if err != nil {
		return 0, false, err
	}
	if _, err := t.exec(ctx, `UPDATE catalogbot_key SET job = $2, due = $3, received = $4, river_id = $5 WHERE key = $1`,
		key, encodeJob(j), at.UnixNano(), j.Received.UnixNano(), id); err != nil {
		return 0, false, err
	}
	return result, old == nil, nil
}

// Len implements webhook.Intake: the keys with queued work, all replicas
// together; -1 when the state cannot be read.
func (q *Queue) Len() int {
	n := -1
	if err := q.s.db.reader().queryRow(context.Background(), `SELECT COUNT(*) FROM catalogbot_key WHERE job IS NOT NULL`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// Draining implements webhook.Intake.
func (q *Queue) Draining() bool { return q.closed.Load() }

// Start starts this replica's workers, its share of River's maintenance
// and the lease reaper. ctx is passed to every Process call.
func (q *Queue) Start(ctx context.Context) error {
	if q.s.sqlite {
		// One process owns a SQLite state (Open locked it), so a lease
		// held in it is a dead process's: take its work back at once.
		if err := q.reap(ctx, true); err != nil {
			return err
		}
	}
	if err := q.eng.start(ctx); err != nil {
		return fmt.Errorf("state: starting the work queue: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	q.stopReap = cancel
	q.reaped.Add(1)
	go q.reapLoop(rctx)
	return nil
}

// Drain stops taking work (EnqueueAll returns Closed) and waits for the
// running jobs of this replica to finish. Queued and held work stays in
// the state for the next start or another replica. If ctx ends first the
// running jobs are cancelled, and their keys are taken over when their
// leases lapse.
func (q *Queue) Drain(ctx context.Context) error {
	q.closed.Store(true)
	if q.stopReap != nil {
		q.stopReap()
		q.reaped.Wait()
	}
	if err := q.eng.stop(ctx); err != nil {
		return fmt.Errorf("draining the work queue: %w", err)
	}
	return nil
}

func (q *Queue) reapLoop(ctx context.Context) {
	defer q.reaped.Done()
	t := time.NewTicker(q.o.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := q.reap(ctx, false); err != nil && ctx.Err() == nil {
			q.log.Warn("state: taking over lapsed work", "error", err)
		}
		// The depth is the whole state's, as every replica sees it.
		if n := q.Len(); n >= 0 {
			q.m.QueueDepth.Set(float64(n))
		}
	}
}

// reap takes over the keys whose worker let its lease lapse (all leased
// keys when all is set): each gets a new epoch and a new River job, which
// any replica may fetch. A River job the dead worker left running finds
// its epoch gone and ends without work.
func (q *Queue) reap(ctx context.Context, all bool) error {
	now := q.o.Now()
	for {
		var key string
		var due int64
		err := inTx(ctx, q.s.db, func(t tx) error {
			// A lease lapses by the database's clock, the one it was
			// granted by: a replica whose clock runs ahead takes no live
			// lease.
			leaseNow, err := q.s.db.clock(ctx, t, q.o.Now)
			if err != nil {
				return err
			}
			cutoff := leaseNow.UnixNano()
			if all {
				cutoff = 1<<63 - 1
			}
			err = t.queryRow(ctx, `SELECT key, due FROM catalogbot_key WHERE owner <> '' AND lease_until < $1 LIMIT 1`+q.s.db.forUpdate(), cutoff).Scan(&key, &due)
			if err != nil {
				return err
			}
			epoch := now.UnixNano()
			// The job it was running is lost with it; the key runs again
			// (the processor is level-triggered), so none is left undone.
			if _, err := t.exec(ctx, `UPDATE catalogbot_key SET owner = '', lease_until = 0, epoch = $2,
				due = CASE WHEN job IS NULL THEN $3 ELSE due END, job = COALESCE(job, running), running = NULL
				WHERE key = $1`, key, epoch, now.UnixNano()); err != nil {
				return err
			}
			q.log.Warn("state: took over work whose worker stopped renewing its lease", "key", key)
			q.m.Takeovers.WithLabelValues("lease").Inc()
			return q.requeue(ctx, t, key, epoch, time.Unix(0, max(due, now.UnixNano())))
		})
		if errNoRows(err) {
			break
		}
		if err != nil {
			return err
		}
	}
	return q.reapFetched(ctx, now, all)
}

// maxReapScan bounds the queued keys reapFetched looks at in a round.
const maxReapScan = 20

// requeue gives key a River job of epoch due at at.
func (q *Queue) requeue(ctx context.Context, t tx, key string, epoch int64, at time.Time) error {
	id, err := q.eng.insert(ctx, t, workArgs{Key: key, Epoch: epoch}, at)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, `UPDATE catalogbot_key SET river_id = $2 WHERE key = $1`, key, id)
	return err
}

// reapFetched takes over the keys whose River job a replica fetched and
// then died before it took the key's lease: their work waits, queued,
// behind a River job that stays running. Only keys due for longer than
// LeaseTTL are looked at, a few at a time, so a backlog costs little; a
// key's due is when its work first became due, which newer work for it
// does not postpone (put), so a pull request poked often is still found.
// River's fetch time is told by the database's clock. With all (a SQLite
// state at start, which no other process may hold) every River job left
// running is a dead process's, however recent.
func (q *Queue) reapFetched(ctx context.Context, now time.Time, all bool) error {
	cutoff := now.Add(-q.o.LeaseTTL)
	if all {
		cutoff = time.Unix(0, 1<<63-1)
	}
	// One row per query, since tx reads single rows; at most
	// maxReapScan of the oldest queued keys per round.
	var keys []string
	lastDue, lastKey := int64(-1), ""
	for range maxReapScan {
		var k string
		var due int64
		err := inTx(ctx, q.s.db, func(t tx) error {
			return t.queryRow(ctx, `SELECT key, due FROM catalogbot_key
				WHERE owner = '' AND job IS NOT NULL AND due < $1 AND river_id <> 0 AND (due > $2 OR (due = $2 AND key > $3))
				ORDER BY due, key LIMIT 1`, cutoff.UnixNano(), lastDue, lastKey).Scan(&k, &due)
		})
		if errNoRows(err) {
			break
		}
		if err != nil {
			return err
		}
		keys = append(keys, k)
		lastDue, lastKey = due, k
	}
	for _, key := range keys {
		err := inTx(ctx, q.s.db, func(t tx) error {
			var id, due int64
			var owner string
			var job *string
			err := t.queryRow(ctx, `SELECT river_id, due, owner, job FROM catalogbot_key WHERE key = $1`+q.s.db.forUpdate(), key).Scan(&id, &due, &owner, &job)
			if err != nil || owner != "" || job == nil {
				return err
			}
			fetched := cutoff
			if !all {
				leaseNow, err := q.s.db.clock(ctx, t, q.o.Now)
				if err != nil {
					return err
				}
				fetched = leaseNow.Add(-q.o.LeaseTTL)
			}
			stuck, err := q.eng.stuck(ctx, t, id, fetched)
			if err != nil || !stuck {
				return err
			}
			epoch := now.UnixNano()
			if _, err := t.exec(ctx, `UPDATE catalogbot_key SET epoch = $2 WHERE key = $1`, key, epoch); err != nil {
				return err
			}
			q.log.Warn("state: took over work fetched by a replica that stopped", "key", key)
			q.m.Takeovers.WithLabelValues("fetched").Inc()
			return q.requeue(ctx, t, key, epoch, time.Unix(0, max(due, now.UnixNano())))
		})
		if err != nil && !errNoRows(err) {
			return err
		}
	}
	return nil
}

// DefaultStateDir is the state directory when none is configured:
// $XDG_STATE_HOME/catalogbot, or ~/.local/state/catalogbot.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "catalogbot"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no state directory configured (stateDir) and %w", err)
	}
	return filepath.Join(home, ".local", "state", "catalogbot"), nil
}
