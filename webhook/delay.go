package webhook

import "time"

// delayed is a job held back until its NotBefore: at most one per key,
// the newest, timed by its own timer.
type delayed struct {
	job  Job
	stop func() bool
}

// hold keeps j (whose NotBefore is after now) until its time. q.mu must be
// held. A job of the key already queued makes j redundant, since it runs
// sooner and will hold its own retry if it needs one; an earlier held job
// of the key is replaced. The result is Queued for a new held key,
// Replaced otherwise.
func (q *Queue) hold(j Job, now time.Time) EnqueueResult {
	if _, ok := q.pending[j.Key]; ok {
		return Replaced
	}
	result := Queued
	if old, ok := q.delayed[j.Key]; ok {
		old.stop()
		result = Replaced
	}
	d := &delayed{job: j}
	q.delayed[j.Key] = d
	d.stop = q.o.AfterFunc(j.NotBefore.Sub(now), func() { q.release(d) })
	return result
}

// unhold drops the held job of k, which a job due at once replaces. q.mu
// must be held.
func (q *Queue) unhold(k Key) {
	if d, ok := q.delayed[k]; ok {
		d.stop()
		delete(q.delayed, k)
	}
}

// release queues d once its time has come, unless it was replaced or
// dropped meanwhile, or a job of its key was queued since.
func (q *Queue) release(d *delayed) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := d.job.Key
	if q.delayed[k] != d {
		return
	}
	delete(q.delayed, k)
	if q.closed {
		return
	}
	if _, ok := q.pending[k]; ok {
		return
	}
	j := d.job
	j.NotBefore = time.Time{}
	j.Received = q.o.Now()
	q.pending[k] = &j
	q.pendingBytes += int64(len(j.Payload))
	if !q.running[k] {
		q.ready.push(k)
		q.work.Signal()
	}
	q.m.QueueDepth.Set(float64(len(q.pending)))
}

// dropHeld stops and forgets every held job. q.mu must be held.
func (q *Queue) dropHeld() {
	for k, d := range q.delayed {
		d.stop()
		delete(q.delayed, k)
	}
}

// Held is the number of jobs held back until their NotBefore.
func (q *Queue) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.delayed)
}
