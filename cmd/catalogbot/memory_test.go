package main

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/membudget"
)

// TestServeBigFilesFitTheMemoryLimit runs the real command as the shipped
// deployment does, 2 workers under a memory limit, against two pull
// requests that each add a catalog file just under limits.fileBytes. The
// limit reaches the process as the Go runtime's GOMEMLIMIT, as serve sets
// it from the cgroup (membudget.RuntimeLimit). Both pull requests get a
// verdict, and the process's peak RSS stays under the container's limit:
// the checks take their turn for memory instead of both holding their
// file and what it decodes to at once.
//
// The figures are the shipped ones (deploy/base: 768 MiB, 2 workers; the
// default limits.fileBytes). serve spends about 30 s of CPU on the two
// checks, one after the other; at half the size the property no longer
// separates the code with the budget from the code without it
// (docs/performance.md, "Memory with large files").
func TestServeBigFilesFitTheMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process that reads two 95 MB files")
	}
	const (
		memoryLimit = 768 << 20
		fileBytes   = policy.DefaultMaxFileBytes
	)
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		// The images check refuses every image without asking a
		// registry: only reading costs.
		".catalogbot.yaml":         "images:\n  allowRegistries: [registry.invalid]\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})
	size := fileBytes * 95 / 100
	var prs []*githubtest.PR
	for _, n := range []int{1, 2} {
		branch := fmt.Sprintf("big-%d", n)
		repo.Commit(branch, map[string]string{
			fmt.Sprintf("catalog/foo/big-%d.json", n): bigBundle("foo", fmt.Sprintf("foo.v%d-big", n), size),
		}, "a big bundle")
		prs = append(prs, repo.OpenPR("alice", branch, "main"))
	}

	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(key, gh.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "serve.yaml")
	conf := fmt.Sprintf("appID: %d\nprivateKeyFile: %s\ngithubURL: %s/\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\nworkers: 2\nresyncInterval: 1h\ncacheDir: %s\nstateDir: %s\n",
		gh.AppID(), key, gh.URL, filepath.Join(dir, "cache"), filepath.Join(dir, "state"))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", strconv.FormatInt(membudget.RuntimeLimit(memoryLimit), 10))
	// The startup resync finds both pull requests and the two workers
	// take one each.
	p := startServe(t, cfg, "0123456789abcdef0123456789abcdef")
	verdict := func(pr *githubtest.PR) *githubtest.CheckRun {
		for _, r := range repo.CheckRuns(pr.HeadSHA()) {
			if r.Name == "catalogbot" && r.Status == "completed" {
				return &r
			}
		}
		return nil
	}
	start := time.Now()
	// Minutes on a loaded machine: each check takes seconds of CPU.
	deadline := start.Add(10 * time.Minute)
	for time.Now().Before(deadline) && (verdict(prs[0]) == nil || verdict(prs[1]) == nil) {
		time.Sleep(100 * time.Millisecond)
	}
	peak := procStatusOf(t, p.cmd.Process.Pid, "VmHWM")
	cpu := ""
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)); err == nil {
		// utime and stime, in the kernel's 100 ticks a second.
		if f := strings.Fields(string(stat)); len(f) > 14 {
			cpu = fmt.Sprintf("; serve's CPU user %s, system %s (1/100 s)", f[13], f[14])
		}
	}
	t.Logf("both checked in %s; peak RSS %d MiB (limit %d MiB)%s", time.Since(start).Round(100*time.Millisecond), peak>>20, memoryLimit>>20, cpu)
	for _, pr := range prs {
		r := verdict(pr)
		if r == nil {
			t.Fatalf("#%d got no verdict\n%s", pr.Number, p.logs())
		}
		// A verdict on the content: the images check refuses the
		// bundle's image, which it read from the file.
		if r.Conclusion != "failure" || !strings.Contains(r.Title, "images") {
			t.Errorf("#%d: %s %q, want the images check's failure\n%s", pr.Number, r.Conclusion, r.Title, r.Summary)
		}
	}
	if peak >= memoryLimit {
		t.Errorf("peak RSS %d MiB, over the %d MiB limit\n%s", peak>>20, memoryLimit>>20, p.logs())
	}
}

// bigBundle is one olm.bundle blob of about size bytes, nearly all of it
// one olm.bundle.object manifest: a real bundle's shape with a large CRD,
// and the most work per byte for the checks (the manifest is decoded from
// base64 and read as JSON).
func bigBundle(pkg, name string, size int) string {
	manifest := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"blob":"` + strings.Repeat("x", size*3/4-200) + `"}}`
	return fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":%q,"image":"quay.io/example/%s:v1",`+
		`"properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.0"}},`+
		`{"type":"olm.bundle.object","value":{"data":%q}}]}`+"\n",
		name, pkg, name, pkg, base64.StdEncoding.EncodeToString([]byte(manifest)))
}

// procStatusOf reads a size field of /proc/PID/status, in bytes.
func procStatusOf(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read the peak RSS from: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == field {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
