package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// Class is the outcome of checking one reference. Every failure has exactly
// one class, so that a report (and a policy deciding on it) can act on it:
// a missing image needs a push or a fixed reference, an authorization
// failure needs credentials, a rate limit or transport failure needs a
// retry later, and a policy failure needs the reference changed.
type Class string

const (
	// ClassOK: the image exists and meets the policy.
	ClassOK Class = "ok"
	// ClassNotFound: the registry says the repository or manifest does not
	// exist (404, MANIFEST_UNKNOWN, NAME_UNKNOWN).
	ClassNotFound Class = "not_found"
	// ClassUnauthorized: the registry refused access (401, 403, or a token
	// service refusing the credentials). The image may well exist.
	ClassUnauthorized Class = "unauthorized"
	// ClassRateLimited: the registry kept answering 429 after every retry.
	ClassRateLimited Class = "rate_limited"
	// ClassTransport: anything else that kept us from an answer: timeouts,
	// connection and TLS errors, 5xx responses, malformed responses.
	ClassTransport Class = "transport"
	// ClassPolicy: the image was checked, or need not be, and breaks a rule of
	// the policy: an unpinned tag, a registry not allowed, an index where
	// a single manifest is needed, a missing label or platform, or a
	// reference that does not parse.
	ClassPolicy Class = "policy"
)

// Classes lists every class, ok first, in the order reports count them.
var Classes = []Class{ClassOK, ClassNotFound, ClassUnauthorized, ClassRateLimited, ClassTransport, ClassPolicy}

// Classify puts an error from a registry request into its class and says
// what happened in words a catalog maintainer can act on. Everything that
// talks to registries (the image check, catalog assembly, publishing) uses
// it, so that their failures read alike. Messages never quote request
// headers or bodies sent, so credentials cannot leak through them.
func Classify(err error) (Class, string) {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return classifyHTTP(terr)
	}
	var refused *egress.RefusedError
	if errors.As(err, &refused) {
		// The rule's own words: which kind of address and how to allow
		// it, never what the target answered, its address or port.
		return ClassPolicy, refused.Error()
	}
	var perr *egress.ProxyError
	if errors.As(err, &perr) {
		// The operator's to fix, not the change's: the check waits.
		return ClassTransport, perr.Error()
	}
	var berr *BreakerError
	if errors.As(err, &berr) {
		return ClassTransport, berr.Error()
	}
	// Not asked in this try, for the process's breaker (Hosts): the check
	// waits, naming the host.
	var oerr *HostOpenError
	if errors.As(err, &oerr) {
		return ClassTransport, oerr.Error()
	}
	var busy *HostBusyError
	if errors.As(err, &busy) {
		return ClassTransport, busy.Error()
	}
	var cerr *CredentialError
	if errors.As(err, &cerr) {
		return ClassUnauthorized, cerr.Error()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTransport, "the registry did not answer in time"
	case errors.Is(err, context.Canceled):
		return ClassTransport, "the check was cancelled"
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return ClassTransport, "the registry did not answer in time"
	}
	var uerr *url.Error
	if errors.As(err, &uerr) || nerr != nil {
		return ClassTransport, unreachable(err, uerr)
	}
	// The library's text quotes what the registry sent; it is logged,
	// not shown (see Explain).
	return ClassTransport, "unusable answer from the registry"
}

func classifyHTTP(e *transport.Error) (Class, string) {
	status := fmt.Sprintf("%d %s", e.StatusCode, http.StatusText(e.StatusCode))
	// Access is decided first: a 401 or 403, or an error code saying
	// access was denied, is about access even if the status or another
	// code says the name is unknown (some registries answer requests for
	// private repositories that way).
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ClassUnauthorized, "the registry refused access (" + status + "); check the credentials for it"
	}
	for _, d := range e.Errors {
		switch d.Code {
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return ClassUnauthorized, "the registry refused access (" + status + ", " + string(d.Code) + "); check the credentials for it"
		}
	}
	switch e.StatusCode {
	case http.StatusNotFound:
		return ClassNotFound, "no such image in the registry (" + status + detail(e) + ")"
	case http.StatusTooManyRequests:
		return ClassRateLimited, "the registry is rate limiting requests (" + status + ") and kept doing so after every retry"
	}
	for _, d := range e.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode, transport.BlobUnknownErrorCode:
			return ClassNotFound, "no such image in the registry (" + status + ", " + string(d.Code) + ")"
		case transport.TooManyRequestsErrorCode:
			return ClassRateLimited, "the registry is rate limiting requests (" + status + ", " + string(d.Code) + ")"
		}
	}
	return ClassTransport, "the registry answered " + status + detail(e)
}

// unreachable says why a registry could not be reached, naming its host
// but not the address dialled or anything a server sent: a finding about
// a host a pull request named must not work as a port scanner.
func unreachable(err error, uerr *url.Error) string {
	msg := "could not reach the registry"
	if uerr != nil {
		if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
			msg += " " + u.Host
		}
	}
	var dnsErr *net.DNSError
	var rh tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &dnsErr):
		return msg + ": its name does not resolve"
	case errors.Is(err, syscall.ECONNREFUSED):
		return msg + ": the connection was refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return msg + ": the connection was closed"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return msg + ": there is no route to it"
	case errors.As(err, &rh):
		return msg + ": it did not answer with TLS (a plain-HTTP registry is reached with --insecure-registry)"
	case errors.As(err, &unknownCA):
		return msg + ": its TLS certificate is not trusted (" + unknownCA.Error() + ")"
	case errors.As(err, &badName):
		return msg + ": its TLS certificate is not trusted (" + badName.Error() + ")"
	case errors.As(err, &invalid):
		return msg + ": its TLS certificate is not trusted (" + invalid.Error() + ")"
	}
	return msg + ": the connection failed"
}

// detail is the registry's error code, when it sent one.
func detail(e *transport.Error) string {
	if len(e.Errors) == 0 {
		return ""
	}
	return ", " + string(e.Errors[0].Code)
}

// redactError drops query strings and user info from URLs in errors that
// quote them. Registry URLs carry no secrets themselves, but a token
// service URL may, and errors end up in logs.
func redactError(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Sprintf("%s %s: %v", uerr.Op, redactURL(uerr.URL), uerr.Err)
	}
	return err.Error()
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<url>"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// CredentialError is a failure to read the credentials for a registry.
type CredentialError struct {
	Registry string
	Err      error
}

func (e *CredentialError) Error() string {
	return fmt.Sprintf("could not read the credentials for %s: %v", e.Registry, e.Err)
}

func (e *CredentialError) Unwrap() error { return e.Err }
