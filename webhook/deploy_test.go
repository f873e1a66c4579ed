package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/webhook/membudget"
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
	// merge_queues: read is what GitHub asks of an App subscribed to
	// merge_group.
	want := map[string]string{"checks": "write", "contents": "write", "pull_requests": "write", "issues": "write", "merge_queues": "read", "metadata": "read"}
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
	for _, e := range []string{"pull_request", "issue_comment", "pull_request_review", "check_run", "check_suite", "push", "merge_group", "installation", "installation_repositories"} {
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
// and gives each pod the memory a check of the largest allowed file needs.
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
	if _, err := LoadConfig(path, envOf(map[string]string{EnvWebhookSecret: "deploy-secret-0123456789", EnvAppID: "1", EnvPrivateKey: testPEM})); err != nil {
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
	// The checks take turns for the memory (webhook/membudget), so the
	// limit need not grow with the workers; it must admit a pull request
	// that adds a file of the default limits.fileBytes.
	limit := c.Resources.Limits["memory"]
	mib, err := strconv.Atoi(strings.TrimSuffix(limit, "Mi"))
	if err != nil || !strings.HasSuffix(limit, "Mi") {
		t.Fatalf("memory limit %q: want a figure in Mi", limit)
	}
	if budget := membudget.BudgetFor(membudget.RuntimeLimit(int64(mib) << 20)); budget < policy.DefaultMaxFileBytes {
		t.Errorf("memory limit %d Mi: its checks may read %d bytes at once, less than one file of limits.fileBytes (%d)", mib, budget, policy.DefaultMaxFileBytes)
	}
}

// TestDeployAlerts holds deploy/monitoring to the service: its
// kustomization applies the rules file, a PrometheusRule whose every rule
// reads strictly, waits a duration, and names only metrics the service
// exports and reasons (policy.Code) that exist; an unexplained wait and a
// pull request stuck retrying each have an alert.
func TestDeployAlerts(t *testing.T) {
	dir := filepath.Join("..", "deploy", "monitoring")
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	readYAML(t, filepath.Join(dir, "kustomization.yaml"), func(_ string, dec func(any) error) {
		if err := dec(&kust); err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Contains(kust.Resources, "alerts.yaml") {
		t.Errorf("deploy/monitoring/kustomization.yaml applies %v, not alerts.yaml", kust.Resources)
	}

	type rule struct {
		Alert       string            `yaml:"alert"`
		Expr        string            `yaml:"expr"`
		For         string            `yaml:"for"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	}
	var doc struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Groups []struct {
				Name  string `yaml:"name"`
				Rules []rule `yaml:"rules"`
			} `yaml:"groups"`
		} `yaml:"spec"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("deploy/monitoring/alerts.yaml: %v", err)
	}
	if doc.APIVersion != "monitoring.coreos.com/v1" || doc.Kind != "PrometheusRule" || doc.Metadata.Name == "" {
		t.Errorf("alerts.yaml is a %s %s named %q; want a monitoring.coreos.com/v1 PrometheusRule", doc.APIVersion, doc.Kind, doc.Metadata.Name)
	}

	// The metrics the service exports, by name.
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	// A vector with no series is not gathered: give the alarm one.
	m.BundleUnplaced.WithLabelValues("acme/catalog", "foo").Set(1)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	metricName := regexp.MustCompile(`\bcatalogbot_[a-z_]+\b`)
	reasonMatch := regexp.MustCompile(`reason=~?"([^"]*)"`)

	alerted := map[policy.Code]bool{}
	rules := 0
	for _, g := range doc.Spec.Groups {
		for _, r := range g.Rules {
			rules++
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
				t.Errorf("rule %q: want an alert name, an expression, a severity and a summary", r.Alert)
			}
			if _, err := time.ParseDuration(r.For); err != nil {
				t.Errorf("rule %s: for %q: %v", r.Alert, r.For, err)
			}
			if strings.Count(r.Expr, "(") != strings.Count(r.Expr, ")") || strings.Count(r.Expr, "{") != strings.Count(r.Expr, "}") {
				t.Errorf("rule %s: unbalanced expression %q", r.Alert, r.Expr)
			}
			names := metricName.FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("rule %s names no catalogbot metric: %q", r.Alert, r.Expr)
			}
			for _, n := range names {
				if !exported[n] {
					t.Errorf("rule %s names %s, which the service does not export", r.Alert, n)
				}
			}
			for _, m := range reasonMatch.FindAllStringSubmatch(r.Expr, -1) {
				for _, c := range strings.Split(m[1], "|") {
					if !slices.Contains(policy.Codes(), policy.Code(c)) {
						t.Errorf("rule %s names reason %q, which is no code", r.Alert, c)
					}
					alerted[policy.Code(c)] = true
				}
			}
		}
	}
	if rules == 0 {
		t.Fatal("alerts.yaml has no rules")
	}
	for _, c := range []policy.Code{policy.CodeUnexplained, policy.CodeRetrying} {
		if !alerted[c] {
			t.Errorf("no alert on the reason %s", c)
		}
	}
}
