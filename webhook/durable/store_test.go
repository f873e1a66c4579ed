package durable

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// TestStateVersions: a fresh state is created, one an older version wrote
// is migrated (River's tables included), and one a newer version wrote is
// refused with both versions named.
func TestStateVersions(t *testing.T) {
	ctx := context.Background()

	t.Run("older River tables are migrated", func(t *testing.T) {
		dir := t.TempDir()
		d, err := openSQLite(dir)
		if err != nil {
			t.Fatal(err)
		}
		m, err := rivermigrate.New(riversqlite.New(d.pool), nil)
		if err != nil {
			t.Fatal(err)
		}
		// A state from an older River: its tables at an early version.
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{TargetVersion: 4}); err != nil {
			t.Fatal(err)
		}
		d.close()
		s := openSQLiteState(t, dir, Options{})
		defer s.Close()
		m, _ = rivermigrate.New(riversqlite.New(s.db.(*sqliteDB).pool), nil)
		got, err := m.ExistingVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all := m.AllVersions()
		if len(got) != len(all) {
			t.Errorf("River's tables at %d versions after Open, want all %d", len(got), len(all))
		}
		// And the queue works on it.
		r := newRecorder()
		q := startQueue(t, s, r)
		defer stopQueue(t, q)
		q.Enqueue(prJob(1, "d1"))
		r.wait(t, 1, 10*time.Second)
	})

	t.Run("a newer state is refused", func(t *testing.T) {
		dir := t.TempDir()
		s := openSQLiteState(t, dir, Options{})
		if err := inTx(ctx, s.db, func(t tx) error {
			_, err := t.exec(ctx, `UPDATE catalogbot_meta SET value = '99' WHERE name = 'schema_version'`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err := Open(ctx, Options{StateDir: dir, Logger: quiet()})
		if err == nil || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "up to 1") {
			t.Errorf("Open of a newer state: %v; want a refusal naming versions 99 and 1", err)
		}
	})

	t.Run("a second process on one file is refused", func(t *testing.T) {
		dir := t.TempDir()
		s := openSQLiteState(t, dir, Options{})
		defer s.Close()
		_, err := Open(ctx, Options{StateDir: dir, Logger: quiet()})
		if err == nil || !strings.Contains(err.Error(), "in use by another catalogbot serve") {
			t.Errorf("a second Open: %v; want a refusal", err)
		}
	})
}
