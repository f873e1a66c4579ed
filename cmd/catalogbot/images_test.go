package main

// These tests run images verify against an in-process registry on
// 127.0.0.1 (checks/registry/registrytest), seeded per test.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/catalogbot/catalogbot/checks/registry"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// isolateCredentials points every credential lookup at empty places, so that
// the machine's docker or podman logins play no part.
func isolateCredentials(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("DOCKER_CONFIG", filepath.Join(home, ".docker"))
	t.Setenv("REGISTRY_AUTH_FILE", "")
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(home, "run"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home
}

// imagesFixture seeds reg and writes a catalog and a catalog.yaml that
// reference it: present images by tag and by digest, a missing bundle, a
// related image the registry refuses, a catalog image with and one without
// the catalog label, and a duplicate reference name. It returns the
// catalog directory, the catalog.yaml path and a replacer that turns the
// run's registry address, directory and digests into stable placeholders.
func imagesFixture(t *testing.T, reg *registrytest.Registry) (dir, yamlPath string, stable *strings.Replacer) {
	t.Helper()
	bundle := reg.PushRandom(t, reg.Ref("team/foo-bundle:v1.0.0"))
	operator := reg.PushRandom(t, reg.Ref("team/foo:v1"))
	reg.PushRandom(t, reg.Ref("private/agent:v1"))
	labelled := reg.Push(t, reg.Ref("team/foo-catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", map[string]string{images.CatalogLabel: "/configs"}))
	unlabelled := reg.Push(t, reg.Ref("team/bar-catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", nil))
	reg.Fail(registrytest.Fault{Repo: "private/agent", Status: 401})

	root := t.TempDir()
	dir = filepath.Join(root, "catalog")
	catalog := `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
---
schema: olm.bundle
name: foo.v1.0.0
package: foo
image: REGISTRY/team/foo-bundle@BUNDLE
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.0
relatedImages:
  - name: operator
    image: REGISTRY/team/foo:v1
  - name: bundle
    image: REGISTRY/team/foo-bundle@BUNDLE
---
schema: olm.bundle
name: foo.v1.1.0
package: foo
image: REGISTRY/team/foo-bundle:v1.1.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.1.0
relatedImages:
  - name: operator
    image: REGISTRY/team/foo:v1
  - name: agent
    image: REGISTRY/private/agent:v1
`
	refs := `name: demo
repo: REGISTRY/team/demo-catalog
tag: latest
references:
- name: foo
  image: REGISTRY/team/foo-catalog:v1
- name: bar
  image: REGISTRY/team/bar-catalog:v1
- name: foo
  image: REGISTRY/team/foo-catalog@LABELLED
`
	seed := strings.NewReplacer("REGISTRY", reg.Host, "BUNDLE", bundle.String(), "LABELLED", labelled.String())
	if err := os.MkdirAll(filepath.Join(dir, "foo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "foo", "catalog.yaml"), []byte(seed.Replace(catalog)), 0o644); err != nil {
		t.Fatal(err)
	}
	yamlPath = filepath.Join(root, "catalog.yaml")
	if err := os.WriteFile(yamlPath, []byte(seed.Replace(refs)), 0o644); err != nil {
		t.Fatal(err)
	}
	stable = strings.NewReplacer(root, "TMP", reg.Host, "REGISTRY",
		bundle.String(), "sha256:BUNDLE", operator.String(), "sha256:OPERATOR",
		labelled.String(), "sha256:LABELLED", unlabelled.String(), "sha256:UNLABELLED")
	return dir, yamlPath, stable
}

func TestImagesVerifyGolden(t *testing.T) {
	isolateCredentials(t)
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			reg := registrytest.New(t)
			dir, yamlPath, stable := imagesFixture(t, reg)
			r := cli(t, nil, "images", "verify", dir, "--catalog-yaml", yamlPath, "-o", format)
			if r.code != exitInvalid {
				t.Errorf("exit status %d, want %d", r.code, exitInvalid)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "images", "verify."+format+".golden"), []byte(stable.Replace(r.stdout)))
		})
	}
}

// TestImagesVerifyJSONShape decodes the JSON rather than comparing text:
// every reference once, with all its locations.
func TestImagesVerifyJSONShape(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	dir, yamlPath, stable := imagesFixture(t, reg)
	r := cli(t, nil, "images", "verify", dir, "--catalog-yaml", yamlPath, "-o", "json")
	var doc images.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	got := map[string]string{}
	for _, ref := range doc.References {
		got[stable.Replace(ref.Image)] = string(ref.Class)
		if ref.Image == reg.Ref("team/foo:v1") && len(ref.Locations) != 2 {
			t.Errorf("%s: %d locations, want 2", ref.Image, len(ref.Locations))
		}
		if ref.Class == registry.ClassOK && ref.Digest == "" {
			t.Errorf("%s: ok without a digest", ref.Image)
		}
	}
	want := map[string]string{
		"REGISTRY/team/foo-bundle@sha256:BUNDLE":    "ok",
		"REGISTRY/team/foo-bundle:v1.1.0":           "not_found",
		"REGISTRY/team/foo:v1":                      "ok",
		"REGISTRY/private/agent:v1":                 "unauthorized",
		"REGISTRY/team/foo-catalog:v1":              "ok",
		"REGISTRY/team/foo-catalog@sha256:LABELLED": "ok",
		"REGISTRY/team/bar-catalog:v1":              "policy",
	}
	if len(got) != len(want) {
		t.Errorf("references %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if len(doc.Findings) != 1 || doc.Findings[0].Rule != "CY6" {
		t.Errorf("findings %+v, want the duplicate name", doc.Findings)
	}
}

func TestImagesVerifyAllOK(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("a/b:v1"))
	base := reg.Push(t, reg.Ref("a/opm:v1"), registrytest.CatalogImage(t, "linux/amd64", nil))
	r := cli(t, nil, "images", "verify", "--base", reg.Ref("a/opm@"+base.String()), "--platform", "linux/amd64", "--require-digest")
	if r.code != exitOK || r.stdout != "images: 1 reference: 1 ok\n" || r.stderr != "" {
		t.Errorf("got %+v", r)
	}
}

// TestImagesUserAgent: registries see which catalogbot release asks.
func TestImagesUserAgent(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("a/b:v1"))
	if r := cli(t, nil, "images", "verify", "--base", reg.Ref("a/b:v1")); r.code != exitOK {
		t.Fatalf("got %+v", r)
	}
	reqs := reg.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the registry")
	}
	for _, q := range reqs {
		// go-containerregistry appends its own name after ours.
		if !strings.HasPrefix(q.UserAgent, "catalogbot/dev") {
			t.Errorf("%s %s: User-Agent %q; want it to start with catalogbot/dev", q.Method, q.Path, q.UserAgent)
		}
	}
}

// TestImagesRequireDigest: a tag is a policy failure that names the digest
// to pin to.
func TestImagesRequireDigest(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	dir, _, stable := imagesFixture(t, reg)
	r := cli(t, nil, "images", "verify", dir, "--require-digest")
	if r.code != exitInvalid {
		t.Errorf("exit status %d, want %d", r.code, exitInvalid)
	}
	want := "TMP/catalog/foo/catalog.yaml:25: foo/foo.v1.0.0: policy: REGISTRY/team/foo:v1: it is not pinned by digest; pin it as REGISTRY/team/foo@sha256:OPERATOR [also at TMP/catalog/foo/catalog.yaml:40]\n"
	if out := stable.Replace(r.stdout); !strings.Contains(out, want) {
		t.Errorf("stdout:\n%s\nwant a line:\n%s", out, want)
	}
}

// TestImagesAllowRegistry: images outside the allowlist fail without any
// request to their registry.
func TestImagesAllowRegistry(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	dir, _, _ := imagesFixture(t, reg)
	reg.Reset()
	r := cli(t, nil, "images", "verify", dir, "--allow-registry", "quay.io/example")
	if r.code != exitInvalid || !strings.HasSuffix(r.stdout, "images: 4 references: 4 policy\n") {
		t.Errorf("got %+v", r)
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("%d requests to a registry outside the allowlist", n)
	}
}

// TestImagesCacheDir: with --cache-dir, a second run asks the registry only
// about tags.
func TestImagesCacheDir(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	d := reg.PushRandom(t, reg.Ref("a/b:v1"))
	cache := t.TempDir()
	args := []string{"images", "verify", "--cache-dir", cache, "--base", reg.Ref("a/b@" + d.String())}
	if r := cli(t, nil, args...); r.code != exitOK {
		t.Fatalf("first run: %+v", r)
	}
	reg.Reset()
	if r := cli(t, nil, args...); r.code != exitOK {
		t.Fatalf("second run: %+v", r)
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("second run made %d requests, want none: %v", n, reg.Requests())
	}
}

// TestImagesCredentials: credentials from REGISTRY_AUTH_FILE open a private
// registry; the password shows nowhere, not even in the debug log.
func TestImagesCredentials(t *testing.T) {
	const user, password = "robot", "hunter2-very-secret"
	for _, tt := range []struct {
		name, password string
		code           int
		class          string
	}{
		{"right password", password, exitOK, "ok"},
		{"wrong password", password + "-expired", exitInvalid, "unauthorized"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := isolateCredentials(t)
			reg := registrytest.New(t)
			reg.PushRandom(t, reg.Ref("private/app:v1"))
			reg.RequireBasic(user, password)
			auth := filepath.Join(home, "auth.json")
			b64 := base64.StdEncoding.EncodeToString([]byte(user + ":" + tt.password))
			if err := os.WriteFile(auth, []byte(`{"auths":{"`+reg.Host+`":{"auth":"`+b64+`"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("REGISTRY_AUTH_FILE", auth)
			r := cli(t, nil, "--log-level", "debug", "images", "verify", "-o", "json", "--base", reg.Ref("private/app:v1"))
			if r.code != tt.code || !strings.Contains(r.stdout, `"result": "`+tt.class+`"`) {
				t.Errorf("got %+v, want exit %d and %s", r, tt.code, tt.class)
			}
			if !strings.Contains(r.stderr, "registry request") {
				t.Errorf("no debug log of requests in %q", r.stderr)
			}
			for _, leak := range []string{password, b64, registrytest.BasicAuth(user, password)} {
				if strings.Contains(r.stdout+r.stderr, leak) {
					t.Errorf("output contains %q:\n%s\n%s", leak, r.stdout, r.stderr)
				}
			}
		})
	}
}

func TestImagesUsageErrors(t *testing.T) {
	isolateCredentials(t)
	tests := []struct {
		name    string
		args    []string
		wantErr string
		code    int
	}{
		{"nothing to verify", []string{"images", "verify"},
			"catalogbot: images verify needs a catalog directory, --catalog-yaml or --base", exitError},
		{"two DIRs", []string{"images", "verify", validDir, brokenDir},
			"catalogbot: images verify takes at most one catalog directory, got 2 arguments", exitError},
		{"unknown output format", []string{"images", "verify", "-o", "sarif", validDir},
			`catalogbot: invalid argument "sarif" for "-o, --output" flag: unknown output format "sarif" (want text, json)`, exitError},
		{"bad allowed registry", []string{"images", "verify", "--allow-registry", "quay.io/Team", validDir},
			`catalogbot: allowed registry "quay.io/Team": "Team" is not a repository prefix`, exitError},
		{"bad platform", []string{"images", "verify", "--platform", "amd64", validDir},
			`catalogbot: invalid --platform: platform "amd64": want os/arch or os/arch/variant, such as linux/amd64`, exitError},
		{"bad insecure registry", []string{"images", "verify", "--insecure-registry", "http://localhost:5000", validDir},
			`catalogbot: insecure registry "http://localhost:5000": want a host or host:port`, exitError},
		{"unknown subcommand", []string{"images", "check"},
			`catalogbot: unknown command "check" for "catalogbot images"`, exitError},
		{"missing DIR", []string{"images", "verify", "testdata/catalogs/missing"},
			"catalogbot: stat testdata/catalogs/missing: no such file or directory", exitError},
		{"missing catalog.yaml", []string{"images", "verify", "--catalog-yaml", "testdata/missing.yaml"},
			"catalogbot: open testdata/missing.yaml: no such file or directory", exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d", r.code, tt.code)
			}
			if first, _, _ := strings.Cut(r.stderr, "\n"); first != tt.wantErr {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", r.stderr, tt.wantErr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

// TestImagesInvalidCatalogYAML: entries of a broken catalog.yaml are
// reported with their lines; the entries that are fine are still checked.
func TestImagesInvalidCatalogYAML(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	reg.Push(t, reg.Ref("team/foo-catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", map[string]string{images.CatalogLabel: "/configs"}))
	path := filepath.Join(t.TempDir(), "catalog.yaml")
	os.WriteFile(path, []byte("name: demo\nreferences:\n- name: ../foo\n  image: "+reg.Ref("team/foo-catalog:v1")+"\n- name: bar\n  image: "+reg.Host+"/Team/Bar:v1\n"), 0o644)
	r := cli(t, nil, "images", "verify", "--catalog-yaml", path)
	out := strings.ReplaceAll(r.stdout, path, "catalog.yaml")
	want := `catalog.yaml:3: reference name "../foo" cannot be a directory name: it contains a path separator; want a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit
catalog.yaml:6: references[1].image "` + reg.Host + `/Team/Bar:v1" is not a valid image reference: repository names must be lower-case
images: 1 reference: 1 ok
`
	if r.code != exitInvalid || out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 1 and:\n%s", r.code, out, want)
	}
}

// TestImagesVerifyTarpit: 20 images on a registry that accepts connections
// and never answers cost one --reference-timeout, not one each: after the
// first reference runs out of it, the others fail at once, naming the
// registry.
func TestImagesVerifyTarpit(t *testing.T) {
	isolateCredentials(t)
	tarpit := registrytest.NewTarpit(t)
	var b strings.Builder
	b.WriteString("name: demo\nreferences:\n")
	for i := range 20 {
		fmt.Fprintf(&b, "- name: ref%d\n  image: %s/team/ref%d:v1\n", i, tarpit.Addr, i)
	}
	config := filepath.Join(t.TempDir(), "catalog.yaml")
	if err := os.WriteFile(config, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		done <- cli(t, nil, "images", "verify", "--catalog-yaml", config, "--insecure-registry", tarpit.Addr,
			"--reference-timeout", "300ms", "-o", "json")
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("images verify did not stop asking a registry that never answers")
	}
	var out struct {
		References []struct{ Result, Message string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != exitInvalid {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", r.code, r.stdout, r.stderr, err)
	}
	waited, failedFast := 0, 0
	for _, ref := range out.References {
		switch {
		case ref.Result != "transport":
			t.Errorf("result %q, want transport: %s", ref.Result, ref.Message)
		case strings.Contains(ref.Message, "(300ms, --reference-timeout)"):
			waited++
		case strings.Contains(ref.Message, "earlier in this check"):
			failedFast++
		default:
			t.Errorf("unexpected message %q", ref.Message)
		}
	}
	if len(out.References) != 20 || waited == 0 || waited+failedFast != 20 || failedFast < 16 {
		t.Errorf("%d references: %d waited for the deadline, %d failed at once; want 20, most at once", len(out.References), waited, failedFast)
	}
}
