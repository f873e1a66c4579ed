package registry

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Unanswered says whether err means the registry could not be asked: it
// kept rate limiting (ClassRateLimited), or it timed out, failed with a
// server error or could not be reached (ClassTransport). A check that
// meets such an error has not learnt anything about the image and may
// learn it later, so it is pending rather than judged.
//
// Every other error is an answer, or the caller's own: a missing image, a
// refusal (ClassUnauthorized: retrying does not bring credentials), a
// policy refusal, and also errors Classify only puts in ClassTransport
// because they name no other class, such as an image that is not a
// catalog. Those are judged, so a pull request cannot hold a check open
// by naming something that is not there.
func Unanswered(err error) (Class, bool) {
	class, _ := Classify(err)
	switch class {
	case ClassRateLimited:
		return class, true
	case ClassTransport:
	default:
		return class, false
	}
	// A registry that timed out earlier in the pass, or whose breaker
	// in the process is open, or that was busy, was not asked.
	var (
		berr *BreakerError
		oerr *HostOpenError
		busy *HostBusyError
	)
	if errors.As(err, &berr) || errors.As(err, &oerr) || errors.As(err, &busy) {
		return class, true
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		return class, terr.StatusCode >= http.StatusInternalServerError || terr.StatusCode == http.StatusRequestTimeout
	}
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &nerr): // *url.Error and *net.OpError among them: no answer came
		return class, true
	}
	return class, false
}
