package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// replayJob is a job of a delivery whose signed body is identified by
// body.
func replayJob(pr int, delivery string, body byte) Job {
	j := prJob("o/r", pr, delivery)
	j.Replay = ReplayKey{body}
	return j
}

// TestQueueReplays: a body under a new delivery id is dropped while its
// work is queued or running and for the window after it is done; after the
// window, after a failure, or as a different body it is work again. Jobs
// without a key (resync) are never replays.
func TestQueueReplays(t *testing.T) {
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	fail := map[string]bool{"fails": true}
	ran := make(chan string, 10)
	q := NewQueue(ProcessorFunc(func(_ context.Context, j Job) (Result, error) {
		ran <- j.Delivery
		if fail[j.Delivery] {
			return Result{}, errors.New("failed")
		}
		return Result{}, nil
	}), QueueOptions{Workers: 1, ReplayWindow: 10 * time.Minute, Now: clock.Now, Logger: discard})
	enqueue := func(j Job, want EnqueueResult) {
		t.Helper()
		if r := q.Enqueue(j); r != want {
			t.Fatalf("%s: %v, want %v", j.Delivery, r, want)
		}
	}
	runAll := func(want ...string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		q.Start(ctx)
		for _, w := range want {
			if got := <-ran; got != w {
				t.Fatalf("ran %s, want %s", got, w)
			}
		}
	}

	enqueue(replayJob(1, "a", 'A'), Queued)
	enqueue(replayJob(1, "a-again", 'A'), Replay) // queued
	enqueue(replayJob(1, "b", 'B'), Replaced)     // a new body is news
	enqueue(replayJob(2, "fails", 'F'), Queued)
	enqueue(Job{Key: Key{Kind: KindResync}}, Queued)
	enqueue(Job{Key: Key{Kind: KindResync}}, Replaced) // never a replay
	runAll("b", "fails", "")
	waitFor(t, "the queue to finish", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending) == 0 && len(q.running) == 0
	})

	clock.Add(9 * time.Minute)
	enqueue(replayJob(3, "a-later", 'A'), Replay) // replaced by b, whose work covered it
	enqueue(replayJob(3, "b-later", 'B'), Replay)
	enqueue(replayJob(2, "fails-redelivered", 'F'), Queued) // its work failed: run again
	if got := <-ran; got != "fails-redelivered" {
		t.Fatalf("ran %s", got)
	}
	clock.Add(time.Minute)
	enqueue(replayJob(1, "b-after-window", 'B'), Queued)
	<-ran

	// Expired keys are swept, not just ignored.
	clock.Add(time.Hour)
	q.Enqueue(Job{Key: Key{Kind: KindResync}})
	<-ran
	waitFor(t, "the sweep", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.replays) == 0 && q.replayOrder.len() == 0
	})
}

// TestQueueReplayCap: the keys remembered after their work is done are
// bounded by DedupeMax, oldest forgotten first.
func TestQueueReplayCap(t *testing.T) {
	q := startQueue(t, ProcessorFunc(func(context.Context, Job) (Result, error) { return Result{}, nil }), QueueOptions{Workers: 1, DedupeMax: 10})
	for i := range 100 {
		j := prJob("o/r", i, fmt.Sprint("d", i))
		j.Replay = ReplayKey{byte(i)}
		q.Enqueue(j)
	}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if n, order := len(q.replays), q.replayOrder.len(); n != 10 || order != 10 {
		t.Fatalf("remembered %d keys (%d in order), want the cap of 10", n, order)
	}
}

// TestServerReplays: the same signed body under a new delivery id is
// answered "replay" and counted; the same delivery id is still a
// duplicate; a body with a hex signature in another case is the same
// body; another body for the same pull request is work.
func TestServerReplays(t *testing.T) {
	rec := &recorder{}
	var observed []string
	s := newService(t, rec, QueueOptions{}, ServerOptions{Observe: func(j Job) { observed = append(observed, j.Delivery) }})
	body := readPayload(t, "pull_request.synchronize.22.json")
	other := withField(t, "pull_request.synchronize.22.json", func(d map[string]any) {
		d["pull_request"].(map[string]any)["head"].(map[string]any)["sha"] = strings.Repeat("1", 40)
	})
	upper := delivery("pull_request", "upper", body)
	upper.Header.Set(SignatureHeader, "sha256="+strings.ToUpper(strings.TrimPrefix(upper.Header.Get(SignatureHeader), "sha256=")))
	for _, tc := range []struct {
		req  *http.Request
		want string
	}{
		{delivery("pull_request", "d1", body), "accepted"},
		{delivery("pull_request", "d1", body), "duplicate"},
		{delivery("pull_request", "d2", body), "replay"},
		{upper, "replay"},
		{delivery("pull_request", "d3", other), "replaced"},
	} {
		w := s.do(tc.req)
		want := tc.want
		if want == "replaced" {
			want = "accepted"
		}
		if w.Code != http.StatusAccepted || w.Body.String() != want+"\n" {
			t.Fatalf("%s: %d %q, want 202 %q", tc.req.Header.Get("X-GitHub-Delivery"), w.Code, w.Body, want)
		}
	}
	if got := strings.Join(observed, " "); got != "d1 d3" {
		t.Errorf("observed %s, want d1 d3: a replay tells the observer nothing", got)
	}
	m := s.metrics(t)
	for _, want := range []string{
		`catalogbot_webhook_replays_total{event="pull_request"} 2`,
		`catalogbot_webhook_deliveries_total{event="pull_request",result="replay"} 2`,
		`catalogbot_webhook_deliveries_total{event="pull_request",result="duplicate"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestQueueRequeueIsNotAReplay: a processor that returns its job as more
// work (a copy, its delivery id cleared, as a retry would) gets it run
// again, though the copy still carries the body's key.
func TestQueueRequeueIsNotAReplay(t *testing.T) {
	ran := make(chan Job, 4)
	q := startQueue(t, ProcessorFunc(func(_ context.Context, j Job) (Result, error) {
		ran <- j
		if j.Delivery != "" {
			again := j
			again.Delivery = ""
			return Result{Jobs: []Job{again}}, nil
		}
		return Result{}, nil
	}), QueueOptions{Workers: 1})
	if r := q.Enqueue(replayJob(1, "d", 'A')); r != Queued {
		t.Fatal(r)
	}
	first := <-ran
	var second Job
	select {
	case second = <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the processor's copy of its job never ran: it was taken for a replay")
	}
	if first.Delivery != "d" || second.Key != first.Key || second.Delivery != "" {
		t.Fatalf("ran %+v then %+v, want the job then its copy", first.Key, second.Key)
	}
	again := replayJob(1, "", 'A')
	if r := q.Enqueue(again); r == Replay {
		t.Fatal("a job without a delivery was taken for a replay")
	}
	<-ran
}
