package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/webhook"
)

// memo is a map that remembers a bounded number of entries, forgetting the
// oldest first, safe for concurrent use; its zero value is empty. The App's
// records of what GitHub told it in deliveries (who edited a comment, when
// a head was pushed, when a pending check is tried again) are memos: a
// forgotten entry fails closed, as after a restart, so a flood of
// deliveries costs memory only up to the bound.
//
// A memo given a store (persist) keeps its entries there instead, as JSON
// under its namespace, so that they outlive the process and every replica
// reads the same; the store's own expiry bounds them then. An entry the
// store cannot read or write is treated as unknown, which fails closed.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	m     map[K]V
	order []K

	store webhook.Facts
	ns    string
	fail  func(error)
}

// storeTimeout bounds one read or write of a stored memo.
const storeTimeout = 10 * time.Second

// persist makes the memo keep its entries in f under namespace ns; fail
// is told of the errors, which otherwise read as a forgotten entry.
func (c *memo[K, V]) persist(f webhook.Facts, ns string, fail func(error)) {
	c.store, c.ns, c.fail = f, ns, fail
}

// storeKey spells k for the store: %v of the key struct, whose fields
// (repository, number, SHA or id) hold no spaces or braces of their own.
func storeKey[K comparable](k K) string { return fmt.Sprintf("%v", k) }

// update sets k's entry to what update returns from the old one (seen says
// whether there was one); update's false leaves the entry as it was. Past
// max entries the oldest is forgotten.
func (c *memo[K, V]) update(k K, max int, update func(old V, seen bool) (V, bool)) {
	if c.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		err := c.store.Update(ctx, c.ns, storeKey(k), func(raw []byte, seen bool) ([]byte, bool) {
			var old V
			if seen && json.Unmarshal(raw, &old) != nil {
				old, seen = *new(V), false
			}
			v, ok := update(old, seen)
			if !ok {
				return nil, false
			}
			b, err := json.Marshal(v)
			return b, err == nil
		})
		if err != nil && c.fail != nil {
			c.fail(err)
		}
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[K]V)
	}
	old, seen := c.m[k]
	v, ok := update(old, seen)
	if !ok {
		return
	}
	if !seen {
		c.order = append(c.order, k)
		if len(c.order) > max {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.m[k] = v
}

// get is k's entry.
func (c *memo[K, V]) get(k K) (V, bool) {
	if c.store != nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		var v V
		raw, ok, err := c.store.Get(ctx, c.ns, storeKey(k))
		if err != nil {
			if c.fail != nil {
				c.fail(err)
			}
			return v, false
		}
		if !ok || json.Unmarshal(raw, &v) != nil {
			return *new(V), false
		}
		return v, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}
