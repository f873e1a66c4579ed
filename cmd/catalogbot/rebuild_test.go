package main

// These tests run rebuild against an in-process registry on 127.0.0.1
// (publisher/render/rendertest), as a schedule would run it repeatedly.

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

var rebuildLine = regexp.MustCompile(`(?m)^(sha256:[0-9a-f]{64}) (published|unchanged)\n\z`)

// rebuildOutput checks the last line rebuild prints and returns its digest.
func rebuildOutput(t *testing.T, r result, status string) string {
	t.Helper()
	m := rebuildLine.FindStringSubmatch(r.stdout)
	if r.code != exitOK || m == nil || m[2] != status {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0 and %q", r.code, r.stdout, r.stderr, status)
	}
	return m[1]
}

// fixtureCatalogImage is a catalog image of one package of a fixture catalog.
func fixtureCatalogImage(t *testing.T, dir, pkg, revision string) v1.Image {
	t.Helper()
	return rendertest.Image(t, map[string]string{
		"operators.operatorframework.io.index.configs.v1": "/configs",
		"revision": revision,
	}, rendertest.Layer(t, rendertest.DirEntries(t, filepath.Join(repoRoot, dir, pkg), "configs/"+pkg)...))
}

func registryDigest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	return d.Digest.String()
}

func TestRebuild(t *testing.T) {
	isolateCredentials(t)
	host := registrytest.New(t).Host
	cert, kv := host+"/cert-rotator:v1", host+"/kv-store-operator:v1"
	registrytest.Push(t, cert, fixtureCatalogImage(t, validDir, "cert-rotator", "1"))
	registrytest.Push(t, kv, fixtureCatalogImage(t, validDir, "kv-store-operator", "1"))
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	data := fmt.Sprintf("name: demo\nrepo: %s/team/catalog\ntag: latest\nreferences:\n- name: cert\n  image: %s\n- name: kv\n  image: %s\n", host, cert, kv)
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	// --image defaults to catalog.yaml's repo:tag.
	target := host + "/team/catalog:latest"
	args := []string{"rebuild", config, "--base", "scratch", "--cache-dir", t.TempDir()}

	first := rebuildOutput(t, cli(t, nil, args...), "published")
	if got := registryDigest(t, target); got != first {
		t.Fatalf("%s is %s, want %s", target, got, first)
	}
	r := cli(t, nil, args...)
	if second := rebuildOutput(t, r, "unchanged"); second != first || strings.Contains(r.stdout, "drift") {
		t.Errorf("second rebuild: %q; want unchanged %s without drift", r.stdout, first)
	}

	was := registryDigest(t, cert)
	registrytest.Push(t, cert, fixtureCatalogImage(t, validDir, "cert-rotator", "2"))
	r = cli(t, nil, args...)
	third := rebuildOutput(t, r, "published")
	wantDrift := fmt.Sprintf("drift: reference %s moved: %s -> %s\n", cert, was, registryDigest(t, cert))
	if !strings.HasPrefix(r.stdout, wantDrift) || strings.Count(r.stdout, "drift:") != 1 {
		t.Errorf("stdout %q; want it to start with %q, the only drift", r.stdout, wantDrift)
	}
	if third == first || registryDigest(t, target) != third {
		t.Errorf("moved reference: published %s (first %s), target %s", third, first, registryDigest(t, target))
	}

	registrytest.Push(t, kv, fixtureCatalogImage(t, brokenDir, "kv-store-operator", "1"))
	r = cli(t, nil, args...)
	if r.code != exitInvalid || !strings.Contains(r.stdout, "kv-store-operatr") || !strings.Contains(r.stderr, "not published") {
		t.Fatalf("invalid catalog: exit %d, stdout %q, stderr %q; want 1, findings, not published", r.code, r.stdout, r.stderr)
	}
	if got := registryDigest(t, target); got != third {
		t.Errorf("an invalid catalog moved %s to %s", target, got)
	}
}

// An OCI layout target needs no registry for the output.
func TestRebuildLayoutTarget(t *testing.T) {
	isolateCredentials(t)
	host := registrytest.New(t).Host
	for _, pkg := range []string{"cert-rotator", "kv-store-operator"} {
		registrytest.Push(t, host+"/"+pkg+":v1", fixtureCatalogImage(t, validDir, pkg, "1"))
	}
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	data := fmt.Sprintf("name: demo\nreferences:\n- name: cert\n  image: %[1]s/cert-rotator:v1\n- name: kv\n  image: %[1]s/kv-store-operator:v1\n", host)
	if err := os.WriteFile(config, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"rebuild", config, "--base", "scratch", "--image", "oci:" + filepath.Join(t.TempDir(), "out")}
	first := rebuildOutput(t, cli(t, nil, args...), "published")
	if second := rebuildOutput(t, cli(t, nil, args...), "unchanged"); second != first {
		t.Errorf("second rebuild %s, want %s", second, first)
	}
}

func TestRebuildUsage(t *testing.T) {
	dir := t.TempDir()
	noTarget := filepath.Join(dir, "no-target.yaml")
	if err := os.WriteFile(noTarget, []byte("name: demo\nreferences:\n- name: a\n  image: quay.io/a/b:v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: demo\nreferences:\n- name: a\n  image: Not/Valid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no config", []string{"rebuild"}, exitError, "needs a catalog.yaml (rebuild CATALOG_YAML)"},
		{"two arguments", []string{"rebuild", noTarget, "x"}, exitError, "takes one catalog.yaml, got 2 arguments"},
		{"argument and --config", []string{"rebuild", noTarget, "--config", noTarget}, exitError, "takes one catalog.yaml, got"},
		// The old spelling still works, with a notice.
		{"deprecated --config", []string{"rebuild", "--config", noTarget}, exitError,
			"catalogbot: --config is deprecated; give catalog.yaml as the argument: catalogbot rebuild CATALOG_YAML\ncatalogbot: rebuild needs --image"},
		{"no target", []string{"rebuild", noTarget}, exitError, "needs --image"},
		{"missing config", []string{"rebuild", filepath.Join(dir, "absent.yaml")}, exitError, "absent.yaml"},
		{"invalid catalog.yaml", []string{"rebuild", bad, "--image", "oci:" + filepath.Join(dir, "out")}, exitInvalid, "CY7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tt.code, tt.stderr)
			}
		})
	}
}

// A reference that cannot be rendered fails the run like an invalid
// catalog, with its class, and nothing is published.
func TestRebuildMissingReference(t *testing.T) {
	isolateCredentials(t)
	host := registrytest.New(t).Host
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(config, []byte("name: demo\nreferences:\n- name: gone\n  image: "+host+"/gone:v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	r := cli(t, nil, "rebuild", config, "--base", "scratch", "--image", "oci:"+out)
	if r.code != exitInvalid || !strings.Contains(r.stderr, "not_found") {
		t.Fatalf("exit %d, stderr %q; want 1 and not_found", r.code, r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written for a failed rebuild: %v", err)
	}
}

// TestCommandsEndAtTheirDeadline: publish and rebuild against a registry
// that accepts connections and never answers end at --timeout; rebuild
// says so with the status a scheduler retries, publish with its error
// status; nothing is written.
func TestCommandsEndAtTheirDeadline(t *testing.T) {
	isolateCredentials(t)
	tarpit := registrytest.NewTarpit(t)
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(config, []byte("name: demo\nreferences:\n- name: slow\n  image: "+tarpit.Addr+"/slow:v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"publish to a tarpit", []string{"publish", "--catalog", validDir, "--base", "scratch", "--image", tarpit.Addr + "/catalog:v1",
			"--insecure-registry", tarpit.Addr, "--timeout", "500ms"}, exitError},
		{"rebuild from a tarpit", []string{"rebuild", config, "--base", "scratch", "--image", "oci:" + out,
			"--insecure-registry", tarpit.Addr, "--timeout", "500ms"}, exitRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan result, 1)
			go func() { done <- cli(t, nil, tt.args...) }()
			var r result
			select {
			case r = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the command did not end at its deadline")
			}
			if r.code != tt.code || !strings.Contains(r.stderr, "deadline of 500ms (--timeout)") {
				t.Fatalf("exit %d, stderr %q; want %d and the deadline named", r.code, r.stderr, tt.code)
			}
		})
	}
	if tarpit.Conns() == 0 {
		t.Error("the tarpit was never contacted: the test proves nothing")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output written for a rebuild cut short: %v", err)
	}
}

// TestRebuildUnreachableRetries: a reference whose registry refuses
// connections is worth a retry (status 3); a missing one is not (1, in
// TestRebuildMissingReference).
func TestRebuildUnreachableRetries(t *testing.T) {
	isolateCredentials(t)
	down := registrytest.NewHangup(t)
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(config, []byte("name: demo\nreferences:\n- name: down\n  image: "+down.Host+"/down:v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, nil, "rebuild", config, "--base", "scratch", "--image", "oci:"+filepath.Join(t.TempDir(), "out"), "--insecure-registry", down.Host)
	if r.code != exitRetry || !strings.Contains(r.stderr, "transport") {
		t.Fatalf("exit %d, stderr %q; want 3 and a transport failure", r.code, r.stderr)
	}
}

// TestRebuildCronJob: the example CronJob retries exactly the exit
// statuses rebuild says to retry, fails the Job on the others, and gives
// the run's --timeout room under activeDeadlineSeconds.
func TestRebuildCronJob(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "rebuild-cronjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		Action      string
		OnExitCodes *struct{ Values []int }
	}
	var job struct {
		Kind string
		Spec struct {
			JobTemplate struct {
				Spec struct {
					ActiveDeadlineSeconds int
					PodFailurePolicy      struct{ Rules []rule }
					Template              struct {
						Spec struct {
							Containers []struct{ Args []string }
						}
					}
				}
			}
		}
	}
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		if err := yaml.Unmarshal([]byte(doc), &job); err != nil {
			t.Fatal(err)
		}
		if job.Kind == "CronJob" {
			break
		}
	}
	spec := job.Spec.JobTemplate.Spec
	got := map[string][]int{}
	for _, r := range spec.PodFailurePolicy.Rules {
		if r.OnExitCodes != nil {
			got[r.Action] = append(got[r.Action], r.OnExitCodes.Values...)
		}
	}
	want := map[string][]int{}
	for _, c := range rebuildExitCodes[1:] {
		action := "Count"
		if strings.HasSuffix(c.meaning, "do not retry") {
			action = "FailJob"
		}
		want[action] = append(want[action], c.code)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("podFailurePolicy exit codes %v, want %v", got, want)
	}
	timeout := publish.DefaultDeadline
	for _, arg := range spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(arg, "--timeout="); ok {
			if timeout, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if active := time.Duration(spec.ActiveDeadlineSeconds) * time.Second; active < timeout+time.Minute {
		t.Errorf("activeDeadlineSeconds %s leaves the run's --timeout %s no room", active, timeout)
	}
}
