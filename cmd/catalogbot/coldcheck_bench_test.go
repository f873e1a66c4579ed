package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/gitobj"
)

// benchRepoEnv names the environment variable that gives BenchmarkColdCheck
// a full clone (bare or not) of redhat-openshift-ecosystem/community-operators-prod.
const benchRepoEnv = "CATALOGBOT_BENCH_REPO"

// benchCommits are merged pull requests of community-operators-prod that
// change catalogs: each is checked as the change from its first parent.
// CATALOGBOT_BENCH_COMMITS (space-separated) replaces them.
var benchCommits = []string{
	"afd852a85119cf9eadb80676f976fbef869e463a", // Add sailoperator 1.31.0-nightly-2026-08-22 to FBC (#10923)
	"b212bb168", // Add openstack-lightspeed-operator 0.0.2 to FBC (#10912)
	"dd61cb486", // Remove entire Prometurbo community operator (#10907)
	"6db0653cf", // Add FBC resources for prometurbo operator (#10905)
	"08cefe59b", // Add project-quay 3.17.4 to FBC (#10778)
	"1f6450275", // Promote operator clusterpulse to catalog version 4.22. (#10540)
	"62499bdb7", // Add opendatahub-operator 3.5.0 to FBC (#10734)
}

// BenchmarkColdCheck times what the Action does for each pull request: a
// fresh catalogbot process checking a real commit of community-operators-prod
// (`catalogbot check --images=false --render=false`, the policy of
// testdata/community-operators-prod.catalogbot.yaml, nothing cached), and,
// in the same run, the floor it is measured against: `git cat-file --batch`
// reading every blob under catalogs/ of the commit's base once. Each
// iteration runs every commit once, alternating the two. It reports, over
// all runs, the median and the highest wall time of a check, the median of
// its CPU time (user+system), its highest peak RSS, the medians of the git
// baseline's wall and CPU time and of the two ratios per commit, and the
// load average before and after: on a loaded machine wall time is not a
// fair measure of a program that uses both cores, CPU time is. The check
// keeps no package index on disk (--cache-dir=off).
//
// It needs the repository: set CATALOGBOT_BENCH_REPO to a full clone (it is
// cloned (hard links where it can) into a temporary directory, where the policy is
// committed on top of each base and head). Without it the benchmark is
// skipped.
//
//	CATALOGBOT_BENCH_REPO=/path/to/community-operators-prod.git \
//	  go test -run '^$' -bench ColdCheck -benchtime 3x ./cmd/catalogbot
//
// The target is the floor: a check no slower than git reading the base's
// catalog blobs once. Measured on a quiet 2-core machine (AMD EPYC, load
// average 0.9), the seven default commits, -benchtime 5x: check median
// 0.159 s, max 0.206 s, git median 0.250 s, check/git 0.63, peak RSS
// 115 MiB; every check ended before git's read of its base.
// docs/performance.md has the history of the figure and what moved it.
func BenchmarkColdCheck(b *testing.B) {
	src := os.Getenv(benchRepoEnv)
	if src == "" {
		b.Skipf("set %s to a full clone of redhat-openshift-ecosystem/community-operators-prod to run this benchmark", benchRepoEnv)
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("the git baseline needs the git CLI, which is not installed: " + err.Error())
	}
	tmp := b.TempDir()
	bin := filepath.Join(tmp, "catalogbot")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	repo, prs, blobs := benchPRs(b, src, tmp)
	loopCold(b, bin, repo, prs, blobs)
}

// benchPR is a real change with the policy committed on both sides.
type benchPR struct{ name, base, head string }

// benchPRs clones src into tmp and commits the policy on top of the base
// and the head of each benchmark commit. blobs maps each base to the ids
// of its catalog blobs, one a line.
func benchPRs(b *testing.B, src, tmp string) (repo string, prs []benchPR, blobs map[string][]byte) {
	b.Helper()
	commits := benchCommits
	if s := os.Getenv("CATALOGBOT_BENCH_COMMITS"); s != "" {
		commits = strings.Fields(s)
	}
	repo = filepath.Join(tmp, "repo.git")
	benchGit(b, "", nil, "clone", "-q", "--bare", src, repo)
	policy, err := os.ReadFile(filepath.Join("testdata", "community-operators-prod.catalogbot.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	policyID := benchGit(b, repo, policy, "hash-object", "-w", "--stdin")
	has := func(string) bool { return true }
	if os.Getenv("CATALOGBOT_BENCH_KEEP_MISSING") == "" {
		store, err := gitobj.New(osfs.New(filepath.Join(repo, "objects")))
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		has = func(id string) bool {
			ok, err := store.Has(plumbing.NewHash(id))
			return ok && err == nil
		}
	}

	blobs = map[string][]byte{}
	for _, c := range commits {
		parent := benchGit(b, repo, nil, "rev-parse", c+"^1")
		base := withPolicy(b, repo, parent, policyID, parent, has)
		head := withPolicy(b, repo, c, policyID, base, has)
		prs = append(prs, benchPR{name: c[:9], base: base, head: head})
		var ids bytes.Buffer
		for line := range strings.Lines(benchGit(b, repo, nil, "ls-tree", "-r", base, "catalogs")) {
			if f := strings.Fields(line); len(f) >= 3 && f[1] == "blob" {
				ids.WriteString(f[2] + "\n")
			}
		}
		blobs[base] = ids.Bytes()
	}
	return repo, prs, blobs
}

// loopCold is the loop of BenchmarkColdCheck.
func loopCold(b *testing.B, bin, repo string, prs []benchPR, blobs map[string][]byte) {
	gnuTime := exec.Command("/usr/bin/time", "-f", "%M", "-o", os.DevNull, "true").Run() == nil
	var checkTimes, gitTimes, ratios, checkCPU, gitCPU, cpuRatios []float64
	var peakKB int64
	loadBefore := loadAverage(b)
	for b.Loop() {
		for _, p := range prs {
			args := []string{bin, "check", "--repo", repo, "--base", p.base, "--head", p.head,
				"--images=false", "--render=false", "--author", "catalogbot-bench", "-o", "json", "--cache-dir=off"}
			// GNU time, where there is one, measures the peak RSS: the
			// rusage Go's wait reports here came out at half of what
			// GNU time and Python's getrusage agree on.
			rssFile := filepath.Join(b.TempDir(), "rss")
			if gnuTime {
				args = append([]string{"/usr/bin/time", "-f", "%M", "-o", rssFile}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=")
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = nil, &stderr
			start := time.Now()
			err := cmd.Run()
			d := time.Since(start).Seconds()
			dCPU := processCPU(cmd.ProcessState)
			// 0 and 1 are verdicts (mergeable or not); anything else is no verdict.
			if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 {
				b.Fatalf("check %s: %v\n%s", p.name, err, stderr.String())
			}
			var rssKB int64
			if out, err := os.ReadFile(rssFile); gnuTime && err == nil {
				// The last line: a failing command's status comes first.
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				fmt.Sscan(lines[len(lines)-1], &rssKB)
			} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rssKB = ru.Maxrss
			}
			peakKB = max(peakKB, rssKB)

			// The output is read and dropped, never held: a child's peak
			// RSS on Linux starts from its parent's at fork, so this
			// process must stay small for the check's to mean anything.
			cat := exec.Command("git", "-C", repo, "cat-file", "--batch")
			cat.Stdin = bytes.NewReader(blobs[p.base])
			cat.Stdout = io.Discard
			start = time.Now()
			if err := cat.Run(); err != nil {
				b.Fatalf("git cat-file --batch for %s: %v", p.name, err)
			}
			g := time.Since(start).Seconds()
			gCPU := processCPU(cat.ProcessState)
			b.Logf("%s: check %.2f s (CPU %.2f s), %.1f MiB; git cat-file %.2f s (CPU %.2f s)", p.name, d, dCPU, float64(rssKB)/1024, g, gCPU)
			checkTimes, gitTimes, ratios = append(checkTimes, d), append(gitTimes, g), append(ratios, d/g)
			checkCPU, gitCPU, cpuRatios = append(checkCPU, dCPU), append(gitCPU, gCPU), append(cpuRatios, dCPU/max(gCPU, 0.001))
		}
	}
	b.ReportMetric(median(checkTimes), "check-median-s")
	b.ReportMetric(slices.Max(checkTimes), "check-max-s")
	b.ReportMetric(median(checkCPU), "check-CPU-median-s")
	b.ReportMetric(float64(peakKB)/1024, "peak-RSS-MiB")
	b.ReportMetric(median(gitTimes), "git-median-s")
	b.ReportMetric(median(gitCPU), "git-CPU-median-s")
	b.ReportMetric(median(ratios), "check/git")
	b.ReportMetric(median(cpuRatios), "check/git-CPU")
	b.ReportMetric(loadBefore, "load-before")
	b.ReportMetric(loadAverage(b), "load-after")
}

// processCPU is the CPU time, user and system, that an ended process
// took: on a loaded machine the fair measure of a program that uses
// both cores, which wall time is not.
func processCPU(ps *os.ProcessState) float64 {
	return (ps.UserTime() + ps.SystemTime()).Seconds()
}

// loadAverage is the machine's load average over the last minute, which
// the figures are read beside.
func loadAverage(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		b.Logf("no load average: %v", err)
		return 0
	}
	var load float64
	fmt.Sscan(string(data), &load)
	return load
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// withPolicy commits the tree of commit with the policy file added, on
// top of parent, with a fixed author and commit's date (so the ids are
// the same on every run), and returns the new commit's id. A file under
// catalogs/ whose blob the repository lacks (has says false: a partial
// clone, or a snapshot without its largest blobs) is left out of the
// tree, so that every check judges what it reads rather than stopping at
// a missing object and reading it again next time; hack/index-measure.sh
// does the same. CATALOGBOT_BENCH_KEEP_MISSING=1 keeps the trees whole.
func withPolicy(b *testing.B, repo, commit, policyID, parent string, has func(id string) bool) string {
	b.Helper()
	var tree bytes.Buffer
	for line := range strings.Lines(benchGit(b, repo, nil, "ls-tree", commit)) {
		// benchGit trims the output, so the last line has no newline.
		line = strings.TrimRight(line, "\n")
		if strings.HasSuffix(line, "\t.catalogbot.yaml") {
			continue
		}
		if strings.HasSuffix(line, "\tcatalogs") {
			line = fmt.Sprintf("040000 tree %s\tcatalogs", presentCatalogs(b, repo, commit, has))
		}
		tree.WriteString(line + "\n")
	}
	fmt.Fprintf(&tree, "100644 blob %s\t.catalogbot.yaml\n", policyID)
	id := benchGit(b, repo, tree.Bytes(), "mktree")
	// Dated as the commit it copies: a merge base is found walking by
	// date, and a copy older than its parent would send the walk down
	// the whole history.
	when := benchGit(b, repo, nil, "log", "-1", "--format=%cI", commit)
	return benchGitEnv(b, repo, []string{"GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when}, nil,
		"commit-tree", id, "-p", parent, "-m", "benchmark: "+commit)
}

// presentCatalogs is the tree of commit's catalogs/ without the files
// whose blobs the repository lacks.
func presentCatalogs(b *testing.B, repo, commit string, has func(id string) bool) string {
	b.Helper()
	tree := benchGit(b, repo, nil, "rev-parse", commit+":catalogs")
	var kept bytes.Buffer
	dropped := 0
	for line := range strings.Lines(benchGit(b, repo, nil, "ls-tree", "-r", tree)) {
		line = strings.TrimRight(line, "\n")
		if f := strings.Fields(line); len(f) >= 3 && f[1] == "blob" && !has(f[2]) {
			dropped++
			continue
		}
		kept.WriteString(line + "\n")
	}
	if dropped == 0 {
		return tree
	}
	index := filepath.Join(b.TempDir(), "index")
	benchGitEnv(b, repo, []string{"GIT_INDEX_FILE=" + index}, kept.Bytes(), "update-index", "--add", "--index-info")
	return benchGitEnv(b, repo, []string{"GIT_INDEX_FILE=" + index}, nil, "write-tree")
}

func benchGit(b *testing.B, dir string, stdin []byte, args ...string) string {
	b.Helper()
	return benchGitEnv(b, dir, nil, stdin, args...)
}

// benchGitEnv is benchGit with env added last, so that it wins.
func benchGitEnv(b *testing.B, dir string, env []string, stdin []byte, args ...string) string {
	b.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=catalogbot-bench", "GIT_AUTHOR_EMAIL=bench@example.invalid",
		"GIT_COMMITTER_NAME=catalogbot-bench", "GIT_COMMITTER_EMAIL=bench@example.invalid",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkWarmCheck times what the App pays for its next pull request:
// a check, in a process that has just checked another, different change
// (its in-process caches hold that change's base and head; the repository
// is opened anew, as the App's git cache does per check). The commits are
// taken oldest first, each timed right after the one before it; the
// first only warms the process. It reports the median and the highest
// wall and CPU time (user+system, the process's own, read around the
// check alone) and the load average. A change is timed only the first
// time this process sees it, so the figures come from the first pass
// whatever -benchtime asks: a change checked before is the cheapest
// case, not the next pull request. CATALOGBOT_BENCH_REPO as for
// BenchmarkColdCheck; no package index is kept on disk, so each check
// scans its base's catalogs (BenchmarkWarmCheckIndexed keeps one).
func BenchmarkWarmCheck(b *testing.B) {
	benchWarm(b, "off")
}

// BenchmarkWarmCheckIndexed is BenchmarkWarmCheck with a package index on
// disk that every check of the process shares, as the App keeps its own in
// its cache directory: each check finds its base's index, or derives it
// from the last one. This is the App's next pull request.
func BenchmarkWarmCheckIndexed(b *testing.B) {
	benchWarm(b, filepath.Join(b.TempDir(), "index"))
}

// warm holds the figures of the warm benchmark that ran in this process.
// The process's caches keep what its checks met, so a second warm
// benchmark in the same process would check changes it has seen: it
// skips, and is to be run on its own.
var warm struct {
	name       string
	times, cpu []float64
	load       float64
}

// benchWarm is the warm benchmarks' body: their checks with --cache-dir
// cacheDir.
func benchWarm(b *testing.B, cacheDir string) {
	src := os.Getenv(benchRepoEnv)
	if src == "" {
		b.Skipf("set %s to a full clone of redhat-openshift-ecosystem/community-operators-prod to run this benchmark", benchRepoEnv)
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("the benchmark builds its commits with the git CLI, which is not installed: " + err.Error())
	}
	if warm.name != "" && warm.name != b.Name() {
		b.Skipf("%s ran in this process already and its caches hold these changes: run %s on its own (-bench '%s$')", warm.name, b.Name(), b.Name())
	}
	if warm.times == nil {
		warm.name = b.Name()
		repo, prs, _ := benchPRs(b, src, b.TempDir())
		slices.Reverse(prs) // oldest first
		check := func(p benchPR) (wall, cpu float64) {
			before := selfCPU(b)
			start := time.Now()
			code := run(context.Background(), []string{"check", "--repo", repo, "--base", p.base, "--head", p.head,
				"--images=false", "--render=false", "--author", "catalogbot-bench", "-o", "json", "--cache-dir=" + cacheDir}, io.Discard, io.Discard)
			if code != 0 && code != 1 {
				b.Fatalf("check %s: exit status %d", p.name, code)
			}
			return time.Since(start).Seconds(), selfCPU(b) - before
		}
		warm.load = loadAverage(b)
		check(prs[0])
		for _, p := range prs[1:] {
			d, c := check(p)
			b.Logf("%s: the next pull request, %.3f s, CPU %.3f s", p.name, d, c)
			warm.times, warm.cpu = append(warm.times, d), append(warm.cpu, c)
		}
	}
	for b.Loop() {
	}
	b.ReportMetric(median(warm.times), "check-median-s")
	b.ReportMetric(slices.Max(warm.times), "check-max-s")
	b.ReportMetric(median(warm.cpu), "check-CPU-median-s")
	b.ReportMetric(slices.Max(warm.cpu), "check-CPU-max-s")
	b.ReportMetric(warm.load, "load")
}

// selfCPU is this process's CPU time so far, user and system.
func selfCPU(b testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
