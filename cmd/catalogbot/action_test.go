package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
	yaml3 "sigs.k8s.io/yaml/goyaml.v3"
)

// TestActionMetadata holds action.yml to the command it runs: it builds the
// image the Action needs, runs check in github mode, and declares exactly
// the outputs check writes. The example workflows parse and use only
// declared outputs.
func TestActionMetadata(t *testing.T) {
	var action struct {
		Outputs map[string]struct {
			Description string `json:"description"`
		} `json:"outputs"`
		Runs struct {
			Using string   `json:"using"`
			Image string   `json:"image"`
			Args  []string `json:"args"`
		} `json:"runs"`
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if action.Runs.Using != "docker" {
		t.Errorf("runs.using = %q, want docker", action.Runs.Using)
	}
	if _, err := os.Stat(filepath.Join(repoRoot, action.Runs.Image)); err != nil {
		t.Errorf("runs.image %q: %v", action.Runs.Image, err)
	}
	if len(action.Runs.Args) < 3 || action.Runs.Args[0] != "check" || !slices.Contains(action.Runs.Args, "github") {
		t.Errorf("runs.args = %q, want check in github mode", action.Runs.Args)
	}
	written := []string{"valid", "approved", "mergeable", "merge-enabled", "merge-method"}
	var declared []string
	for name, o := range action.Outputs {
		declared = append(declared, name)
		if o.Description == "" {
			t.Errorf("output %s has no description", name)
		}
	}
	slices.Sort(declared)
	slices.Sort(written)
	if !slices.Equal(declared, written) {
		t.Errorf("action.yml declares outputs %v, check writes %v", declared, written)
	}

	workflows, err := filepath.Glob(filepath.Join(repoRoot, "examples", "workflows", "*.yml"))
	if err != nil || len(workflows) == 0 {
		t.Fatalf("no example workflows: %v", err)
	}
	for _, wf := range workflows {
		data, err := os.ReadFile(wf)
		if err != nil {
			t.Fatal(err)
		}
		// GitHub reads workflows as YAML 1.2, where "on" is a string; YAML
		// 1.1 (sigs.k8s.io/yaml) would read the key as true.
		var doc map[string]any
		if err := yaml3.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: %v", filepath.Base(wf), err)
			continue
		}
		for _, key := range []string{"name", "on", "jobs"} {
			if doc[key] == nil {
				t.Errorf("%s: no %s", filepath.Base(wf), key)
			}
		}
		// Every steps.check.outputs.X a workflow reads is one the Action
		// declares.
		for _, part := range strings.Split(string(data), "steps.check.outputs.")[1:] {
			name := strings.FieldsFunc(part, func(r rune) bool {
				return !(r == '-' || r == '_' || r >= 'a' && r <= 'z')
			})[0]
			if !slices.Contains(written, name) {
				t.Errorf("%s reads output %q, which the Action does not declare", filepath.Base(wf), name)
			}
		}
	}
}
