package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// TestAppManifest holds deploy/app-manifest.json to the service: the App
// asks for the permissions the reconciler needs and no more, and
// subscribes to every event Route turns into work (the installation events
// come to every App without a subscription).
func TestAppManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "deploy", "app-manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Permissions map[string]string `json:"default_permissions"`
		Events      []string          `json:"default_events"`
		Hook        struct {
			URL string `json:"url"`
		} `json:"hook_attributes"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("deploy/app-manifest.json: %v", err)
	}
	want := map[string]string{"checks": "write", "contents": "write", "pull_requests": "write", "issues": "write", "metadata": "read"}
	if len(m.Permissions) != len(want) {
		t.Errorf("permissions = %v, want exactly %v", m.Permissions, want)
	}
	for k, v := range want {
		if m.Permissions[k] != v {
			t.Errorf("permission %s = %q, want %q", k, m.Permissions[k], v)
		}
	}
	subscribed := map[string]bool{"installation": true, "installation_repositories": true}
	for _, e := range m.Events {
		if !allowed(e) {
			t.Errorf("the manifest subscribes to %s, which the service ignores", e)
		}
		subscribed[e] = true
	}
	for _, e := range []string{"pull_request", "issue_comment", "pull_request_review", "check_run", "check_suite", "push", "installation", "installation_repositories"} {
		if !allowed(e) {
			t.Errorf("Route does not take %s", e)
		}
		if !subscribed[e] {
			t.Errorf("the manifest does not subscribe to %s", e)
		}
	}
	if !slices.IsSorted(m.Events) {
		t.Errorf("events are not sorted: %v", m.Events)
	}
	if filepath.Base(m.Hook.URL) != "webhook" {
		t.Errorf("hook URL %q does not end in /webhook", m.Hook.URL)
	}
}

// TestDeployMetricsOffTheService holds deploy/ to the split listeners: the
// ConfigMap's config loads and puts /metrics on a port of its own, the
// container declares that port, the scrape annotation names it, the probes
// use the public port, and the Service exposes the public port only.
func TestDeployMetricsOffTheService(t *testing.T) {
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, filepath.Join("..", "deploy", "base", "config.yaml"), func(kind string, dec func(any) error) {
		if err := dec(&cm); err != nil {
			t.Fatal(err)
		}
	})
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvWebhookSecret: "deploy-secret-0123456789", EnvAppID: "1", EnvPrivateKey: testPEM}
	cfg, err := LoadConfig(path, envOf(env))
	if err != nil {
		t.Fatalf("deploy/base/config.yaml: %v", err)
	}
	_, listenPort, _ := net.SplitHostPort(cfg.Listen)
	_, metricsPort, _ := net.SplitHostPort(cfg.MetricsAddr)

	type port struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
		Port          int    `yaml:"port"`
		TargetPort    any    `yaml:"targetPort"`
	}
	type probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
	var dep struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
				Spec struct {
					Containers []struct {
						Ports     []port `yaml:"ports"`
						Readiness probe  `yaml:"readinessProbe"`
						Liveness  probe  `yaml:"livenessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var svc struct {
		Spec struct {
			Ports []port `yaml:"ports"`
		} `yaml:"spec"`
	}
	readYAML(t, filepath.Join("..", "deploy", "base", "deployment.yaml"), func(kind string, dec func(any) error) {
		switch kind {
		case "Deployment":
			if err := dec(&dep); err != nil {
				t.Fatal(err)
			}
		case "Service":
			if err := dec(&svc); err != nil {
				t.Fatal(err)
			}
		}
	})
	c := dep.Spec.Template.Spec.Containers[0]
	named := map[string]string{}
	for _, p := range c.Ports {
		named[p.Name] = strconv.Itoa(p.ContainerPort)
	}
	if named["http"] != listenPort || named["metrics"] != metricsPort {
		t.Errorf("container ports %v, want http %s and metrics %s (listen %q, metricsAddr %q)", named, listenPort, metricsPort, cfg.Listen, cfg.MetricsAddr)
	}
	if a := dep.Spec.Template.Metadata.Annotations["prometheus.io/port"]; a != metricsPort {
		t.Errorf("prometheus.io/port %q, want the metrics port %s", a, metricsPort)
	}
	for name, p := range map[string]probe{"readiness": c.Readiness, "liveness": c.Liveness} {
		if p.HTTPGet.Port != "http" {
			t.Errorf("%s probe on port %q, want http: /healthz and /readyz are on the public listener", name, p.HTTPGet.Port)
		}
	}
	for _, p := range svc.Spec.Ports {
		if fmt.Sprint(p.TargetPort) != "http" {
			t.Errorf("the Service exposes %v; it must expose the http port only", p.TargetPort)
		}
	}
}

// readYAML calls each with the kind of every document of a YAML file and a
// decoder for it.
func readYAML(t *testing.T, path string, each func(kind string, dec func(any) error)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var node yaml.Node
		if err := d.Decode(&node); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var head struct {
			Kind string `yaml:"kind"`
		}
		if err := node.Decode(&head); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		each(head.Kind, node.Decode)
	}
}

// TestDeployReplicas: deploy/ runs replicas on the shared database, rolls
// them one at a time, keeps one through disruptions, mounts no API token,
// and gives each pod the memory its workers need.
func TestDeployReplicas(t *testing.T) {
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, filepath.Join("..", "deploy", "base", "config.yaml"), func(kind string, dec func(any) error) {
		if err := dec(&cm); err != nil {
			t.Fatal(err)
		}
	})
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path, envOf(map[string]string{EnvWebhookSecret: "deploy-secret-0123456789", EnvAppID: "1", EnvPrivateKey: testPEM}))
	if err != nil {
		t.Fatal(err)
	}
	var dep struct {
		Spec struct {
			Replicas int `yaml:"replicas"`
			Strategy struct {
				Type string `yaml:"type"`
			} `yaml:"strategy"`
			Template struct {
				Spec struct {
					AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
					Containers                   []struct {
						Env []struct {
							Name string `yaml:"name"`
						} `yaml:"env"`
						Resources struct {
							Limits map[string]string `yaml:"limits"`
						} `yaml:"resources"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	pdb := false
	readYAML(t, filepath.Join("..", "deploy", "base", "deployment.yaml"), func(kind string, dec func(any) error) {
		switch kind {
		case "Deployment":
			if err := dec(&dep); err != nil {
				t.Fatal(err)
			}
		case "PodDisruptionBudget":
			pdb = true
		}
	})
	s := dep.Spec
	if s.Replicas < 2 || s.Strategy.Type != "RollingUpdate" || !pdb {
		t.Errorf("replicas %d, strategy %q, disruption budget %v; want 2 or more, RollingUpdate, one", s.Replicas, s.Strategy.Type, pdb)
	}
	if a := s.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Error("the pod mounts a service account token; the service never calls the Kubernetes API")
	}
	c := s.Template.Spec.Containers[0]
	hasDB := false
	for _, e := range c.Env {
		hasDB = hasDB || e.Name == EnvDatabaseURL
	}
	if !hasDB {
		t.Errorf("replicas without %s would each keep a state of their own", EnvDatabaseURL)
	}
	// About 128 MiB for the process and 300 MiB per running check
	// (docs/performance.md, "Memory with large files").
	limit := c.Resources.Limits["memory"]
	mib, err := strconv.Atoi(strings.TrimSuffix(limit, "Mi"))
	if err != nil || !strings.HasSuffix(limit, "Mi") {
		t.Fatalf("memory limit %q: want a figure in Mi", limit)
	}
	if need := 128 + 300*cfg.Workers; mib < need {
		t.Errorf("memory limit %d Mi for %d workers; they need about %d Mi", mib, cfg.Workers, need)
	}
}
