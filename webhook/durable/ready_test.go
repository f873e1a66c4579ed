package durable

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
)

// TestStateFileRefused: a state file that is there but holds no SQLite
// database (left empty by a full disk, or some other file) is refused at
// start, naming the file, rather than taken for a new, empty state.
func TestStateFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"zero-length", "", "is empty"},
		{"foreign", "PGDMP\x00\x01 a PostgreSQL dump, say", "not a SQLite database"},
		{"short", "SQLite", "not a SQLite database"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), Options{StateDir: dir, Logger: quiet()})
			if err == nil {
				s.Close()
				t.Fatal("Open took the file for a state")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v; want it to name %s and say %q", err, path, tc.want)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Error("the file was changed")
			}
		})
	}
	// A state Open made itself opens again.
	dir := t.TempDir()
	openSQLiteState(t, dir, Options{}).Close()
	openSQLiteState(t, dir, Options{}).Close()
}

// TestStateReady: the state is ready while a write succeeds; a failed
// write makes it not ready, with a reason, and the answer is kept for a
// few seconds.
func TestStateReady(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := openSQLiteState(t, t.TempDir(), Options{Now: clock})
	if err := s.Ready(); err != nil {
		t.Fatalf("fresh state not ready: %v", err)
	}
	s.Close() // every write fails from now on, as with the database gone
	if err := s.Ready(); err != nil {
		t.Fatalf("the answer of a second ago was not kept: %v", err)
	}
	mu.Lock()
	now = now.Add(readyTTL)
	mu.Unlock()
	err := s.Ready()
	var nr *webhook.NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "state") {
		t.Fatalf("Ready with the database closed = %v, want not ready for the state", err)
	}
}

// TestPostgresStoppedIsNotReady: a replica whose PostgreSQL is out of
// reach (here, the connection cut) is not ready, and finds out within a
// probe's bound.
func TestPostgresStoppedIsNotReady(t *testing.T) {
	dbURL := durabletest.Postgres(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = p.ln.Addr().String()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := openPostgresState(t, viaProxy.String(), Options{Now: clock})
	defer s.Close()
	if err := s.Ready(); err != nil {
		t.Fatalf("not ready on a live database: %v", err)
	}
	p.close()
	mu.Lock()
	now = now.Add(readyTTL)
	mu.Unlock()
	start := time.Now()
	err = s.Ready()
	var nr *webhook.NotReadyError
	if !errors.As(err, &nr) {
		t.Fatalf("Ready with the database cut off = %v, want not ready", err)
	}
	if took := time.Since(start); took > readyTimeout+time.Second {
		t.Errorf("the probe took %s, beyond its bound %s", took, readyTimeout)
	}
}
