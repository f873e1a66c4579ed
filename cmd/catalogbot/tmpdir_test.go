package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSweepAtStart: the temporary directories of a run that was killed
// (its PID no longer alive) are removed when the next run starts, both in
// the system's temporary directory and beside assemble's output.
func TestSweepAtStart(t *testing.T) {
	const deadPID = 2147483646 // above any pid_max
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "out")
	old := time.Now().Add(-time.Hour)
	mk := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(p, "configs"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orphans := []string{
		mk(filepath.Join(tmp, fmt.Sprintf("catalogbot-render-pid%d-1", deadPID))),
		mk(filepath.Join(tmp, fmt.Sprintf("catalogbot-rebuild-pid%d-2", deadPID))),
		mk(filepath.Join(filepath.Dir(out), fmt.Sprintf(".out.assemble-pid%d-3", deadPID))),
		mk(filepath.Join(filepath.Dir(out), fmt.Sprintf(".out.assemble-pid%d-3.old", deadPID))),
	}
	live := mk(filepath.Join(tmp, fmt.Sprintf("catalogbot-render-pid%d-4", os.Getpid())))

	host := pushAssembleImages(t)
	yamlPath := writeCatalogYAML(t, fmt.Sprintf("name: c\nreferences:\n- name: one\n  image: %s/example/fbc-catalog:v1\n", host))
	r := cli(t, nil, "--log-level", "debug", "assemble", yamlPath, "-o", out)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, p := range orphans {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s of a dead run is still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s of a live run was removed: %v", live, err)
	}
	if !strings.Contains(r.stderr, "removed the temporary directory of a run that is gone") {
		t.Errorf("no debug record of the sweep:\n%s", r.stderr)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".out.*"))
	if len(left) > 0 {
		t.Errorf("left beside the output: %v", left)
	}
}
