// Package templatetest builds small registry+v1 bundle images of any
// package and version, and pushes them to a registry, for tests of catalog
// templates (which name bundles by image only).
package templatetest

import (
	"fmt"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// Bundle describes one bundle image. Name defaults to Package.vVersion.
type Bundle struct {
	Package     string
	Version     string
	Name        string
	Description string
	// Icon, when set, is the CSV's first icon (base64 data, image/svg+xml).
	Icon string
}

// CSVName is the bundle's CSV name.
func (b Bundle) CSVName() string {
	if b.Name != "" {
		return b.Name
	}
	return b.Package + ".v" + b.Version
}

// Image builds the bundle image: a CSV with an owned CRD, the CRD, and the
// annotations operator-sdk writes.
func Image(t testing.TB, b Bundle) v1.Image {
	t.Helper()
	icon := ""
	if b.Icon != "" {
		icon = fmt.Sprintf("  icon:\n  - base64data: %s\n    mediatype: image/svg+xml\n", b.Icon)
	}
	desc := ""
	if b.Description != "" {
		desc = fmt.Sprintf("  description: %q\n", b.Description)
	}
	csv := fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: %s
  annotations:
    containerImage: example.com/%s-operator:v%s
spec:
  displayName: %s
%s%s  version: %s
  installModes:
  - type: AllNamespaces
    supported: true
  customresourcedefinitions:
    owned:
    - name: widgets.%s.example.com
      version: v1
      kind: Widget
  install:
    strategy: deployment
    spec:
      deployments:
      - name: %s-operator
        spec:
          selector:
            matchLabels: {app: %s}
          template:
            metadata:
              labels: {app: %s}
            spec:
              containers:
              - name: manager
                image: example.com/%s-operator:v%s
`, b.CSVName(), b.Package, b.Version, b.Package, desc, icon, b.Version, b.Package, b.Package, b.Package, b.Package, b.Package, b.Version)
	crd := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%s.example.com
spec:
  group: %s.example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
`, b.Package, b.Package)
	annotations := fmt.Sprintf(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: stable
`, b.Package)
	return rendertest.Image(t, rendertest.BundleLabels(b.Package, "stable"), rendertest.Layer(t,
		rendertest.Entry{Name: "manifests/"},
		rendertest.Entry{Name: "manifests/csv.yaml", Body: csv},
		rendertest.Entry{Name: "manifests/crd.yaml", Body: crd},
		rendertest.Entry{Name: "metadata/"},
		rendertest.Entry{Name: "metadata/annotations.yaml", Body: annotations},
	))
}

// Push builds each bundle and pushes it to ref(b); it returns the pushed
// references in order, each with its digest (REF@sha256:...) when pin is
// set.
func Push(t testing.TB, ref func(Bundle) string, pin bool, bundles ...Bundle) []string {
	t.Helper()
	var out []string
	for _, b := range bundles {
		img := Image(t, b)
		r := ref(b)
		registrytest.Push(t, r, img)
		if pin {
			d, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			r = repoOf(r) + "@" + d.String()
		}
		out = append(out, r)
	}
	return out
}

// repoOf drops the tag of a reference.
func repoOf(ref string) string {
	for i := len(ref) - 1; i >= 0; i-- {
		switch ref[i] {
		case ':':
			return ref[:i]
		case '/':
			return ref
		}
	}
	return ref
}
