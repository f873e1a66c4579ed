package main

import (
	"time"

	"github.com/catalogbot/catalogbot/publisher/tmpdir"
)

// sweepTemp removes the temporary directories that killed runs of
// catalogbot left in the system's temporary directory. It runs before
// every command, since any of them may follow a killed one; a failure is
// logged and left for the next run.
func (a *app) sweepTemp() {
	removed, err := tmpdir.Sweep("", tmpdir.Prefix, time.Now())
	for _, p := range removed {
		a.log.Debug("removed the temporary directory of a run that is gone", "dir", p)
	}
	if err != nil {
		a.log.Warn("could not remove the temporary directory of a run that is gone", "err", err)
	}
}
