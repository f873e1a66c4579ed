// Package timeout is the HTTP transport under every registry client of
// catalogbot: it bounds how long a registry may take to accept a
// connection, finish the TLS handshake and start its answer, and it turns a
// registry that never answers into an error that names the registry and
// says it is a transport failure. It also keeps the requests in flight, so
// that a terminal can show what a command is waiting on.
//
// Without it a registry that accepts a connection and then stays silent
// holds a command forever: Go's default transport bounds the dial and the
// TLS handshake but not the wait for a response.
package timeout

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds each of the dial, the TLS handshake and the wait
// for response headers. A registry that is slow to send a large blob is not
// cut off: the body has no deadline, only its first byte.
const DefaultTimeout = 30 * time.Second

// EnvTimeout overrides DefaultTimeout for all three waits, as a Go duration
// ("200ms"). It exists for tests that need a silent registry to fail fast;
// production runs keep the default.
const EnvTimeout = "CATALOGBOT_REGISTRY_TIMEOUT"

// Timeout is the wait the transport allows: DefaultTimeout, or EnvTimeout
// when it holds a positive duration.
func Timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(EnvTimeout)); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

var (
	mu         sync.Mutex
	transports = map[time.Duration]*Transport{}
)

// Default is the shared transport for the current Timeout, so connections
// are reused across the clients of one run.
func Default() *Transport {
	d := Timeout()
	mu.Lock()
	defer mu.Unlock()
	t, ok := transports[d]
	if !ok {
		t = New(d)
		transports[d] = t
	}
	return t
}

// Transport bounds the waits of a cloned http.DefaultTransport and wraps
// its errors in *Error.
type Transport struct {
	// Base is the bounded transport; callers may tune its connection
	// pool (MaxIdleConnsPerHost) or clone it to change TLS settings.
	Base    *http.Transport
	timeout time.Duration
}

// New returns a transport whose dial, TLS handshake and response headers
// each must complete within d.
func New(d time.Duration) *Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: d, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = d
	t.ResponseHeaderTimeout = d
	return &Transport{Base: t, timeout: d}
}

// WithBase is t over another base, such as a clone of t.Base that skips
// certificate verification.
func (t *Transport) WithBase(base *http.Transport) *Transport {
	return &Transport{Base: base, timeout: t.timeout}
}

// RoundTrip sends the request, recording it as in flight until its
// response headers arrive.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	done := track(req)
	resp, err := t.Base.RoundTrip(req)
	done()
	if err != nil {
		return nil, &Error{Host: req.URL.Host, Method: req.Method, Path: req.URL.Path, Wait: t.timeout, Err: err}
	}
	return resp, nil
}

// Error is a request that got no response from its registry.
type Error struct {
	Host, Method, Path string
	Wait               time.Duration // the timeout in force
	Err                error
}

func (e *Error) Error() string {
	var ne net.Error
	if errors.As(e.Err, &ne) && ne.Timeout() {
		return fmt.Sprintf("transport: registry %s did not answer %s %s within %s: %v", e.Host, e.Method, describe(e.Path), e.Wait, e.Err)
	}
	return fmt.Sprintf("transport: registry %s: %v", e.Host, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Timeout reports a wait that ran out, so callers that classify by
// net.Error see a transport failure.
func (e *Error) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// Temporary is false for a timeout: a registry silent for the whole wait
// is not retried, so a command ends within its timeouts rather than a
// multiple of them. Other failures keep what the cause says.
func (e *Error) Temporary() bool {
	if e.Timeout() {
		return false
	}
	var te interface{ Temporary() bool }
	return errors.As(e.Err, &te) && te.Temporary()
}

// describe names what a registry API path asks for ("manifest
// team/catalog:v1", "blob team/catalog@sha256:…", "ping"), for messages a
// person reads.
func describe(path string) string {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return path
	}
	if rest == "" {
		return "ping"
	}
	for _, kind := range []string{"manifests", "blobs/uploads", "blobs", "tags/list"} {
		if repo, ref, ok := strings.Cut(rest, "/"+kind); ok {
			ref = strings.TrimPrefix(ref, "/")
			switch kind {
			case "manifests":
				sep := ":"
				if strings.Contains(ref, ":") {
					sep = "@"
				}
				return "manifest " + repo + sep + ref
			case "blobs":
				return "blob " + repo + "@" + shortDigest(ref)
			case "blobs/uploads":
				return "upload " + repo
			default:
				return "tags " + repo
			}
		}
	}
	return path
}

func shortDigest(d string) string {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || len(hex) <= 12 {
		return d
	}
	return alg + ":" + hex[:12]
}
