package rendertest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// TruthBundles are the bundle directories under publisher/render's
// testdata/truth: a faithful bundle of package foo at 0.2.0, and one
// bundle per way an image can differ from a blob written for the faithful
// one: another package, another version, a provided API missing, a
// required API added, another related image.
var TruthBundles = []string{"faithful", "other-package", "other-version", "missing-api", "extra-required", "other-related"}

// TruthDir is the directory of the TruthBundles.
func TruthDir(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("rendertest: cannot locate its own source")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "truth")
}

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
