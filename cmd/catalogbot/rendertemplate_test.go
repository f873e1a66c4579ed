package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// TestRenderTemplate runs render-template on a semver template whose
// bundles sit in a loopback registry: the type given or detected, both
// formats, and the failures with their exit statuses.
func TestRenderTemplate(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := registrytest.New(t).Host
	templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, false,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"})
	dir := t.TempDir()
	file := filepath.Join(dir, "template.yaml")
	text := "schema: olm.semver\nstable:\n  bundles:\n  - image: " + host + "/widget-bundle:v1.0.0\n  - image: " + host + "/widget-bundle:v1.1.0\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: "+host+"/widget-bundle:v9\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	yamlOut := cli(t, nil, "render-template", "semver", file, "-o", "yaml")
	if yamlOut.code != exitOK || yamlOut.stderr != "" {
		t.Fatalf("exit status %d, stderr:\n%s", yamlOut.code, yamlOut.stderr)
	}
	for _, want := range []string{"defaultChannel: stable-v1.1\n", "- name: widget.v1.1.0\n  replaces: widget.v1.0.0\n", "name: stable-v1.0\n"} {
		if !strings.Contains(yamlOut.stdout, want) {
			t.Errorf("yaml output lacks %q:\n%s", want, yamlOut.stdout)
		}
	}
	jsonOut := cli(t, nil, "render-template", file)
	if jsonOut.code != exitOK || !strings.HasPrefix(jsonOut.stdout, "{\n    \"schema\": \"olm.package\",") {
		t.Errorf("detected type, JSON: exit %d\n%s%s", jsonOut.code, jsonOut.stdout, jsonOut.stderr)
	}

	// -o mermaid draws what graph draws of the rendered catalog: one
	// picture, whichever way the catalog came.
	mermaid := cli(t, nil, "render-template", file, "-o", "mermaid")
	catalog := filepath.Join(t.TempDir(), "widget")
	if err := os.MkdirAll(catalog, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(catalog, "catalog.yaml"), []byte(yamlOut.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	drawn := cli(t, nil, "graph", catalog)
	if mermaid.code != exitOK || drawn.code != exitOK || mermaid.stdout != drawn.stdout || !strings.HasPrefix(mermaid.stdout, "graph LR\n") {
		t.Errorf("render-template -o mermaid (exit %d):\n%s\ngraph of its YAML (exit %d):\n%s%s", mermaid.code, mermaid.stdout, drawn.code, drawn.stdout, drawn.stderr)
	}

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown type", []string{"render-template", "composite", file}, exitError, `invalid template type "composite"`},
		{"unknown format", []string{"render-template", file, "-o", "dot"}, exitError, `invalid --output value "dot", expected (json|mermaid|yaml)`},
		{"unknown migration", []string{"render-template", file, "--migrate-level", "x"}, exitError, `unknown migration level "x"`},
		{"type mismatch", []string{"render-template", "basic", file}, exitInvalid, file + `:1: template has unknown schema ("olm.semver"), should be "olm.template.basic"`},
		{"missing bundle", []string{"render-template", broken}, exitInvalid, broken + ":4: bundle " + host + "/widget-bundle:v9 does not render"},
		{"missing file", []string{"render-template", filepath.Join(dir, "none.yaml")}, exitError, "unable to open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, nil, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) || r.stdout != "" {
				t.Errorf("exit %d (want %d), stderr %q (want it to contain %q), stdout %q", r.code, tc.code, r.stderr, tc.stderr, r.stdout)
			}
		})
	}
}
