// Package proposetest builds what tests of catalogbot propose start from:
// bundle images of a package and version pushed to a test registry, and a
// package's catalog whose channel head is a given version.
package proposetest

import (
	"fmt"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// PushBundle pushes a registry+v1 bundle image of package pkg, whose CSV
// is name at version, to repo:tag in reg, and returns its digest.
func PushBundle(t testing.TB, reg *registrytest.Registry, repo, tag, pkg, name, version string) string {
	t.Helper()
	return reg.Push(t, reg.Ref(repo+":"+tag), Bundle(t, pkg, name, version)).String()
}

// Bundle is a registry+v1 bundle image of package pkg whose CSV is name
// at version.
func Bundle(t testing.TB, pkg, name, version string) v1.Image {
	t.Helper()
	csv := fmt.Sprintf(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: %s
spec:
  displayName: %s
  version: %s
  installModes:
    - type: AllNamespaces
      supported: true
  install:
    strategy: deployment
    spec:
      deployments: []
`, name, pkg, version)
	annotations := fmt.Sprintf(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: stable
`, pkg)
	return rendertest.Image(t, rendertest.BundleLabels(pkg, "stable"), rendertest.Layer(t,
		rendertest.Entry{Name: "manifests/"},
		rendertest.Entry{Name: "manifests/" + pkg + ".clusterserviceversion.yaml", Body: csv},
		rendertest.Entry{Name: "metadata/"},
		rendertest.Entry{Name: "metadata/annotations.yaml", Body: annotations},
	))
}

// Package is a package with one channel whose head is name at version.
func Package(pkg, channel, name, version string) string {
	return fmt.Sprintf(`---
schema: olm.package
name: %[1]s
defaultChannel: %[2]s
---
# the channel the releases join
schema: olm.channel
package: %[1]s
name: %[2]s
entries:
  - name: %[3]s
---
schema: olm.bundle
name: %[3]s
package: %[1]s
image: quay.io/acme/%[1]s-bundle@sha256:%[5]s
properties:
  - type: olm.package
    value:
      packageName: %[1]s
      version: %[4]s
`, pkg, channel, name, version, strings.Repeat("0", 64))
}
