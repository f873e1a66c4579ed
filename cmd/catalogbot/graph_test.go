package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/checkstest"
)

func TestGraph(t *testing.T) {
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "catalog.yaml"), []byte("---\nschema: olm.package\nname: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		golden string
		stderr string
	}{
		{name: "every channel", args: []string{validDir}, golden: "valid.mmd"},
		{name: "one channel", args: []string{validDir, "--package", "cert-rotator", "--channel", "stable-v2"}, golden: "cert-rotator.stable-v2.mmd"},
		{name: "no such channel", args: []string{validDir, "--channel", "nope"}, code: exitError, stderr: `no channel named "nope" in the catalog`},
		{name: "a catalog that does not load", args: []string{broken}, code: exitError, stderr: "catalog.yaml:3: does not load"},
		{name: "no directory", args: []string{}, code: exitError, stderr: "graph takes exactly one catalog directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"graph"}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit status %d, want %d; stderr %s", r.code, tt.code, r.stderr)
			}
			if tt.golden != "" {
				checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "graph", tt.golden), []byte(r.stdout))
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q does not say %q", r.stderr, tt.stderr)
			}
		})
	}
}
