package durable

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// walCommits counts the transactions committed in a SQLite write-ahead
// log: its frames that end a transaction (a non-zero database size in the
// frame header) and belong to the log's current generation (the header's
// salts). SQLite's own record of what was written, whatever wrote it.
func walCommits(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 32 {
		return 0
	}
	pageSize := int(binary.BigEndian.Uint32(b[8:12]))
	salts := b[16:24]
	n := 0
	for off := 32; off+24+pageSize <= len(b); off += 24 + pageSize {
		h := b[off : off+24]
		if !bytes.Equal(h[8:16], salts) {
			break // left from an earlier generation of the log
		}
		if binary.BigEndian.Uint32(h[4:8]) != 0 {
			n++
		}
	}
	return n
}

// TestConcurrentDeliveriesShareCommits is the intake under load: 32
// deliveries offered at once, while another connection holds SQLite's
// write lock (as River or a worker does), are committed in a few
// transactions, not one each, and every one that was answered is in the
// state after it is closed and opened again. Before group commit each
// delivery had a transaction of its own (32 commits).
func TestConcurrentDeliveriesShareCommits(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), Options{StateDir: dir, Logger: quiet(), ResyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.Queue(newRecorder()) // not started: nothing but the intake writes
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	holder, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	// An empty log, so that the deliveries' frames are all there is to
	// count and no checkpoint starts it again meanwhile.
	if _, err := holder.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}

	const n = 32
	var (
		started atomic.Int32
		wg      sync.WaitGroup
		results [n]webhook.EnqueueResult
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			results[i] = q.EnqueueAll([]webhook.Job{{
				Key:      webhook.Key{Kind: webhook.KindPR, Repo: "o/r", PR: i + 1},
				Event:    "pull_request",
				Delivery: fmt.Sprintf("delivery-%d", i),
				Payload:  []byte(fmt.Sprintf(`{"number": %d}`, i+1)),
			}})
		}()
	}
	for started.Load() < n {
		time.Sleep(time.Millisecond)
	}
	// Give the last ones a moment to queue behind the lock; one that
	// comes later only adds a commit, far from the bound below.
	time.Sleep(50 * time.Millisecond)
	if _, err := holder.ExecContext(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, r := range results {
		if r != webhook.Queued {
			t.Fatalf("delivery %d: %v, want queued", i, r)
		}
	}
	commits := walCommits(t, path+"-wal")
	t.Logf("%d deliveries offered at once: %d commits", n, commits)
	if commits == 0 || commits > n/4 {
		t.Errorf("%d deliveries offered at once took %d commits, want 1 to %d", n, commits, n/4)
	}

	// Answered means kept.
	s.Close()
	s, err = Open(context.Background(), Options{StateDir: dir, Logger: quiet(), ResyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err = s.Queue(newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Len(); got != n {
		t.Errorf("after reopening, %d keys with work, want %d", got, n)
	}
	for i := range n {
		if r := q.Admits(fmt.Sprintf("delivery-%d", i), webhook.ReplayKey{}); r != webhook.Duplicate {
			t.Errorf("after reopening, delivery %d is %v, want a duplicate", i, r)
		}
	}
}

// TestIntakeParsesStatementsOnce: once each statement the intake runs has
// been seen, a delivery (its duplicate check, its transaction, River's
// insert) parses no SQL at all, and commits once. Before, database/sql
// over modernc.org/sqlite parsed every statement of every delivery.
func TestIntakeParsesStatementsOnce(t *testing.T) {
	s, err := Open(context.Background(), Options{StateDir: t.TempDir(), Logger: quiet(), ResyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err := s.Queue(newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	stats := &s.db.(*sqliteDB).stats
	deliver := func(i int) {
		t.Helper()
		d := fmt.Sprintf("delivery-%d", i)
		var replay webhook.ReplayKey
		replay[0], replay[1] = byte(i), byte(i>>8)
		if r := q.Admits(d, replay); r != webhook.Queued {
			t.Fatalf("delivery %d admitted as %v", i, r)
		}
		// Every other delivery replaces the work of the one before.
		j := webhook.Job{Key: webhook.Key{Kind: webhook.KindPR, Repo: "o/r", PR: 1 + i/2}, Event: "pull_request",
			Delivery: d, Replay: replay, Payload: []byte(`{"n":1}`)}
		if r := q.EnqueueAll([]webhook.Job{j}); r != webhook.Queued && r != webhook.Replaced {
			t.Fatalf("delivery %d: %v", i, r)
		}
	}
	// Warm every connection: the readers are a pool, so each may be new.
	for i := range 4 * sqliteReaders {
		deliver(i)
	}
	prepares, commits := stats.prepares.Load(), stats.commits.Load()
	const more = 40
	for i := range more {
		deliver(4*sqliteReaders + i)
	}
	if got := stats.prepares.Load() - prepares; got != 0 {
		t.Errorf("%d deliveries parsed %d statements, want none", more, got)
	}
	if got := stats.commits.Load() - commits; got != more {
		t.Errorf("%d deliveries one after another committed %d transactions, want %d", more, got, more)
	}
}
