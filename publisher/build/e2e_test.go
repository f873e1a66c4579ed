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
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

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
	bin := registrytest.NeedProgram(t, "skopeo", "skopeo")
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
	host := registrytest.StartDockerRegistry(t)
	ctx := context.Background()
	base := host + "/operator-framework/opm:v1"
	registrytest.PushIndex(t, base, baseIndex(t, "linux/amd64", "linux/arm64"))

	tests := []struct {
		name   string
		opts   build.Options
		target string
		arch   []string
		cmd    []string
	}{
		{"scratch", build.Options{Base: build.BaseScratch}, host + "/team/catalog:scratch", []string{"amd64"}, nil},
		{"opm", build.Options{OPMImage: base}, host + "/team/catalog:opm", []string{"amd64", "arm64"},
			// Random bases have no opm: the integrity check is off.
			[]string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}},
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
