package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowProposeAlarm: policy show names the App's missing-proposal
// alarm beside the propose list, and says nothing of it without one.
func TestShowProposeAlarm(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "parse", "propose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	alarm := func(p *Policy) string {
		for _, s := range p.Settings() {
			if s.Key == "propose.alarm" {
				return s.Value
			}
		}
		return ""
	}
	p, findings := Parse("propose.yaml", data)
	if len(findings) > 0 {
		t.Fatal(findings)
	}
	if got := alarm(p); !strings.Contains(got, "catalogbot_bundle_unplaced_seconds") || !strings.Contains(got, "unplacedAfter") {
		t.Errorf("propose.alarm = %q; want the metric and its threshold named", got)
	}
	empty, _ := Parse("empty.yaml", []byte("merge:\n  enabled: false\n"))
	if got := alarm(empty); got != "" {
		t.Errorf("without a propose list, propose.alarm = %q", got)
	}
}
