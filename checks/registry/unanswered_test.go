package registry

import (
	"context"
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

// TestUnanswered: only a registry that could not be asked leaves a check
// pending; answers, refusals and errors of the image itself are judged.
func TestUnanswered(t *testing.T) {
	status := func(code int, codes ...transport.ErrorCode) error {
		e := &transport.Error{StatusCode: code}
		for _, c := range codes {
			e.Errors = append(e.Errors, transport.Diagnostic{Code: c})
		}
		return fmt.Errorf("HEAD: %w", e)
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"429", status(429), true},
		{"TOOMANYREQUESTS", status(400, transport.TooManyRequestsErrorCode), true},
		{"503", status(503, transport.UnavailableErrorCode), true},
		{"500", status(500), true},
		{"408", status(408), true},
		{"a silent registry", &timeoutError{method: "HEAD", url: "https://quay.io/v2/", after: time.Second}, true},
		{"deadline", fmt.Errorf("pull: %w", context.DeadlineExceeded), true},
		{"refused", &url.Error{Op: "Head", URL: "https://quay.io/v2/", Err: syscall.ECONNREFUSED}, true},
		{"reset", &url.Error{Op: "Get", URL: "https://quay.io/v2/", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, true},
		{"cut short", fmt.Errorf("unpack: %w", io.ErrUnexpectedEOF), true},
		{"breaker open", fmt.Errorf("pull: %w", &BreakerError{Host: "quay.io"}), true},
		{"404", status(404), false},
		{"401", status(401), false},
		{"403 DENIED", status(403, transport.DeniedErrorCode), false},
		{"400", status(400), false},
		{"credentials", &CredentialError{Registry: "quay.io", Err: errors.New("bad file")}, false},
		{"not a catalog", errors.New(`render "x": image type could not be determined: image has no labels`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := Unanswered(tt.err); got != tt.want {
				t.Errorf("Unanswered(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
