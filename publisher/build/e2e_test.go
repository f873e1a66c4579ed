//go:build e2e

package build_test

// The end-to-end test publishes catalog images to Debian's docker-registry
// (the CNCF distribution registry) on 127.0.0.1 and reads them back with
// skopeo, a client that shares no code with go-containerregistry. Run it
// with make e2e.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/publisher/build"
)

// need finds a program the test depends on. Outside CI a missing one skips
// the test; in CI (CI=true) it fails it, so that a broken install cannot
// pass as a green run.
func need(t *testing.T, program, pkg string) string {
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

// startRegistry runs docker-registry on a free loopback port with a
// minimal configuration and returns its host:port. The process is killed
// when the test ends.
func startRegistry(t *testing.T) string {
	t.Helper()
	bin := need(t, "docker-registry", "docker-registry")
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
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", config)
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
			if resp.StatusCode == http.StatusOK {
				return host
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not come up on %s: %v\n%s", host, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// skopeoInspect is the part of `skopeo inspect` the test reads.
type skopeoInspect struct {
	Digest       string
	Created      time.Time
	Labels       map[string]string
	Architecture string
	Os           string
	Layers       []string
}

func skopeo(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := need(t, "skopeo", "skopeo")
	cmd := exec.Command(bin, append([]string{"inspect", "--tls-verify=false", "--no-tags"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skopeo inspect %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

func TestE2EPublish(t *testing.T) {
	host := startRegistry(t)
	ctx := context.Background()
	base := host + "/operator-framework/opm:v1"
	push(t, base, baseIndex(t, "linux/amd64", "linux/arm64"))

	tests := []struct {
		name   string
		opts   build.Options
		target string
		arch   []string
		cmd    []string
	}{
		{"scratch", build.Options{Base: build.BaseScratch}, host + "/team/catalog:scratch", []string{"amd64"}, nil},
		{"opm", build.Options{OPMImage: base}, host + "/team/catalog:opm", []string{"amd64", "arm64"},
			[]string{"serve", "/configs", "--cache-dir=/tmp/cache"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustBuild(t, fixture, tt.opts)
			got, err := build.Push(ctx, res, tt.target, build.PushOptions{})
			if err != nil || got.Unchanged {
				t.Fatalf("first push: %+v %v", got, err)
			}
			got, err = build.Push(ctx, mustBuild(t, fixture, tt.opts), tt.target, build.PushOptions{})
			if err != nil || !got.Unchanged {
				t.Fatalf("second push: %+v %v, want unchanged", got, err)
			}

			// The manifest skopeo reads has the digest the build computed.
			raw := skopeo(t, "--raw", "docker://"+tt.target)
			if d := sha256Digest(raw); d != res.Digest.String() {
				t.Errorf("registry manifest digest %s, built %s", d, res.Digest)
			}
			for _, arch := range tt.arch {
				var info skopeoInspect
				out := skopeo(t, "--override-os", "linux", "--override-arch", arch, "docker://"+tt.target)
				if err := json.Unmarshal(out, &info); err != nil {
					t.Fatal(err)
				}
				if info.Labels[build.ConfigsLabel] != "/configs" || info.Architecture != arch || !info.Created.Equal(time.Unix(0, 0)) {
					t.Errorf("%s: labels %v, arch %s, created %s", arch, info.Labels, info.Architecture, info.Created)
				}
				img := res.Image
				if res.Index != nil {
					m, err := res.Index.IndexManifest()
					if err != nil {
						t.Fatal(err)
					}
					for _, d := range m.Manifests {
						if d.Platform.Architecture == arch {
							if img, err = res.Index.Image(d.Digest); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				l := configsLayer(t, img)
				ld, _ := l.Digest()
				if len(info.Layers) == 0 || info.Layers[len(info.Layers)-1] != ld.String() {
					t.Errorf("%s: layers %v, want the last to be %s", arch, info.Layers, ld)
				}

				var cfg struct {
					Config struct{ Entrypoint, Cmd []string }
				}
				out = skopeo(t, "--config", "--override-os", "linux", "--override-arch", arch, "docker://"+tt.target)
				if err := json.Unmarshal(out, &cfg); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(cfg.Config.Cmd, tt.cmd) {
					t.Errorf("%s: cmd %q, want %q", arch, cfg.Config.Cmd, tt.cmd)
				}
			}
		})
	}
}

func sha256Digest(data []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}
