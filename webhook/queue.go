package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Intake is what the Server hands verified work to. Queue is the
// in-memory one; package webhook/durable keeps the same semantics in a
// database, so that work and what is known of deliveries outlive the
// process and several replicas share them.
type Intake interface {
	// Admits tells ahead of EnqueueAll whether a delivery would be
	// dropped as a Duplicate or a Replay; Queued otherwise.
	Admits(delivery string, replay ReplayKey) EnqueueResult
	// EnqueueAll offers the jobs one delivery made, as a unit.
	EnqueueAll(jobs []Job) EnqueueResult
	// Len is the number of queued jobs, for logs.
	Len() int
	// Draining reports whether the intake refuses work while it drains.
	Draining() bool
}

var _ Intake = (*Queue)(nil)

// EnqueueResult says what Enqueue did with a job.
type EnqueueResult int

const (
	Queued    EnqueueResult = iota // a new job for its key
	Replaced                       // replaced the queued older job of its key
	Duplicate                      // its delivery id was seen within the dedupe TTL; dropped
	Full                           // the queue is at MaxPending or MaxPendingBytes; dropped
	Closed                         // the queue is draining; dropped
	Replay                         // the same signed body is queued, running or was done within ReplayWindow; dropped
)

func (r EnqueueResult) String() string {
	switch r {
	case Queued:
		return "queued"
	case Replaced:
		return "replaced"
	case Duplicate:
		return "duplicate"
	case Full:
		return "full"
	case Closed:
		return "closed"
	case Replay:
		return "replay"
	}
	return fmt.Sprintf("EnqueueResult(%d)", int(r))
}

// Queue defaults.
const (
	DefaultWorkers         = 4
	DefaultMaxPending      = 10000
	DefaultMaxPendingBytes = 128 << 20
	DefaultDedupeTTL       = time.Hour
	DefaultDedupeMax       = 100000
	DefaultReplayWindow    = 10 * time.Minute
)

// QueueOptions configure a Queue. Zero values take the defaults above.
type QueueOptions struct {
	Workers    int           // jobs run at once
	MaxPending int           // queued (not running) jobs; beyond it Enqueue returns Full
	DedupeTTL  time.Duration // how long a delivery id is remembered
	Logger     *slog.Logger
	Metrics    *Metrics

	// MaxPendingBytes bounds the payload bytes held by queued jobs. With
	// bodies of up to 25 MiB, MaxPending alone would not bound memory.
	MaxPendingBytes int64
	// DedupeMax bounds the delivery ids remembered; beyond it the oldest is
	// forgotten before its TTL, so a flood of distinct ids cannot grow the
	// map without limit.
	DedupeMax int
	// ReplayWindow is how long after its work is done a delivery's body
	// still counts as a replay when it comes again under a new delivery
	// id (see Job.Replay). While its work is queued or running it always
	// does. Entries are bounded by DedupeMax, as delivery ids are.
	ReplayWindow time.Duration
	// Now is the clock, for tests; nil is time.Now.
	Now func() time.Time
	// AfterFunc calls f after d and returns what stops it, for tests; nil
	// is time.AfterFunc. It times jobs held back by Job.NotBefore.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Retry is how a failed job is tried again; see RetryPolicy.
	Retry RetryPolicy
}

// Queue runs jobs on a bounded pool of workers. Work for one Key runs one at
// a time; a job enqueued while an older job of its key is still queued
// replaces it; jobs whose delivery id was seen within the TTL are dropped.
// Jobs of different keys start in the order their keys were queued.
//
// The zero Queue is not usable; call NewQueue.
type Queue struct {
	p   Processor
	o   QueueOptions
	log *slog.Logger
	m   *Metrics

	mu           sync.Mutex
	work         *sync.Cond   // signalled when ready gains a key or the workers must stop
	pending      map[Key]*Job // queued, not running
	pendingBytes int64        // payload bytes of pending
	running      map[Key]bool // keys a worker is processing
	ready        fifo[Key]    // keys in pending and not running, in queue order
	seen         map[string]time.Time
	seenOrder    fifo[seenEntry] // seen's entries, oldest first (one TTL for all, so also by expiry)
	replays      map[ReplayKey]replayState
	replayOrder  fifo[replayEntry] // replays' finished entries, oldest first
	started      bool
	closed       bool // Drain was called: Enqueue refuses
	stopped      bool // workers exit
	idle         chan struct{}
	idleClosed   bool
	wg           sync.WaitGroup

	// delayed are the jobs held back until their NotBefore, one per
	// key at most; see delay.go.
	delayed map[Key]*delayed
}

type seenEntry struct {
	id string
	at time.Time
}

// replayState is what the queue knows of one signed body: how many of its
// jobs are queued or running, when the last of them finished, and whether
// any failed (then a redelivery must run again).
type replayState struct {
	live   int
	done   time.Time
	failed bool
}

type replayEntry struct {
	key ReplayKey
	at  time.Time
}

// NewQueue returns a queue that runs jobs with p once Start is called.
func NewQueue(p Processor, o QueueOptions) *Queue {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxPendingBytes <= 0 {
		o.MaxPendingBytes = DefaultMaxPendingBytes
	}
	if o.DedupeTTL <= 0 {
		o.DedupeTTL = DefaultDedupeTTL
	}
	if o.DedupeMax <= 0 {
		o.DedupeMax = DefaultDedupeMax
	}
	if o.ReplayWindow <= 0 {
		o.ReplayWindow = DefaultReplayWindow
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.AfterFunc == nil {
		o.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	q := &Queue{
		p:       p,
		o:       o,
		log:     o.Logger,
		m:       o.Metrics,
		pending: map[Key]*Job{},
		running: map[Key]bool{},
		delayed: map[Key]*delayed{},
		seen:    map[string]time.Time{},
		replays: map[ReplayKey]replayState{},
	}
	if q.log == nil {
		q.log = slog.Default()
	}
	if q.m == nil {
		q.m = NewMetrics(nil)
	}
	q.work = sync.NewCond(&q.mu)
	return q
}

// Start starts the workers. ctx is passed to every Process call; when it is
// done the workers stop taking new jobs. To shut down gracefully, call Drain
// first and cancel ctx after it returns. Calling Start again does nothing.
func (q *Queue) Start(ctx context.Context) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return
	}
	q.started = true
	for range q.o.Workers {
		q.wg.Add(1)
		go q.worker(ctx)
	}
	context.AfterFunc(ctx, q.stop)
}

// stop makes the workers exit once their current job is done.
func (q *Queue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.work.Broadcast()
	q.mu.Unlock()
}

// Enqueue offers one job. A job with an empty Delivery (such as one made by
// resync) is not deduplicated. A zero Received is set to now.
func (q *Queue) Enqueue(j Job) EnqueueResult {
	return q.EnqueueAll([]Job{j})
}

// EnqueueAll offers the jobs one delivery made (a check_suite can name
// several pull requests) as a unit: the delivery id is checked and recorded
// once, and either all the jobs are taken or none. The result is Queued when
// any job made new work, Replaced when all replaced queued jobs. Jobs with
// a Replay key (all of one delivery's have the same) are dropped as Replay
// while that key's work is queued, running, or done within ReplayWindow.
func (q *Queue) EnqueueAll(jobs []Job) EnqueueResult {
	if len(jobs) == 0 {
		return Queued
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return Closed
	}
	now := q.o.Now()
	q.sweepSeen(now)
	q.sweepReplays(now)
	delivery := jobs[0].Delivery
	if delivery != "" {
		if _, dup := q.seen[delivery]; dup {
			return Duplicate
		}
	}
	replay := jobs[0].Replay
	if delivery == "" {
		// Work without a delivery (resync, or a processor putting a job
		// back, perhaps a copy of its own) is never a replay.
		replay = ReplayKey{}
	}
	if q.replayed(replay, now) {
		return Replay
	}

	newKeys, addBytes := 0, int64(0)
	for i := range jobs {
		addBytes += int64(len(jobs[i].Payload))
		if old, ok := q.pending[jobs[i].Key]; ok {
			addBytes -= int64(len(old.Payload))
		} else {
			newKeys++
		}
	}
	if len(q.pending)+len(q.delayed)+newKeys > q.o.MaxPending || (addBytes > 0 && q.pendingBytes+addBytes > q.o.MaxPendingBytes) {
		// Not remembered as seen: a redelivery once there is room is welcome.
		return Full
	}

	if delivery != "" {
		q.rememberSeen(delivery, now)
	}
	if !replay.IsZero() {
		st := q.replays[replay]
		st.live += len(jobs)
		q.replays[replay] = st
	}
	result := Replaced
	for i := range jobs {
		j := jobs[i]
		j.Replay = replay
		if j.Received.IsZero() {
			j.Received = now
		}
		if j.NotBefore.After(now) {
			result = min(result, q.hold(j, now))
			continue
		}
		q.unhold(j.Key)
		if old, ok := q.pending[j.Key]; ok {
			q.log.Debug("job replaced by a newer one", "key", j.Key.String(),
				"replaced_delivery", old.Delivery, "delivery", j.Delivery)
			// The newer job does the older one's work (the processor is
			// level-triggered), so the older body counts as done now.
			q.finishReplay(old.Replay, now, false)
			q.pendingBytes -= int64(len(old.Payload))
			// The older job waited longer; keep its receipt time so that the
			// age metric shows how long the key has waited.
			if old.Received.Before(j.Received) {
				j.Received = old.Received
			}
			q.pending[j.Key] = &j
			q.pendingBytes += int64(len(j.Payload))
			continue
		}
		result = Queued
		q.pending[j.Key] = &j
		q.pendingBytes += int64(len(j.Payload))
		if !q.running[j.Key] {
			q.ready.push(j.Key)
			q.work.Signal()
		}
	}
	q.m.QueueDepth.Set(float64(len(q.pending)))
	return result
}

// sweepSeen forgets delivery ids older than the TTL.
func (q *Queue) sweepSeen(now time.Time) {
	for q.seenOrder.len() > 0 {
		e := q.seenOrder.peek()
		if now.Sub(e.at) < q.o.DedupeTTL {
			return
		}
		q.popSeen()
	}
}

// rememberSeen records a delivery id, first forgetting the oldest ids when
// the map is at its cap.
func (q *Queue) rememberSeen(id string, now time.Time) {
	for q.seenOrder.len() >= q.o.DedupeMax {
		q.popSeen()
	}
	q.seen[id] = now
	q.seenOrder.push(seenEntry{id: id, at: now})
}

// replayed reports whether key's work is queued, running or was done
// within the window. q.mu must be held.
func (q *Queue) replayed(key ReplayKey, now time.Time) bool {
	if key.IsZero() {
		return false
	}
	st, ok := q.replays[key]
	return ok && (st.live > 0 || now.Sub(st.done) < q.o.ReplayWindow)
}

// finishReplay notes that one job of key is no longer queued or running.
// When the last one is done, key is remembered for the window from now;
// if any of them failed it is forgotten, so that a redelivery of the same
// body runs again. q.mu must be held.
func (q *Queue) finishReplay(key ReplayKey, now time.Time, failed bool) {
	st, ok := q.replays[key]
	if key.IsZero() || !ok {
		return
	}
	st.live--
	st.failed = st.failed || failed
	switch {
	case st.live > 0:
		q.replays[key] = st
		return
	case st.failed:
		delete(q.replays, key)
		return
	}
	st.done = now
	q.replays[key] = st
	for q.replayOrder.len() >= q.o.DedupeMax {
		q.popReplay()
	}
	q.replayOrder.push(replayEntry{key: key, at: now})
}

// sweepReplays forgets the keys whose window has passed.
func (q *Queue) sweepReplays(now time.Time) {
	for q.replayOrder.len() > 0 && now.Sub(q.replayOrder.peek().at) >= q.o.ReplayWindow {
		q.popReplay()
	}
}

func (q *Queue) popReplay() {
	e := q.replayOrder.pop()
	// The key may have come back and be live again, or be done later;
	// only the entry that recorded its current state removes it.
	if st, ok := q.replays[e.key]; ok && st.live == 0 && st.done.Equal(e.at) {
		delete(q.replays, e.key)
	}
}

func (q *Queue) popSeen() {
	e := q.seenOrder.pop()
	// The id may have been forgotten (failed job) and seen again since;
	// only the entry that recorded the current time removes it.
	if at, ok := q.seen[e.id]; ok && at.Equal(e.at) {
		delete(q.seen, e.id)
	}
}

// forget removes a delivery id, so that a redelivery of a job that failed
// is processed again.
func (q *Queue) forget(id string) {
	if id == "" {
		return
	}
	q.mu.Lock()
	delete(q.seen, id)
	q.mu.Unlock()
}

func (q *Queue) worker(ctx context.Context) {
	defer q.wg.Done()
	q.mu.Lock()
	for {
		for q.ready.len() == 0 && !q.stopped {
			q.work.Wait()
		}
		if q.stopped {
			q.mu.Unlock()
			return
		}
		k := q.ready.pop()
		job := q.pending[k]
		delete(q.pending, k)
		q.pendingBytes -= int64(len(job.Payload))
		q.running[k] = true
		q.m.QueueDepth.Set(float64(len(q.pending)))
		q.mu.Unlock()

		failed := q.run(ctx, *job)

		q.mu.Lock()
		delete(q.running, k)
		q.finishReplay(job.Replay, q.o.Now(), failed)
		if _, more := q.pending[k]; more {
			q.ready.push(k)
			q.work.Signal()
		}
		q.checkIdle()
	}
}

// run processes one job, recovering a panic so that the worker lives on,
// and reports whether it failed.
func (q *Queue) run(ctx context.Context, job Job) (failed bool) {
	start := q.o.Now()
	q.m.QueueAge.Observe(start.Sub(job.Received).Seconds())
	log := q.log.With("delivery", job.Delivery, "event", job.Event, "action", job.Action,
		"repo", job.Key.Repo, "pr", job.Key.PR, "kind", job.Key.Kind)

	err, panicked := q.call(ctx, job)
	switch {
	case panicked:
		q.m.Errors.WithLabelValues("panic").Inc()
		log.Error("job panicked", "error", err, "stack", string(debug.Stack()))
		q.forget(job.Delivery)
	case err != nil:
		q.m.Errors.WithLabelValues("process").Inc()
		log.Error("job failed", "error", err, "duration", q.o.Now().Sub(start))
		q.forget(job.Delivery)
		q.retry(log, job, err)
	default:
		log.Debug("job done", "duration", q.o.Now().Sub(start))
	}
	return panicked || err != nil
}

// retry holds a retry of a failed job, by its error's class. A panic is
// not retried: it would panic again.
func (q *Queue) retry(log *slog.Logger, job Job, err error) {
	next, class, ok := q.o.Retry.Retry(job, err, q.o.Now())
	if !ok {
		log.Warn("job not tried again", "class", class, "attempt", job.Attempt+1)
		return
	}
	q.m.Retries.WithLabelValues(class.String()).Inc()
	log.Info("job tried again later", "class", class, "attempt", next.Attempt+1, "at", next.NotBefore)
	q.Enqueue(next)
}

func (q *Queue) call(ctx context.Context, job Job) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = fmt.Errorf("panic processing %s: %v", job.Key, r), true
		}
	}()
	// The result is acted on beside an error too: a resync that could
	// not list one repository still found the others' work.
	res, err := q.p.Process(ctx, job)
	for _, j := range res.Next(job, q.o.Now()) {
		q.Enqueue(j)
	}
	return err, false
}

// checkIdle closes the idle channel Drain waits on once nothing is queued or
// running. q.mu must be held.
func (q *Queue) checkIdle() {
	if q.idle != nil && !q.idleClosed && len(q.pending) == 0 && len(q.running) == 0 {
		q.idleClosed = true
		close(q.idle)
	}
}

// Drain stops taking work (Enqueue returns Closed from now on), drops the
// jobs held back for later (the next start's resync finds their pull
// requests), and waits until the queued and running jobs are done, then
// stops the workers. If ctx
// ends first it returns an error saying what was left; the workers go on
// until the Start context is cancelled.
func (q *Queue) Drain(ctx context.Context) error {
	q.mu.Lock()
	q.closed = true
	q.dropHeld()
	if q.idle == nil {
		q.idle = make(chan struct{})
		q.checkIdle()
	}
	idle := q.idle
	q.mu.Unlock()

	select {
	case <-idle:
		q.stop()
		q.wg.Wait()
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		queued, running := len(q.pending), len(q.running)
		q.mu.Unlock()
		return fmt.Errorf("draining the work queue: %d queued and %d running jobs left: %w", queued, running, ctx.Err())
	}
}

// Admits tells ahead of EnqueueAll whether a delivery would be dropped:
// Duplicate for a delivery id seen within the TTL, Replay for a body whose
// work is queued, running or was done within ReplayWindow, else Queued.
func (q *Queue) Admits(delivery string, key ReplayKey) EnqueueResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.o.Now()
	q.sweepSeen(now)
	q.sweepReplays(now)
	if _, dup := q.seen[delivery]; dup && delivery != "" {
		return Duplicate
	}
	if q.replayed(key, now) {
		return Replay
	}
	return Queued
}

// Len returns the number of queued jobs, not counting running ones.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// Draining reports whether Drain has been called.
func (q *Queue) Draining() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// fifo is a queue on a slice. The slice is compacted when its consumed
// head is at least half of it, so its capacity follows the peak length.
type fifo[T any] struct {
	items []T
	head  int
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(v T) { f.items = append(f.items, v) }

func (f *fifo[T]) peek() T { return f.items[f.head] }

func (f *fifo[T]) pop() T {
	var zero T
	v := f.items[f.head]
	f.items[f.head] = zero // release what it references
	f.head++
	switch {
	case f.head == len(f.items):
		f.items, f.head = f.items[:0], 0
	case f.head >= len(f.items)/2 && f.head >= 64:
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return v
}
