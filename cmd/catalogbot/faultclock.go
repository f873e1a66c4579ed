package main

import (
	"fmt"
	"time"
)

// Fault injection for the chaos suite, and for nothing else: a replica
// whose clock is apart from the others' cannot be made from outside the
// process (Go reads the time through the vDSO, so libfaketime does not
// reach it), so serve reads its clock through one function and these
// variables move it. The offset is refused unless the second variable
// says, by name, that faults are being injected on purpose.
const (
	// envClockOffset moves serve's clock by a Go duration ("5s",
	// "-1m"): what the durable queue and the reconciler take for now.
	envClockOffset = "CATALOGBOT_CLOCK_OFFSET"
	// envUnsafeFaults must be "clock-offset" for envClockOffset to be
	// taken.
	envUnsafeFaults = "CATALOGBOT_UNSAFE_FAULT_INJECTION"
)

// faultClock is serve's clock: nil (the machine's) unless the environment
// injects an offset, which it returns as well.
func faultClock(getenv func(string) string) (func() time.Time, time.Duration, error) {
	v := getenv(envClockOffset)
	if v == "" {
		return nil, 0, nil
	}
	if getenv(envUnsafeFaults) != "clock-offset" {
		return nil, 0, fmt.Errorf("%s=%s moves the service's clock, a fault injected for tests; it is taken only with %s=clock-offset",
			envClockOffset, v, envUnsafeFaults)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return nil, 0, fmt.Errorf("%s=%q is not a duration; write one such as 5s or -1m", envClockOffset, v)
	}
	return func() time.Time { return time.Now().Add(d) }, d, nil
}
