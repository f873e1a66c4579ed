//go:build e2e

package registrytest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Helpers for the end-to-end tests, which run Debian's docker-registry (the
// CNCF distribution registry) on 127.0.0.1.

// NeedProgram finds a program the test depends on. Outside CI a missing one skips
// the test; in CI (CI=true) it fails it, so that a broken install cannot
// pass as a green run.
func NeedProgram(t testing.TB, program, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	msg := fmt.Sprintf("%s not found: install the Debian package %s (apt-get install %s) to run the end-to-end tests", program, pkg, pkg)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// StartDockerRegistry runs docker-registry on a free loopback port with a
// minimal configuration and returns its host:port. The process is killed
// when the test ends.
func StartDockerRegistry(t testing.TB) string {
	t.Helper()
	return startDockerRegistry(t, "", "")
}

// StartDockerRegistryNotifying is StartDockerRegistry with a
// notification endpoint: docker-registry posts its events envelope to
// url, with "Authorization: Bearer secret", as soon as each push lands.
func StartDockerRegistryNotifying(t testing.TB, url, secret string) string {
	t.Helper()
	return startDockerRegistry(t, "", `notifications:
  endpoints:
    - name: catalogbot
      url: `+url+`
      headers:
        Authorization: [Bearer `+secret+`]
      timeout: 5s
      threshold: 1
      backoff: 1s
`)
}

// StartDockerRegistryAuth is StartDockerRegistry with basic authentication:
// every request needs a user of the htpasswd file (bcrypt entries only, as
// docker-registry requires).
func StartDockerRegistryAuth(t testing.TB, htpasswd string) string {
	t.Helper()
	return startDockerRegistry(t, htpasswd, "")
}

func startDockerRegistry(t testing.TB, htpasswd, extra string) string {
	t.Helper()
	bin := NeedProgram(t, "docker-registry", "docker-registry")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()

	dir := t.TempDir()
	config := filepath.Join(dir, "config.yml")
	err = os.WriteFile(config, []byte(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: `+filepath.Join(dir, "data")+`
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: `+host+`
`+authConfig(htpasswd)+extra), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", config)
	// docker-registry reads REGISTRY_* variables as configuration, and
	// REGISTRY_AUTH_FILE, which tests set for the client side, would
	// become an "auth.file" access controller beside htpasswd.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REGISTRY_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("docker-registry output:\n%s", logs.String())
		}
	})

	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			// With authentication an anonymous /v2/ is refused: that
			// is the registry up and asking for a login.
			if resp.StatusCode == http.StatusOK || htpasswd != "" && resp.StatusCode == http.StatusUnauthorized {
				return host
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not come up on %s: %v\n%s", host, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func authConfig(htpasswd string) string {
	if htpasswd == "" {
		return ""
	}
	return "auth:\n  htpasswd:\n    realm: catalogbot-e2e\n    path: " + htpasswd + "\n"
}
