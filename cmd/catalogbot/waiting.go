package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/timeout"
	"github.com/catalogbot/catalogbot/publisher/assemble"
)

// waitingAfter is how long a request waits before the terminal shows it:
// a registry that answers in a moment needs no line.
const waitingAfter = 2 * time.Second

// showWaiting shows, on a terminal, the registry request the command has
// waited on longest ("waiting for quay.io (GET manifest team/catalog:v1)
// 12s"), redrawn every second, so a slow or silent registry is visible
// before the timeout ends the wait. Logs and CI get nothing extra. The
// returned stop clears the line.
func (a *app) showWaiting() (stop func()) {
	f, ok := a.stderr.(*os.File)
	if !ok || !assemble.IsTerminal(f) {
		return func() {}
	}
	t := time.NewTicker(time.Second)
	stopDisplay := startWaiting(a.stderr, t.C, timeout.Oldest)
	return func() {
		t.Stop()
		stopDisplay()
	}
}

// startWaiting redraws the waiting line on each tick, as of the tick's
// time, until stop, which waits for the last redraw and clears the line.
func startWaiting(w io.Writer, ticks <-chan time.Time, oldest func() (timeout.Request, int, bool)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		shown := false
		for {
			select {
			case <-quit:
				if shown {
					io.WriteString(w, "\r\x1b[2K")
				}
				return
			case now := <-ticks:
				line := waitingLine(now, oldest)
				if line == "" && !shown {
					continue
				}
				// One write per redraw, so assemble's live table,
				// drawn from another goroutine, is never cut into.
				io.WriteString(w, "\r\x1b[2K"+line)
				shown = line != ""
			}
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// waitingLine is the text for the oldest request in flight, or "" when
// none has waited waitingAfter.
func waitingLine(now time.Time, oldest func() (timeout.Request, int, bool)) string {
	r, n, ok := oldest()
	if !ok || now.Sub(r.Since) < waitingAfter {
		return ""
	}
	s := fmt.Sprintf("waiting for %s (%s %s) %s", r.Host, r.Method, r.What, now.Sub(r.Since).Truncate(time.Second))
	if n > 1 {
		s += fmt.Sprintf(", %d requests in flight", n)
	}
	return s
}
