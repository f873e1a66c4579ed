package main

import (
	"encoding/json"
	"github.com/catalogbot/catalogbot/checks/registry"
	"net/http"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// TestFlagChecks: references and platforms that cannot work are usage
// errors (exit 2) that name the problem and the fix, decided before any
// registry is contacted: the registry records no request.
func TestFlagChecks(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	reg.PushIndex(t, reg.Ref("operator-framework/opm:v1"), registrytest.Index(t, func(p string) v1.Image {
		return registrytest.CatalogImage(t, p, nil)
	}, "linux/amd64"))
	base := reg.Ref("operator-framework/opm:v1")
	yamlPath := writeCatalogYAML(t, "name: c\nreferences:\n- name: one\n  image: "+reg.Ref("example/catalog:v1")+"\n")
	tests := []struct {
		name string
		args []string
		// want is in the first line on stderr.
		want string
	}{
		{"publish short --image", []string{"publish", "--catalog", validDir, "--base", base, "--image", "foo:v1"},
			`invalid --image "foo:v1": no registry host: it would be pushed to Docker Hub; write the registry host too`},
		{"publish misspelt --base", []string{"publish", "--catalog", validDir, "--base", "scrach", "--image", "oci:out"},
			`invalid --base "scrach": not opm, scratch or an image reference`},
		{"publish short --opm-image", []string{"publish", "--catalog", validDir, "--opm-image", "opm:latest", "--image", "oci:out"},
			`invalid --opm-image "opm:latest"`},
		{"publish uppercase --image", []string{"publish", "--catalog", validDir, "--image", "quay.io/Team/catalog:v1"},
			`invalid --image "quay.io/Team/catalog:v1": invalid reference format: repository name must be lowercase; write a reference such as`},
		{"publish empty layout", []string{"publish", "--catalog", validDir, "--image", "oci:"},
			`invalid --image "oci:": an OCI layout target needs a directory`},
		{"publish unknown platform", []string{"publish", "--catalog", validDir, "--base", base, "--image", reg.Ref("t/c:v1"), "--platform", "linux/amd46"},
			`invalid --platform: platform "linux/amd46": unknown architecture "amd46" for linux (did you mean linux/amd64?)`},
		{"rebuild short --image", []string{"rebuild", yamlPath, "--image", "foo:v1"},
			`invalid --image "foo:v1": no registry host`},
		{"rebuild misspelt --base", []string{"rebuild", yamlPath, "--base", "scrach", "--image", "oci:out"},
			`invalid --base "scrach"`},
		{"rebuild unknown platform", []string{"rebuild", yamlPath, "--platform", "linux/arm/v9", "--image", "oci:out"},
			`invalid --platform: platform "linux/arm/v9": unknown variant "v9" of arm`},
		{"images verify short --base", []string{"images", "verify", "--base", "foo:v1"},
			`invalid --base "foo:v1": not opm, scratch or an image reference (repository name must be canonical)`},
		{"publish --insecure-registry with a scheme", []string{"publish", "--catalog", validDir, "--image", "oci:out", "--insecure-registry", "http://" + reg.Host},
			`invalid --insecure-registry "http://` + reg.Host + `": want a registry HOST or HOST:PORT`},
		{"assemble --insecure-registry with a path", []string{"assemble", yamlPath, "-o", "out", "--insecure-registry", reg.Host + "/team"},
			`invalid --insecure-registry "` + reg.Host + `/team"`},
		{"render --insecure-registry empty", []string{"render", reg.Ref("example/catalog:v1"), "--insecure-registry", ""},
			`invalid --insecure-registry ""`},
		{"images verify unknown platform", []string{"images", "verify", "--catalog-yaml", yamlPath, "--platform", "linux/amd46"},
			`invalid --platform: platform "linux/amd46"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.Reset()
			r := cli(t, nil, tt.args...)
			first, _, _ := strings.Cut(r.stderr, "\n")
			if r.code != exitError || !strings.Contains(first, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, tt.want)
			}
			if !strings.Contains(r.stderr, "--help' for usage") {
				t.Errorf("no pointer to --help:\n%s", r.stderr)
			}
			if n := len(reg.Requests()); n != 0 {
				t.Errorf("%d registry requests before the command line was refused: %v", n, reg.Requests())
			}
		})
	}
}

// TestFlagChecksAccept: what the checks must let through.
func TestFlagChecksAccept(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"oci layout", checkImageFlag("publish", "--image", "oci:out")},
		{"oci layout and tag", checkImageFlag("publish", "--image", "oci:out:v1")},
		{"localhost", checkImageFlag("publish", "--image", "localhost/catalog:v1")},
		{"port", checkImageFlag("publish", "--image", "127.0.0.1:5000/team/catalog")},
		{"digest", checkImageFlag("publish", "--image", "quay.io/team/catalog@sha256:"+strings.Repeat("a", 64))},
		{"opm", checkBaseFlag("publish", "--base", "opm")},
		{"scratch", checkBaseFlag("publish", "--base", "scratch")},
		{"base image", checkBaseFlag("publish", "--base", "registry.example.com/base:v1")},
		{"platforms", checkPlatformFlags("publish", []string{"linux/amd64", "linux/arm64/v8", "linux/ppc64le", "linux/s390x"})},
	}
	for _, tt := range tests {
		if tt.err != nil {
			t.Errorf("%s: %v", tt.name, tt.err)
		}
	}
}

// TestImagesBaseImageDeprecated: the old flag still works and says what to
// use instead.
func TestImagesBaseImageDeprecated(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	d := reg.PushRandom(t, reg.Ref("a/b:v1"))
	ref := reg.Ref("a/b@" + d.String())
	for _, flag := range []string{"--base", "--base-image"} {
		r := cli(t, nil, "images", "verify", flag, ref)
		if r.code != exitOK || r.stdout != "images: 1 reference: 1 ok\n" {
			t.Errorf("%s: %+v", flag, r)
		}
		deprecated := r.stderr == "catalogbot: --base-image is deprecated; use --base\n"
		if deprecated != (flag == "--base-image") {
			t.Errorf("%s: stderr %q", flag, r.stderr)
		}
	}
}

// TestRequireDigest: with --require-digest a tag is a policy failure
// whatever its registry answers; when the registry answers, the message
// names the digest to pin to.
func TestRequireDigest(t *testing.T) {
	isolateCredentials(t)
	t.Setenv(timeout.EnvTimeout, "200ms")
	reg := registrytest.New(t)
	d := reg.PushRandom(t, reg.Ref("team/foo:v1"))
	silent, _ := silentRegistry(t)
	tests := []struct {
		name  string
		image string
		fault *registrytest.Fault
		// want is in the reference's message.
		want string
	}{
		{"reachable", reg.Ref("team/foo:v1"), nil, "it is not pinned by digest; pin it as " + reg.Ref("team/foo@"+d.String())},
		{"not found", reg.Ref("team/gone:v1"), nil, "it is not pinned by digest; pin it as " + reg.Ref("team/gone") + "@sha256:... (the tag could not be resolved to suggest the digest: not_found"},
		{"unauthorized", reg.Ref("team/private:v1"), &registrytest.Fault{Repo: "team/private", Status: http.StatusUnauthorized},
			"(the tag could not be resolved to suggest the digest: unauthorized"},
		{"silent registry", silent + "/team/foo:v1", nil, "(the tag could not be resolved to suggest the digest: transport"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fault != nil {
				reg.Fail(*tt.fault)
			}
			r := cli(t, nil, "images", "verify", "--require-digest", "--base", tt.image, "-o", "json", "--insecure-registry", silent)
			var doc images.Document
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("exit %d, %v in %q; stderr %s", r.code, err, r.stdout, r.stderr)
			}
			if r.code != exitInvalid || len(doc.References) != 1 {
				t.Fatalf("exit %d, %+v", r.code, doc)
			}
			got := doc.References[0]
			if got.Class != registry.ClassPolicy || !strings.Contains(got.Message, tt.want) {
				t.Errorf("%s (%s), want policy and %q", got.Class, got.Message, tt.want)
			}
		})
	}
}
