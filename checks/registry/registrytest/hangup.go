package registrytest

import (
	"errors"
	"net"
	"sync/atomic"
	"testing"
)

// Hangup is a registry host on 127.0.0.1 that accepts every connection
// and closes it at once, unread: a registry that cannot be reached, as a
// client sees one behind a broken load balancer. It counts connections.
type Hangup struct {
	// Host is host:port, the registry part of image references.
	Host  string
	conns atomic.Int64
}

// NewHangup starts a Hangup for the test and stops it when the test ends.
func NewHangup(t testing.TB) *Hangup {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &Hangup{Host: ln.Addr().String()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			h.conns.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				// A reset rather than an orderly close: no answer at all.
				tc.SetLinger(0)
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return h
}

// Ref is the image reference of repoAndTag on this host.
func (h *Hangup) Ref(repoAndTag string) string { return h.Host + "/" + repoAndTag }

// Conns is how many connections the host accepted.
func (h *Hangup) Conns() int { return int(h.conns.Load()) }
