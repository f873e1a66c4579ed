// Package checkstest holds helpers for tests of checks and of the commands
// that print their results.
package checkstest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Updating reports whether the test binary runs with -update, for tests
// that keep generated files other than one golden file each in step (a
// directory whose stale files must go, a block inside a hand-written file).
func Updating() bool { return *update }

// Golden compares got with the golden file at path, or rewrites the file when
// the test binary runs with -update. Golden files are reviewed like code, so
// a diff in them is the change being made.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
