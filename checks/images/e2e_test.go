//go:build e2e

package images_test

// The end-to-end test runs Debian's docker-registry (the CNCF distribution
// registry) on 127.0.0.1, seeds it with go-containerregistry, and verifies
// the fixture under testdata/e2e with the library and with the built
// catalogbot binary. skopeo cross-checks a digest. Run it with make e2e.

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// render copies the fixture into dir with the registry and digests filled in.
func render(t *testing.T, dir, host string, digests map[string]v1.Hash) {
	t.Helper()
	expand := func(s string) string {
		return os.Expand(s, func(k string) string {
			if k == "REGISTRY" {
				return host
			}
			if n, ok := strings.CutPrefix(k, "DIGEST:"); ok {
				if d, ok := digests[n]; ok {
					return d.String()
				}
			}
			t.Fatalf("fixture names unknown ${%s}", k)
			return ""
		})
	}
	src := filepath.Join("testdata", "e2e")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(expand(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestE2E(t *testing.T) {
	host := registrytest.StartDockerRegistry(t)
	ref := func(s string) string { return host + "/" + s }
	labels := map[string]string{images.CatalogLabel: "/configs"}
	digests := map[string]v1.Hash{
		"foo-bundle": registrytest.Push(t, ref("team/foo-bundle:v1.0.0"), registrytest.RandomImage(t)),
		"foo":        registrytest.Push(t, ref("team/foo:v1"), registrytest.RandomImage(t)),
		"foo-agent":  registrytest.Push(t, ref("team/foo-agent:v1"), registrytest.RandomImage(t)),
		"foo-multi-bundle": registrytest.PushIndex(t, ref("team/foo-multi-bundle:v1.2.0"), registrytest.Index(t, func(string) v1.Image {
			return registrytest.RandomImage(t)
		}, "linux/amd64", "linux/arm64")),
		"foo-catalog": registrytest.Push(t, ref("team/foo-catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", labels)),
		"multi-catalog": registrytest.PushIndex(t, ref("team/multi-catalog:v1"), registrytest.Index(t, func(p string) v1.Image {
			return registrytest.CatalogImage(t, p, labels)
		}, "linux/amd64", "linux/arm64")),
		"plain": registrytest.Push(t, ref("team/plain:v1"), registrytest.CatalogImage(t, "linux/amd64", map[string]string{"vendor": "e2e"})),
	}
	dir := t.TempDir()
	render(t, dir, host, digests)

	want := map[string]registry.Class{
		ref("team/foo-bundle@" + digests["foo-bundle"].String()):       registry.ClassOK,
		ref("team/foo-bundle:v1.1.0"):                                  registry.ClassNotFound,
		ref("team/foo-multi-bundle:v1.2.0"):                            registry.ClassPolicy,
		ref("team/foo:v1"):                                             registry.ClassOK,
		ref("team/foo-agent@" + digests["foo-agent"].String()):         registry.ClassOK,
		ref("gone/agent:v1"):                                           registry.ClassNotFound,
		ref("team/foo-catalog:v1"):                                     registry.ClassOK,
		ref("team/multi-catalog@" + digests["multi-catalog"].String()): registry.ClassOK,
		ref("team/plain:v1"):                                           registry.ClassPolicy,
		ref("team/bar-catalog:v9"):                                     registry.ClassNotFound,
	}

	t.Run("library", func(t *testing.T) {
		res, err := fbc.Validate(context.Background(), os.DirFS(filepath.Join(dir, "catalog")), fbc.Options{Images: true})
		if err != nil || !res.Valid() {
			t.Fatalf("fixture catalog: %v %v", err, res.Findings)
		}
		data, err := os.ReadFile(filepath.Join(dir, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		file, findings := catalogyaml.Parse("catalog.yaml", data)
		if len(findings) != 0 {
			t.Fatalf("fixture catalog.yaml: %v", findings)
		}
		uses := append(images.FromFBC("catalog", res.Images), images.FromCatalogYAML(file)...)
		o := images.Options{Policy: images.DefaultPolicy(), Keychain: registry.ContainersKeychain()}
		o.Policy.Platforms = []string{"linux/amd64"}
		v, err := images.New(o)
		if err != nil {
			t.Fatal(err)
		}
		results, err := v.VerifyUses(context.Background(), uses)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]registry.Class{}
		for _, r := range results {
			got[r.Image] = r.Class
			if r.Class != want[r.Image] {
				t.Errorf("%s: %s (%s), want %s", r.Image, r.Class, r.Message, want[r.Image])
			}
			if r.Image == ref("team/foo:v1") && (len(r.Locations) != 2 || r.Digest != digests["foo"].String()) {
				t.Errorf("%s: %d locations and digest %s, want 2 and %s", r.Image, len(r.Locations), r.Digest, digests["foo"])
			}
		}
		if len(got) != len(want) {
			t.Errorf("checked %d references, want %d", len(got), len(want))
		}
	})

	t.Run("cli", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "catalogbot")
		build := exec.Command("go", "build", "-o", bin, "github.com/catalogbot/catalogbot/cmd/catalogbot")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		home := t.TempDir()
		run := func(args ...string) (int, string, string) {
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+home, "DOCKER_CONFIG="+home, "REGISTRY_AUTH_FILE=", "XDG_RUNTIME_DIR=", "XDG_CONFIG_HOME="+home)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, stdout.String(), stderr.String()
		}

		code, stdout, stderr := run("images", "verify", "catalog", "--catalog-yaml", "catalog.yaml", "-o", "json",
			"--insecure-registry", host, "--allow-registry", host+"/team", "--allow-registry", host+"/gone", "--cache-dir", filepath.Join(home, "cache"))
		if code != 1 || stderr != "" {
			t.Errorf("exit %d, stderr %q; want 1 and nothing", code, stderr)
		}
		var doc images.Document
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		for _, r := range doc.References {
			if r.Class != want[r.Image] {
				t.Errorf("%s: %s (%s), want %s", r.Image, r.Class, r.Message, want[r.Image])
			}
		}

		// The present images alone, with digests required: the tags
		// fail as policy and name the digest to pin to.
		code, stdout, _ = run("images", "verify", "--require-digest", "--base", ref("team/foo:v1"))
		wantLine := "base image: policy: " + ref("team/foo:v1") + ": it is not pinned by digest; pin it as " + ref("team/foo@"+digests["foo"].String()) + "\n"
		if code != 1 || !strings.HasPrefix(stdout, wantLine) {
			t.Errorf("exit %d, stdout:\n%s\nwant exit 1 and:\n%s", code, stdout, wantLine)
		}
		code, stdout, _ = run("images", "verify", "--require-digest", "--base", ref("team/foo@"+digests["foo"].String()))
		if code != 0 || stdout != "images: 1 reference: 1 ok\n" {
			t.Errorf("exit %d, stdout %q; want 0 and all ok", code, stdout)
		}
	})

	t.Run("skopeo", func(t *testing.T) {
		skopeo := registrytest.NeedProgram(t, "skopeo", "skopeo")
		out, err := exec.Command(skopeo, "inspect", "--tls-verify=false", "--no-tags", "docker://"+ref("team/foo:v1")).Output()
		if err != nil {
			t.Fatalf("skopeo inspect: %v", err)
		}
		var info struct{ Digest string }
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatal(err)
		}
		v, err := images.New(images.Options{Keychain: registry.ContainersKeychain()})
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.VerifyUses(context.Background(), []images.Use{{Image: ref("team/foo:v1"), Location: images.Location{Kind: images.KindRelated}}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Digest != info.Digest || info.Digest != digests["foo"].String() {
			t.Errorf("digest: catalogbot %s, skopeo %s, pushed %s", res[0].Digest, info.Digest, digests["foo"])
		}
	})
}
