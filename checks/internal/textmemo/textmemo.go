// Package textmemo keeps values made from texts by the SHA-256 of the
// text: what a catalog document types to, or what a property value says,
// depends on its text alone, so a text met again need not be read again.
package textmemo

import (
	"crypto/sha256"
	"sync"
)

// Key is a text's key: its SHA-256.
type Key = [sha256.Size]byte

// Memo maps keys to values. With a bound above 0 it starts afresh when it
// holds that many values, which costs reading again and never a wrong
// answer; its zero value keeps every value. It is safe for concurrent use.
type Memo[V any] struct {
	mu     sync.Mutex
	max    int
	m      map[Key]V
	misses int
}

// New returns a memo of at most max values (0: no bound).
func New[V any](max int) *Memo[V] { return &Memo[V]{max: max} }

// Get returns the value kept for k.
func (c *Memo[V]) Get(k Key) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	if !ok {
		c.misses++
	}
	return v, ok
}

// Put keeps v for k.
func (c *Memo[V]) Put(k Key, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.max > 0 && len(c.m) >= c.max {
		c.m = map[Key]V{}
	}
	c.m[k] = v
}

// Misses counts the lookups that found nothing, for tests.
func (c *Memo[V]) Misses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.misses
}
