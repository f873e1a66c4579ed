package registry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// answer is the error go-containerregistry makes of a registry's answer:
// status, body, and the request it answered.
func answer(t *testing.T, method, rawURL string, status int, body string) error {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Request: req, Header: http.Header{}}
	err = transport.CheckError(resp, http.StatusOK)
	if err == nil {
		t.Fatal("CheckError accepted the answer")
	}
	return err
}

// TestExplain maps the errors libraries return for registry failures to
// the messages people see. None quotes the library's text: Go values
// (map[...], [...]), response bodies, addresses and ports stay in the log.
func TestExplain(t *testing.T) {
	dial := func(addr string, cause error) error {
		return &url.Error{Op: "Get", URL: "https://" + addr + "/v2/", Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 8080}, Err: cause}}
	}
	tests := []struct {
		name  string
		err   error
		class registry.Class
		msg   string
	}{
		{"manifest unknown with detail",
			answer(t, "GET", "https://registry.example.com/v2/team/op/manifests/v9", 404,
				`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"v9"}}]}`),
			registry.ClassNotFound, "registry registry.example.com: no such image in the registry (404 Not Found, MANIFEST_UNKNOWN); check the repository and tag, or push the image"},
		{"unauthorized with access detail",
			answer(t, "GET", "https://registry.example.com/v2/team/op/manifests/v1", 401,
				`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Name":"team/op","Action":"pull"}]}]}`),
			registry.ClassUnauthorized, "registry registry.example.com: the registry refused access (401 Unauthorized); check the credentials for it"},
		{"denied",
			answer(t, "HEAD", "https://quay.io/v2/team/op/manifests/v1", 403, ""),
			registry.ClassUnauthorized, "registry quay.io: the registry refused access (403 Forbidden); check the credentials for it"},
		{"server error with a body",
			answer(t, "GET", "https://registry.example.com/v2/", 500, "<html>internal-db.corp:5432 refused</html>"),
			registry.ClassTransport, "registry registry.example.com: the registry answered 500 Internal Server Error; check the host name and that the registry is up, then try again"},
		{"rate limited",
			answer(t, "GET", "https://registry.example.com/v2/a/manifests/b", 429, `{"errors":[{"code":"TOOMANYREQUESTS","message":"slow down","detail":{"limit":100}}]}`),
			registry.ClassRateLimited, "registry registry.example.com: the registry is rate limiting requests (429 Too Many Requests) and kept doing so after every retry; try again later, or use credentials with a higher limit"},
		{"connection refused",
			dial("registry.internal:8080", os.NewSyscallError("connect", syscall.ECONNREFUSED)),
			registry.ClassTransport, "registry registry.internal:8080: could not reach the registry: the connection was refused; check the host name and that the registry is up, then try again"},
		{"no such host",
			&url.Error{Op: "Get", URL: "https://nowhere.example/v2/", Err: &net.DNSError{Err: "no such host", Name: "nowhere.example", IsNotFound: true}},
			registry.ClassTransport, "registry nowhere.example: could not reach the registry: its name does not resolve; check the host name and that the registry is up, then try again"},
		{"untrusted certificate",
			&url.Error{Op: "Get", URL: "https://self-signed.example/v2/", Err: &tls509{x509.UnknownAuthorityError{}}},
			registry.ClassTransport, "registry self-signed.example: could not reach the registry: its TLS certificate is not trusted (x509: certificate signed by unknown authority); check the host name and that the registry is up, then try again"},
		{"token service closed the connection",
			&url.Error{Op: "Get", URL: "https://user:pw@auth.example.com/token?scope=x&token=abc", Err: io.EOF},
			registry.ClassTransport, "registry auth.example.com: could not reach the registry: the connection was closed; check the host name and that the registry is up, then try again"},
		{"silent registry",
			fmt.Errorf("HEAD: %w", &timeout.Error{Host: "tarpit.example:5000", Method: "HEAD", Path: "/v2/", Wait: time.Second, Err: &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}}),
			registry.ClassTransport, "registry tarpit.example:5000: the registry did not answer in time; check the host name and that the registry is up, then try again"},
		{"credentials",
			&registry.CredentialError{Registry: "quay.io", Err: errors.New("credential helper docker-credential-pass not found")},
			registry.ClassUnauthorized, "registry quay.io: could not read the credentials for quay.io: credential helper docker-credential-pass not found"},
		{"deadline",
			context.DeadlineExceeded,
			registry.ClassTransport, "the registry: the registry did not answer in time; check the host name and that the registry is up, then try again"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, msg, ok := registry.Explain(tt.err)
			if !ok || class != tt.class || msg != tt.msg {
				t.Errorf("Explain(%v) =\n  %s, %q, %v\nwant\n  %s, %q", tt.err, class, msg, ok, tt.class, tt.msg)
			}
			for _, leak := range []string{"map[", "[map", "]]", "10.0.0.5", "internal-db", "token=", "pw@", "{\"", "dial tcp"} {
				if strings.Contains(msg, leak) {
					t.Errorf("Explain quotes %q: %s", leak, msg)
				}
			}
		})
	}
	if _, _, ok := registry.Explain(errors.New("the image has no catalog label")); ok {
		t.Error("Explain took an error that is not the registry's for one")
	}
}

// tls509 is a certificate error as crypto/tls wraps it.
type tls509 struct{ err error }

func (e *tls509) Error() string { return "tls: failed to verify certificate: " + e.err.Error() }
func (e *tls509) Unwrap() error { return e.err }
