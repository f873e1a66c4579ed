package gitcache

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// A cache whose file system is full (or turned read-only) fails every
// fetch, yet nothing in it is broken: once space is back, fetches work
// again. While it lasts the service cannot check anything, and readiness
// must say so; a probe write is what tells, since free space as the file
// system reports it says nothing of quotas or of a read-only mount.

const (
	// probeBytes is what the probe writes: less than any fetch of a
	// commit with its trees needs, so that a cache that cannot take it
	// surely cannot take a fetch.
	probeBytes = 64 << 10
	// probeTTL is how long a probe's answer is kept: /readyz is asked
	// every few seconds by every load balancer.
	probeTTL = 3 * time.Second
)

// probe is the kept answer of the last write probe.
type probe struct {
	mu  sync.Mutex
	at  time.Time
	err error
	now func() time.Time // nil is time.Now; tests replace it
}

func (p *probe) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// Writable reports whether the cache's directory takes a write now:
// probeBytes written to a file of its own there, synced and removed. Its
// answer is kept for a few seconds. It is safe to call from any goroutine.
func (c *Cache) Writable() error {
	p := &c.probe
	t := p.clock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && t.Sub(p.at) >= 0 && t.Sub(p.at) < probeTTL {
		return p.err
	}
	p.at, p.err = t, writeProbe(c.dir)
	return p.err
}

// writeProbe writes, syncs and removes a probe file in dir. The file
// starts with a dot, which no repository's directory does (repoName).
func writeProbe(dir string) (err error) {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return fmt.Errorf("git cache: %s cannot be written: %w", dir, err)
	}
	defer func() {
		cerr := f.Close()
		if rerr := os.Remove(f.Name()); err == nil && rerr != nil {
			err = rerr
		}
		if err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			err = fmt.Errorf("git cache: %s cannot be written: %w", dir, err)
		}
	}()
	if _, err := f.Write(make([]byte, probeBytes)); err != nil {
		return err
	}
	return f.Sync()
}
