package registrytest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Tarpit accepts connections on 127.0.0.1 and never sends a byte: a
// registry behind a hung proxy, or one that stalls on purpose. Where
// Hangup shows a client a dead host at once, Tarpit shows whether it
// gives up by its own deadline.
type Tarpit struct {
	// Addr is the tarpit's host:port, Port its port.
	Addr, Port string
	conns      atomic.Int64
}

// Conns is how many connections the tarpit accepted.
func (tp *Tarpit) Conns() int { return int(tp.conns.Load()) }

// NewTarpit starts a tarpit for the test and closes it, and every
// connection it holds, when the test ends.
func NewTarpit(t testing.TB) *Tarpit {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &Tarpit{Addr: ln.Addr().String()}
	_, tp.Port, _ = net.SplitHostPort(tp.Addr)
	var mu sync.Mutex
	var open []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tp.conns.Add(1)
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	return tp
}
