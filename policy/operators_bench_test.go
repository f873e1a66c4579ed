package policy

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// BenchmarkOperators reads the policy and the owners' ci.yaml files of a
// real base, as a check does before anything else, in a fresh tree each
// time: "read" from nothing kept (a new process with no record on disk),
// "kept" with the base's operators record in the process (the App's next
// check, or a process that found it on disk). CATALOGBOT_BENCH_BASE is
// "REPO COMMIT": a clone of community-operators-prod and a commit whose
// tree holds the policy (hack/index-measure.sh's prs.txt has some).
// Reports CPU time (user+system) per read beside the wall time.
func BenchmarkOperators(b *testing.B) {
	repo, rev, ok := strings.Cut(os.Getenv("CATALOGBOT_BENCH_BASE"), " ")
	if !ok {
		b.Skip("CATALOGBOT_BENCH_BASE is not \"REPO COMMIT\"")
	}
	for _, kept := range []bool{false, true} {
		name := map[bool]string{false: "read", true: "kept"}[kept]
		b.Run(name, func(b *testing.B) {
			operatorsKept.reset()
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				_, base, _, err := change.FromGit(repo, rev, rev)
				if err != nil {
					b.Fatal(err)
				}
				if !kept {
					operatorsKept.reset()
				}
				start := selfCPU(b)
				b.StartTimer()
				pol, findings, err := Load(base)
				if err != nil || len(findings) > 0 {
					b.Fatalf("Load: %v %v", err, findings)
				}
				if _, err := owners.Load(base, owners.LoadOptions{Sources: pol.Owners.Sources, Maintainers: pol.Owners.Maintainers, Operators: pol.Operators}); err != nil {
					b.Fatal(err)
				}
				cpu += selfCPU(b) - start
			}
			b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "CPU-ms/op")
		})
	}
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
