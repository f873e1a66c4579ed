package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// pinDeploy returns the kustomization src with the service image set to
// the released image ref (repository@sha256:...) through kustomize's
// images field: deploy/ at a release tag then runs that release's image by
// digest, where main's names the moving :latest tag. The field is
// appended, so the file keeps its comments; a kustomization that sets
// images already is refused rather than given two entries.
func pinDeploy(src []byte, ref string) ([]byte, error) {
	d, err := name.NewDigest(ref)
	if err != nil {
		return nil, fmt.Errorf("image %q: want repository@sha256:digest: %w", ref, err)
	}
	var k struct {
		Kind   string `json:"kind"`
		Images []any  `json:"images"`
	}
	if err := yaml.Unmarshal(src, &k); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if k.Kind != "Kustomization" {
		return nil, fmt.Errorf("kind is %q, not Kustomization", k.Kind)
	}
	if k.Images != nil {
		return nil, errors.New("images is set already: pin a kustomization of main, not of a release")
	}
	var out bytes.Buffer
	out.Write(src)
	if len(src) > 0 && src[len(src)-1] != '\n' {
		out.WriteByte('\n')
	}
	fmt.Fprintf(&out, "# The release's service image, by digest (written by the release workflow).\n")
	fmt.Fprintf(&out, "images:\n  - name: %s\n    digest: %s\n", d.Context().Name(), d.DigestStr())

	// Read it back: kustomize must see exactly that entry.
	var back struct {
		Images []struct {
			Name   string `json:"name"`
			Digest string `json:"digest"`
		} `json:"images"`
	}
	if err := yaml.Unmarshal(out.Bytes(), &back); err != nil {
		return nil, fmt.Errorf("the rewritten file is not YAML: %w", err)
	}
	if len(back.Images) != 1 || back.Images[0].Name != d.Context().Name() || back.Images[0].Digest != d.DigestStr() {
		return nil, fmt.Errorf("the rewrite gives images %+v", back.Images)
	}
	return out.Bytes(), nil
}

// pinDeployFile rewrites the kustomization file in place.
func pinDeployFile(file, ref string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := pinDeploy(src, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}
