package assemble

import (
	"context"
	"errors"
	"net"
	"net/url"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// Class is why a reference failed: the classes of checks/registry, so that a
// failed assembly and a failed image check read alike, plus ClassInvalid.
type Class = registry.Class

// ClassInvalid: the image was fetched but its content cannot be rendered,
// such as a catalog that does not load. The fix is in the image.
const ClassInvalid Class = "invalid"

// classify puts a reference's failure into its class. Access is decided
// before existence, as in checks/registry: a registry that answers 404 for
// a private repository together with DENIED is refusing access, and the
// image may well exist. A registry's failure is worded by
// registry.Explain, which names the host and what to do and leaves out the
// library's text (Failure.Err keeps it, for the log).
func classify(err error) (Class, string) {
	if class, msg, ok := registry.Explain(err); ok {
		return class, msg
	}
	msg := err.Error()
	var terr *transport.Error
	if errors.As(err, &terr) {
		return classOf(err), msg
	}
	var perr *name.ErrBadName
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return registry.ClassTransport, msg
	case errors.As(err, &perr), errors.Is(err, render.ErrNotAllowed):
		return registry.ClassPolicy, msg
	}
	var nerr net.Error
	var uerr *url.Error
	if errors.As(err, &nerr) || errors.As(err, &uerr) {
		return registry.ClassTransport, msg
	}
	var rerr *render.RefError
	if errors.As(err, &rerr) && rerr.Kind == render.KindImage {
		// Reached the image, but it is not one that can be rendered:
		// a reference opm refuses, or one without the catalog label.
		return registry.ClassPolicy, msg
	}
	return ClassInvalid, msg
}

// classOf is the class checks/registry gives a registry error.
func classOf(err error) Class {
	class, _ := registry.Classify(err)
	return class
}
