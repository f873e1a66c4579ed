package reconcile

import "sync"

// memo is a map that remembers a bounded number of entries, forgetting the
// oldest first, safe for concurrent use; its zero value is empty. The App's in-memory records of what
// GitHub told it in deliveries (who edited a comment, when a head was
// pushed) are memos: a forgotten entry fails closed, as after a restart,
// so a flood of deliveries costs memory only up to the bound.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	m     map[K]V
	order []K
}

// update sets k's entry to what update returns from the old one (seen says
// whether there was one); update's false leaves the entry as it was. Past
// max entries the oldest is forgotten.
func (c *memo[K, V]) update(k K, max int, update func(old V, seen bool) (V, bool)) {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}
