package durable

import (
	"context"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// Facts are the App's records kept in the state's catalogbot_fact table.
// It implements webhook.Facts.
type Facts struct {
	db  db
	now func() time.Time
}

var _ webhook.Facts = (*Facts)(nil)

// Namespaces the queue keeps its own facts under; the App's are its own.
const (
	nsDelivery = "q.delivery" // delivery ids seen, for the dedupe TTL
	nsReplay   = "q.replay"   // signed bodies' work, for the replay window
)

// Update implements webhook.Facts. The row is locked (PostgreSQL) or the
// database is (SQLite) from the read to the write.
func (f *Facts) Update(ctx context.Context, ns, key string, fn func(old []byte, seen bool) ([]byte, bool)) error {
	return inTx(ctx, f.db, func(t tx) error { return updateFact(ctx, f.db, t, ns, key, f.now(), fn) })
}

// Get implements webhook.Facts. It reads on the state's readers.
func (f *Facts) Get(ctx context.Context, ns, key string) ([]byte, bool, error) {
	v, found, err := getFact(ctx, f.db.reader(), "", ns, key)
	return []byte(v), found, err
}

// List implements webhook.Facts. It reads on the state's readers.
func (f *Facts) List(ctx context.Context, ns string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := func(t querier) error {
		return t.each(ctx, `SELECT key, value FROM catalogbot_fact WHERE ns = $1`, func(r scanner) error {
			var k, v string
			if err := r.Scan(&k, &v); err != nil {
				return err
			}
			out[k] = []byte(v)
			return nil
		}, ns)
	}(f.db.reader())
	if err != nil {
		return nil, fmt.Errorf("state: listing %s: %w", ns, err)
	}
	return out, nil
}

func getFact(ctx context.Context, t querier, lock, ns, key string) (string, bool, error) {
	var v string
	err := t.queryRow(ctx, `SELECT value FROM catalogbot_fact WHERE ns = $1 AND key = $2`+lock, ns, key).Scan(&v)
	switch {
	case errNoRows(err):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("state: reading %s %s: %w", ns, key, err)
	}
	return v, true, nil
}

func updateFact(ctx context.Context, d db, t tx, ns, key string, now time.Time, fn func([]byte, bool) ([]byte, bool)) error {
	old, seen, err := getFact(ctx, t, d.forUpdate(), ns, key)
	if err != nil {
		return err
	}
	v, ok := fn([]byte(old), seen)
	if !ok {
		return nil
	}
	return putFact(ctx, t, ns, key, string(v), now)
}

func putFact(ctx context.Context, t tx, ns, key, v string, now time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO catalogbot_fact (ns, key, value, at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, at = excluded.at`, ns, key, v, now.UnixNano())
	if err != nil {
		return fmt.Errorf("state: writing %s %s: %w", ns, key, err)
	}
	return nil
}

// sweepFacts forgets the facts of ns last written before cutoff.
func sweepFacts(ctx context.Context, t tx, ns string, cutoff time.Time) error {
	_, err := t.exec(ctx, `DELETE FROM catalogbot_fact WHERE ns = $1 AND at < $2`, ns, cutoff.UnixNano())
	return err
}
