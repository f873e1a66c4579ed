package ghapi

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sync"
)

// etagCache is a bounded, least-recently-used map from a GET request to
// the last 200 response GitHub gave for it and its ETag. GitHub answers a
// matching If-None-Match with 304, which does not count against the rate
// limit; the cached body then stands in for the reply.
type etagCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *etagEntry, most recent first
	byKey map[string]*list.Element
}

type etagEntry struct {
	key    string
	etag   string
	header http.Header
	body   []byte
}

func newETagCache(max int) *etagCache {
	return &etagCache{max: max, order: list.New(), byKey: make(map[string]*list.Element)}
}

// etagKey identifies a response: the URL and who asked. Two credentials may
// see different things at one URL, so the credential is part of the key,
// hashed so that tokens do not sit in the cache's keys.
func etagKey(req *http.Request) string {
	h := sha256.New()
	h.Write([]byte(req.Header.Get("Authorization")))
	h.Write([]byte{0})
	h.Write([]byte(req.Header.Get("Accept")))
	return req.URL.String() + " " + hex.EncodeToString(h.Sum(nil))
}

func (c *etagCache) get(key string) *etagEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*etagEntry)
}

func (c *etagCache) put(key string, e *etagEntry) {
	e.key = key
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*etagEntry).key)
	}
}

func (c *etagCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
