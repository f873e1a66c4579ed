// Package egresstest holds the stand-ins of the egress tests: a resolver
// that maps names to fixed addresses (so that no test resolves an external
// name) and loopback servers that count the connections they accept. A
// host that never answers is registrytest.Tarpit.
package egresstest

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
)

// Resolver maps host names to addresses. A name it does not know does not
// resolve.
type Resolver map[string][]string

func (r Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// Server is an HTTP server on 127.0.0.1 that counts the connections it
// accepted.
type Server struct {
	// Addr is the server's host:port on 127.0.0.1, Port its port.
	Addr, Port string
	conns      atomic.Int64
}

// Conns is how many connections the server accepted.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Serve starts h on 127.0.0.1 for the test.
func Serve(t testing.TB, h http.Handler) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String()}
	_, s.Port, _ = net.SplitHostPort(s.Addr)
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}
