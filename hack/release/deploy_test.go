package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const releasedService = "ghcr.io/catalogbot/catalogbot@sha256:f56d0f7df1850d2a32af54f3f4f350ae0226bec5acdde0663e84e7f4ba299007"

// TestPinDeploy pins the project's own deploy/base kustomization: kustomize
// reads one images entry naming the service image by digest, the rest of
// the file is kept, and a second pin is refused.
func TestPinDeploy(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "deploy", "base", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := pinDeploy(src, releasedService)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), string(src)) {
		t.Errorf("the pin changed the file's own lines:\n%s", got)
	}
	var k struct {
		Resources []string `json:"resources"`
		Images    []struct {
			Name, Digest, NewTag string
		} `json:"images"`
	}
	if err := yaml.Unmarshal(got, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Images) != 1 || k.Images[0].Name != "ghcr.io/catalogbot/catalogbot" ||
		k.Images[0].Digest != "sha256:f56d0f7df1850d2a32af54f3f4f350ae0226bec5acdde0663e84e7f4ba299007" || len(k.Resources) == 0 {
		t.Errorf("pinned kustomization reads %+v", k)
	}
	// The deployment names the image the entry rewrites.
	dep, err := os.ReadFile(filepath.Join("..", "..", "deploy", "base", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dep), "image: ghcr.io/catalogbot/catalogbot:") {
		t.Error("deploy/base/deployment.yaml does not name ghcr.io/catalogbot/catalogbot: the pin would rewrite nothing")
	}
	if _, err := pinDeploy(got, releasedService); err == nil || !strings.Contains(err.Error(), "images is set already") {
		t.Errorf("a second pin: %v, want a refusal", err)
	}
	for _, bad := range []string{"ghcr.io/catalogbot/catalogbot:v1", "not a reference"} {
		if _, err := pinDeploy(src, bad); err == nil {
			t.Errorf("pinDeploy(%q) succeeded; want an error asking for a digest", bad)
		}
	}
	if _, err := pinDeploy([]byte("kind: Deployment\n"), releasedService); err == nil {
		t.Error("a file that is not a Kustomization was pinned")
	}
}
