// Command catalogbot maintains OLM File-Based Catalog repositories. This
// package only wires flags to the libraries; the work happens in checks and
// the packages beside it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

// version is the release version, set at build time with
// -ldflags "-X main.version=...".
var version = "dev"

// commit is the commit the release was built from, set at build time with
// -ldflags "-X main.commit=..."; empty, catalogbot version falls back to
// the commit Go recorded, if it recorded one.
var commit = ""

// Exit statuses. Scripts and CI gate on these, so they never change:
// 1 is reserved for "the input is invalid", 2 for "could not tell".
const (
	exitOK      = 0
	exitInvalid = 1
	exitError   = 2
	// exitInterrupted is the shell's status for a command ended by
	// SIGINT (128+2); SIGTERM gets it too, since both mean "stopped on
	// request", not "failed".
	exitInterrupted = 130
	// exitRetry is rebuild's "could not tell, and a later run may":
	// a registry that was down, slow or rate limited, or a run past its
	// deadline. A scheduler retries it; 1 and 2 need a person.
	exitRetry = 3
)

func main() {
	os.Exit(runMain())
}

// runMain is main without the exit, so the tests can run the signal
// handling as the binary has it (TestMain).
func runMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal the default handling comes back, so a second
	// Ctrl-C ends a command that is slow to wind down.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	return code
}

// run executes the command line args and returns the exit status. Tests call
// it in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bi, _ := debug.ReadBuildInfo()
	return execute(ctx, &app{stdout: stdout, stderr: stderr, version: releaseVersion(version, bi), validate: fbc.Validate}, args)
}

func execute(ctx context.Context, a *app, args []string) int {
	cmd := newRootCmd(a)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil && ctx.Err() != nil {
		// Whatever failed after the cancellation failed because of it:
		// a request cut short is not a transport problem, and a
		// half-done run is not a verdict.
		fmt.Fprintln(a.stderr, "catalogbot: interrupted")
		return exitInterrupted
	}
	return exitStatus(err, a.stderr)
}

// errInvalid reports that the input was checked and found invalid. The
// command has printed its findings already, so nothing more is said.
var errInvalid = errors.New("invalid")

// retryError is a failure that a later run of a scheduled command may not
// meet: its exit status is exitRetry.
type retryError struct{ err error }

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }

// usageError is a command line the command cannot run: wrong arguments,
// unknown flags or flag values.
type usageError struct {
	cmd string // the command path, for the help hint
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(cmd, format string, args ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, args...)}
}

// exitStatus maps the error a command returned to the exit status, printing
// what the user needs to see. Anything that is neither nil nor errInvalid
// kept the command from reaching a verdict: usage and I/O errors alike.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errInvalid) {
		return exitInvalid
	}
	var re *retryError
	if errors.As(err, &re) {
		fmt.Fprintf(stderr, "catalogbot: %v\n", err)
		return exitRetry
	}
	fmt.Fprintf(stderr, "catalogbot: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd != "" {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ue.cmd)
	}
	return exitError
}
