package timeout

import (
	"net/http"
	"sync"
	"time"
)

// Request is a request waiting for its registry's response headers.
type Request struct {
	Host   string
	Method string
	What   string // describe of the path
	Since  time.Time
}

var inflight struct {
	sync.Mutex
	next int
	reqs map[int]Request
}

func track(req *http.Request) (done func()) {
	inflight.Lock()
	if inflight.reqs == nil {
		inflight.reqs = map[int]Request{}
	}
	id := inflight.next
	inflight.next++
	inflight.reqs[id] = Request{Host: req.URL.Host, Method: req.Method, What: describe(req.URL.Path), Since: time.Now()}
	inflight.Unlock()
	return func() {
		inflight.Lock()
		delete(inflight.reqs, id)
		inflight.Unlock()
	}
}

// Oldest is the request of this process that has waited longest for its
// registry, and how many are waiting; ok is false when none is.
func Oldest() (r Request, waiting int, ok bool) {
	inflight.Lock()
	defer inflight.Unlock()
	for _, q := range inflight.reqs {
		if !ok || q.Since.Before(r.Since) {
			r, ok = q, true
		}
	}
	return r, len(inflight.reqs), ok
}
