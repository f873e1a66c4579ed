package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/checkstest"
)

// TestV1Report runs v1-report on a slice of community-operators-prod
// (testdata/v1-report/README.md says what each package shows) in every
// format, and on input it cannot read.
func TestV1Report(t *testing.T) {
	dir := filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "v1-report")
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "catalog.yaml"), []byte("---\nschema: olm.package\nname: foo\n---\nschema: olm.package\nname: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		golden string
		stderr string
	}{
		{name: "text", args: []string{filepath.Join(dir, "v4.22")}, golden: "v4.22.text.golden"},
		{name: "json", args: []string{filepath.Join(dir, "v4.22"), "-o", "json"}, golden: "v4.22.json.golden"},
		{name: "markdown", args: []string{filepath.Join(dir, "v4.22"), "-o", "markdown"}, golden: "v4.22.md.golden"},
		{name: "a catalog that does not load", args: []string{broken}, code: exitError, stderr: "catalog.yaml:6: error converting YAML to JSON"},
		{name: "an unknown format", args: []string{broken, "-o", "yaml"}, code: exitError, stderr: `invalid --output value "yaml"`},
		{name: "no directory", args: []string{}, code: exitError, stderr: "v1-report takes exactly one catalog directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"v1-report"}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit status %d, want %d; stderr %s", r.code, tt.code, r.stderr)
			}
			if tt.golden != "" {
				checkstest.Golden(t, filepath.Join(dir, tt.golden), []byte(r.stdout))
			}
			if !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("stderr %q does not say %q", r.stderr, tt.stderr)
			}
		})
	}
}
