package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

func TestWaitingLine(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	req := timeout.Request{Host: "quay.io", Method: "GET", What: "manifest team/catalog:v1", Since: start}
	tests := []struct {
		name   string
		waited time.Duration
		n      int
		none   bool
		want   string
	}{
		{"nothing in flight", 0, 0, true, ""},
		{"a quick request", time.Second, 1, false, ""},
		{"a slow request", 12*time.Second + 300*time.Millisecond, 1, false, "waiting for quay.io (GET manifest team/catalog:v1) 12s"},
		{"several", 3 * time.Second, 4, false, "waiting for quay.io (GET manifest team/catalog:v1) 3s, 4 requests in flight"},
	}
	for _, tt := range tests {
		oldest := func() (timeout.Request, int, bool) { return req, tt.n, !tt.none }
		if got := waitingLine(start.Add(tt.waited), oldest); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestWaitingDisplay drives the display with ticks: a line drawn in
// place while a request waits, cleared when it is answered and when the
// display stops.
func TestWaitingDisplay(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	inFlight := true
	asked := make(chan struct{})
	oldest := func() (timeout.Request, int, bool) {
		defer func() { asked <- struct{}{} }()
		return timeout.Request{Host: "h:5000", Method: "HEAD", What: "manifest a/b:v1", Since: start}, 1, inFlight
	}
	var buf bytes.Buffer
	ticks := make(chan time.Time)
	// The state changes only once the display has read it for the
	// previous tick; stop waits for the last redraw.
	tick := func(at time.Duration, answered bool) {
		inFlight = !answered
		ticks <- start.Add(at)
		<-asked
	}
	stop := startWaiting(&buf, ticks, oldest)
	tick(time.Second, false)
	tick(5*time.Second, false)
	tick(6*time.Second, true)
	tick(7*time.Second, true)
	tick(8*time.Second, false)
	stop()
	want := "\r\x1b[2Kwaiting for h:5000 (HEAD manifest a/b:v1) 5s" + "\r\x1b[2K" +
		"\r\x1b[2Kwaiting for h:5000 (HEAD manifest a/b:v1) 8s" + "\r\x1b[2K"
	if buf.String() != want {
		t.Errorf("display wrote %q\nwant %q", buf.String(), want)
	}
}
