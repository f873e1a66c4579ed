package registry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

func TestClassify(t *testing.T) {
	diag := func(status int, codes ...transport.ErrorCode) error {
		e := &transport.Error{StatusCode: status}
		for _, c := range codes {
			e.Errors = append(e.Errors, transport.Diagnostic{Code: c})
		}
		return fmt.Errorf("HEAD: %w", e)
	}
	tests := []struct {
		err  error
		want Class
	}{
		{diag(404), ClassNotFound},
		{diag(404, transport.ManifestUnknownErrorCode), ClassNotFound},
		{diag(400, transport.NameUnknownErrorCode), ClassNotFound},
		{diag(200, transport.ManifestUnknownErrorCode), ClassNotFound},
		{diag(401), ClassUnauthorized},
		{diag(403), ClassUnauthorized},
		// Auth wins over "unknown": never call an auth failure missing.
		{diag(401, transport.NameUnknownErrorCode), ClassUnauthorized},
		{diag(403, transport.ManifestUnknownErrorCode), ClassUnauthorized},
		{diag(404, transport.DeniedErrorCode), ClassUnauthorized},
		{diag(400, transport.DeniedErrorCode, transport.NameUnknownErrorCode), ClassUnauthorized},
		{diag(429), ClassRateLimited},
		{diag(400, transport.TooManyRequestsErrorCode), ClassRateLimited},
		{diag(500), ClassTransport},
		{diag(503, transport.UnavailableErrorCode), ClassTransport},
		{&CredentialError{Registry: "quay.io", Err: errors.New("bad file")}, ClassUnauthorized},
		{&timeoutError{method: "HEAD", url: "https://quay.io/v2/", after: time.Second}, ClassTransport},
		{context.DeadlineExceeded, ClassTransport},
		{&url.Error{Op: "Head", URL: "https://quay.io/v2/x?token=abc", Err: syscall.ECONNREFUSED}, ClassTransport},
		{errors.New("HEAD https://quay.io/v2/a/manifests/b: response did not include Content-Type header"), ClassTransport},
	}
	for _, tt := range tests {
		got, msg := Classify(tt.err)
		if got != tt.want || msg == "" {
			t.Errorf("Classify(%v) = %s %q, want %s", tt.err, got, msg, tt.want)
		}
	}
	// A registry that cannot be reached is named by its host alone: no
	// query string (where tokens travel), no user info, no address
	// dialled, nothing a server said.
	for _, tt := range []struct {
		err  error
		want string
	}{
		{io.EOF, "could not reach the registry auth.example.com: the connection was closed"},
		{&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8443}, Err: syscall.ECONNREFUSED},
			"could not reach the registry auth.example.com: the connection was refused"},
		{&net.DNSError{Err: "no such host", Name: "auth.example.com", IsNotFound: true}, "could not reach the registry auth.example.com: its name does not resolve"},
		{tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"},
			"could not reach the registry auth.example.com: it did not answer with TLS (a plain-HTTP registry is reached with --insecure-registry)"},
		{errors.New("something else at 10.0.0.5:8443"), "could not reach the registry auth.example.com: the connection failed"},
	} {
		_, msg := Classify(&url.Error{Op: "Get", URL: "https://user:pw@auth.example.com/token?scope=x&token=abc", Err: tt.err})
		if msg != tt.want {
			t.Errorf("message %q, want %q", msg, tt.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{"-5", 0, true},
		{"Sat, 01 Mar 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: 5 * time.Second, Factor: 2}
	tests := []struct {
		n      int
		r      float64
		want   time.Duration
		reason string
	}{
		{1, 0, 500 * time.Millisecond, "half is fixed"},
		{1, 1, time.Second, "the other half is random"},
		{2, 1, 2 * time.Second, "doubles"},
		{3, 0.5, 3 * time.Second, "4 s, jittered to 3/4"},
		{4, 1, 5 * time.Second, "capped"},
		{10, 0, 2500 * time.Millisecond, "capped, then jittered"},
	}
	for _, tt := range tests {
		if got := b.wait(tt.n, tt.r); got != tt.want {
			t.Errorf("wait(%d, %v) = %v, want %v (%s)", tt.n, tt.r, got, tt.want, tt.reason)
		}
	}
}

func TestTemporary(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&timeoutError{}, true},
		{&url.Error{Op: "Get", URL: "x", Err: syscall.ECONNRESET}, true},
		{&url.Error{Op: "Get", URL: "x", Err: syscall.ECONNREFUSED}, true},
		{io.ErrUnexpectedEOF, true},
		{errors.New("http: server gave HTTP response to HTTPS client"), false},
		{errors.New("x509: certificate signed by unknown authority"), false},
	}
	for _, tt := range tests {
		if got := temporary(tt.err); got != tt.want {
			t.Errorf("temporary(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
