package timeout

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/v2/", "ping"},
		{"/v2/team/catalog/manifests/v1", "manifest team/catalog:v1"},
		{"/v2/team/catalog/manifests/sha256:0123456789abcdef", "manifest team/catalog@sha256:0123456789abcdef"},
		{"/v2/team/catalog/blobs/sha256:0123456789abcdef0123", "blob team/catalog@sha256:0123456789ab"},
		{"/v2/team/catalog/blobs/uploads/", "upload team/catalog"},
		{"/v2/team/catalog/tags/list", "tags team/catalog"},
		{"/token", "/token"},
	}
	for _, tt := range tests {
		if got := describe(tt.path); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestSilentServer checks that a server that accepts and never answers
// fails the request with an *Error that names the host, is a timeout and
// is not retried as temporary.
func TestSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	tr := New(50 * time.Millisecond)
	_, err = (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/v2/team/catalog/manifests/v1")
	var e *Error
	if !errors.As(err, &e) || !e.Timeout() || e.Temporary() {
		t.Fatalf("err = %#v, want a timeout *Error that is not temporary", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "transport: registry "+ln.Addr().String()+" did not answer GET manifest team/catalog:v1 within 50ms") {
		t.Errorf("message %q", msg)
	}
	if _, n, ok := Oldest(); ok || n != 0 {
		t.Errorf("%d requests still in flight", n)
	}
}

func TestTimeoutFromEnv(t *testing.T) {
	tests := []struct {
		env  string
		want time.Duration
	}{
		{"", DefaultTimeout},
		{"250ms", 250 * time.Millisecond},
		{"soon", DefaultTimeout},
		{"-1s", DefaultTimeout},
	}
	for _, tt := range tests {
		t.Setenv(EnvTimeout, tt.env)
		if got := Timeout(); got != tt.want {
			t.Errorf("%s=%q: Timeout() = %s, want %s", EnvTimeout, tt.env, got, tt.want)
		}
	}
}
