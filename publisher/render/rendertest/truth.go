package rendertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// BundleImage builds the bundle image of the bundle directory dir, as
// operator-sdk's bundle Dockerfile would (the labels of BundleLabels, read
// from its annotations file), with every "REGISTRY" in its files replaced
// by registry: the fixtures name their related images there, so that a
// test can serve them.
func BundleImage(t testing.TB, dir, registry string) v1.Image {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &ann); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	entries := DirEntries(t, dir, "")
	for i := range entries {
		entries[i].Body = strings.ReplaceAll(entries[i].Body, "REGISTRY", registry)
	}
	labels := BundleLabels(ann.Annotations["operators.operatorframework.io.bundle.package.v1"], ann.Annotations["operators.operatorframework.io.bundle.channels.v1"])
	return Image(t, labels, Layer(t, entries...))
}
