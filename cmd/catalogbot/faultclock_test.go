package main

import (
	"strings"
	"testing"
	"time"
)

// TestFaultClock: the clock offset is taken only with the variable that
// names it a fault injected on purpose, and moves serve's clock by it.
func TestFaultClock(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		skew    time.Duration
		wantErr string
	}{
		{"unset", nil, 0, ""},
		{"without the unsafe flag", map[string]string{envClockOffset: "5s"}, 0, "taken only with " + envUnsafeFaults + "=clock-offset"},
		{"another flag", map[string]string{envClockOffset: "5s", envUnsafeFaults: "1"}, 0, "taken only with"},
		{"not a duration", map[string]string{envClockOffset: "5", envUnsafeFaults: "clock-offset"}, 0, `"5" is not a duration`},
		{"ahead", map[string]string{envClockOffset: "5s", envUnsafeFaults: "clock-offset"}, 5 * time.Second, ""},
		{"behind", map[string]string{envClockOffset: "-90m", envUnsafeFaults: "clock-offset"}, -90 * time.Minute, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now, skew, err := faultClock(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q in it", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if skew != tt.skew {
				t.Errorf("skew = %s, want %s", skew, tt.skew)
			}
			if tt.skew == 0 {
				if now != nil {
					t.Error("a clock without an offset; want nil, the machine's")
				}
				return
			}
			if got := time.Until(now()); got < tt.skew-time.Minute || got > tt.skew+time.Minute {
				t.Errorf("the clock is %s off the machine's, want %s", got, tt.skew)
			}
		})
	}
}
