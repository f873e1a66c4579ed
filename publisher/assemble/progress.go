package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// State is where a reference is in its assembly.
type State string

const (
	StateQueued    State = "queued"
	StateResolving State = "resolving"
	StateRendering State = "rendering"
	StateDone      State = "done"
	StateFailed    State = "failed"
)

// Event is a reference changing state.
type Event struct {
	Name  string
	Image string
	State State
	// Set with StateDone.
	Digest string
	Cached bool
	Bytes  int
	// Set with StateFailed.
	Err error
}

// IsTerminal reports whether f is a character device, the cue for a live
// display rather than log lines. It needs no terminal library: a redirect
// to a file or a pipe is what has to be told apart.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// LogProgress writes one line per finished reference, for logs and CI.
func LogProgress(w io.Writer) func(Event) {
	return func(e Event) {
		if line := finished(e); line != "" {
			fmt.Fprintf(w, "assemble: %s: %s\n", e.Name, line)
		}
	}
}

func finished(e Event) string {
	switch e.State {
	case StateDone:
		how := "rendered"
		if e.Cached {
			how = "cached"
		}
		if e.Digest != "" {
			return fmt.Sprintf("%s %s (%d bytes)", how, e.Digest, e.Bytes)
		}
		return fmt.Sprintf("%s (%d bytes)", how, e.Bytes)
	case StateFailed:
		// A cancelled run (Ctrl-C) stopped the reference; nothing is
		// known about its registry.
		if errors.Is(e.Err, context.Canceled) {
			return "interrupted"
		}
		class, _ := classify(e.Err)
		return fmt.Sprintf("failed (%s)", class)
	}
	return ""
}

// LiveProgress redraws a table with one line per reference on every
// change, for a terminal. Failures are summed up after the run by the
// error, so lines stay one row each.
func LiveProgress(w io.Writer) func(Event) {
	var (
		order []string
		lines = map[string]string{}
		drawn int
	)
	width := 0
	return func(e Event) {
		if _, ok := lines[e.Name]; !ok {
			order = append(order, e.Name)
			width = max(width, len(e.Name))
		}
		status := string(e.State)
		if line := finished(e); line != "" {
			status = line
		}
		lines[e.Name] = status
		var sb strings.Builder
		if drawn > 0 {
			fmt.Fprintf(&sb, "\x1b[%dA", drawn)
		}
		for _, n := range order {
			fmt.Fprintf(&sb, "\x1b[2K%-*s  %s\n", width, n, lines[n])
		}
		drawn = len(order)
		io.WriteString(w, sb.String())
	}
}
