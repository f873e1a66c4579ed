package registry

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// Explain is err, from a request to a registry, as a person can act on it:
// its failure class, and the registry host, what happened in Classify's
// words and what to do next:
//
//	not_found, "registry quay.io: no such image in the registry (404 Not Found, MANIFEST_UNKNOWN); check the repository and tag, or push the image"
//
// It never quotes the library's own text. go-containerregistry prints a
// registry's error details as Go values ("MANIFEST_UNKNOWN: manifest
// unknown; map[Tag:v9]", "[map[Action:pull ...]]") and may quote a response
// body, and a network error carries addresses and ports; on a pull request
// these would tell its author about hosts the service can reach. Whoever
// needs the cause logs err itself, at debug level.
//
// ok is false when err is not a registry failure at all (a catalog that
// does not load, a label missing): then its own text is the message.
func Explain(err error) (class Class, msg string, ok bool) {
	// A cancelled run learnt nothing about the registry.
	if !fromRegistry(err) || errors.Is(err, context.Canceled) {
		return "", "", false
	}
	class, what := Classify(err)
	where := "the registry"
	if host := hostOf(err); host != "" {
		where = "registry " + host
		// Classify names the host too, for callers that show its
		// words alone; here it is named once, up front.
		what = strings.Replace(what, "the registry "+host, "the registry", 1)
	}
	msg = where + ": " + what
	if todo := nextStep(class); todo != "" {
		msg += "; " + todo
	}
	return class, msg, true
}

// fromRegistry reports whether err comes from talking to a registry (or
// its token service): an HTTP error answer, a failed connection, a wait
// that ran out, or credentials that could not be read.
func fromRegistry(err error) bool {
	var (
		terr *transport.Error
		werr *timeout.Error
		uerr *url.Error
		nerr net.Error
		cerr *CredentialError
	)
	return errors.As(err, &terr) || errors.As(err, &werr) || errors.As(err, &uerr) || errors.As(err, &nerr) ||
		errors.As(err, &cerr) || errors.Is(err, context.DeadlineExceeded)
}

// hostOf is the registry err names, when it names one.
func hostOf(err error) string {
	var werr *timeout.Error
	if errors.As(err, &werr) && werr.Host != "" {
		return werr.Host
	}
	var terr *transport.Error
	if errors.As(err, &terr) && terr.Request != nil && terr.Request.URL != nil {
		return terr.Request.URL.Host
	}
	var cerr *CredentialError
	if errors.As(err, &cerr) {
		return cerr.Registry
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if u, perr := url.Parse(uerr.URL); perr == nil {
			return u.Host
		}
	}
	return ""
}

// nextStep says what to do about a failure of class. Classify's words
// for an authorization failure already name the credentials.
func nextStep(class Class) string {
	switch class {
	case ClassNotFound:
		return "check the repository and tag, or push the image"
	case ClassRateLimited:
		return "try again later, or use credentials with a higher limit"
	case ClassTransport:
		return "check the host name and that the registry is up, then try again"
	}
	return ""
}
