package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// pushAssembleImages serves the render fixture catalog as a catalog image
// and returns the registry's host.
func pushAssembleImages(t *testing.T) string {
	t.Helper()
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := registrytest.New(t).Host
	img := rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
		rendertest.Layer(t, append([]rendertest.Entry{{Name: "configs/"}},
			rendertest.DirEntries(t, filepath.Join(repoRoot, catalogDir), "configs")...)...))
	registrytest.Push(t, host+"/example/fbc-catalog:v1", img)
	return host
}

func writeCatalogYAML(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAssemble checks that each index.yaml is opm's recorded render of the
// same catalog, in the <catalog>/<reference>/index.yaml layout.
func TestAssemble(t *testing.T) {
	host := pushAssembleImages(t)
	yamlPath := writeCatalogYAML(t, fmt.Sprintf(`name: my-catalog
references:
- name: one
  image: %[1]s/example/fbc-catalog:v1
- name: two
  image: %[1]s/example/fbc-catalog:v1
`, host))
	out := filepath.Join(t.TempDir(), "out")
	for _, run := range []string{"first", "cached", "cached again"} {
		r := cli(t, nil, "assemble", yamlPath, "-o", out, "--cache-dir", filepath.Join(filepath.Dir(out), "cache"))
		if r.code != exitOK {
			t.Fatalf("%s run: exit status %d, stderr:\n%s", run, r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, "assembled 2 references") {
			t.Errorf("%s run: stdout = %q", run, r.stdout)
		}
		if !strings.Contains(r.stderr, "assemble: one: ") {
			t.Errorf("%s run: no progress lines on stderr:\n%s", run, r.stderr)
		}
		want := renderGoldenFile(t, "fbc-dir.yaml", host)
		for _, ref := range []string{"one", "two"} {
			got, err := os.ReadFile(filepath.Join(out, "my-catalog", ref, "index.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("%s run: %s/index.yaml differs from opm's fbc-dir.yaml:\n%s", run, ref, got)
			}
		}
	}
}

func TestAssembleFailures(t *testing.T) {
	host := pushAssembleImages(t)
	tests := []struct {
		name string
		args func(yamlPath, out string) []string
		yaml string
		code int
		want []string
	}{
		{"no arguments", func(_, out string) []string { return []string{"-o", out} }, "", exitError,
			[]string{"assemble takes one catalog.yaml"}},
		{"no output", func(y, _ string) []string { return []string{y} }, "", exitError,
			[]string{"needs an output directory"}},
		{"bad concurrency", func(y, out string) []string { return []string{y, "-o", out, "--concurrency", "0"} }, "", exitError,
			[]string{"invalid --concurrency 0"}},
		{"missing file", func(_, out string) []string { return []string{"/nonexistent/catalog.yaml", "-o", out} }, "", exitError,
			[]string{"no such file"}},
		// 127.0.0.1:1 answers nothing: were it contacted, the run would
		// fail with transport errors instead of the findings.
		{"invalid catalog.yaml", func(y, out string) []string { return []string{y, "-o", out} },
			"name: c\nreferences:\n- name: a\n  image: 127.0.0.1:1/x/a:v1\n- name: a\n  image: 127.0.0.1:1/x/b:v1\n- name: ../b\n  image: 127.0.0.1:1/x/c:v1\n",
			exitInvalid, []string{"catalog.yaml:5: duplicate reference name \"a\"", "catalog.yaml:7: reference name \"../b\""}},
		{"failed references", func(y, out string) []string { return []string{y, "-o", out} },
			"name: c\nreferences:\n- name: good\n  image: HOST/example/fbc-catalog:v1\n- name: gone\n  image: HOST/example/gone:v1\n",
			exitInvalid, []string{"1 reference failed", "catalog.yaml:5: gone (HOST/example/gone:v1): not_found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yamlPath := writeCatalogYAML(t, strings.ReplaceAll(tt.yaml, "HOST", host))
			out := filepath.Join(t.TempDir(), "out")
			r := cli(t, nil, append([]string{"assemble"}, tt.args(yamlPath, out)...)...)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if testing.Verbose() {
				t.Logf("stderr:\n%s", r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, strings.ReplaceAll(w, "HOST", host)) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("output directory exists after a failure (%v)", err)
			}
		})
	}
}
