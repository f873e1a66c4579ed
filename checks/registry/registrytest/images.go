package registrytest

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// RandomImage is a small random image (one 64-byte layer).
func RandomImage(t testing.TB) v1.Image {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// CatalogImage is a random image for platform ("linux/amd64") with the
// given labels, such as the File-Based Catalog label.
func CatalogImage(t testing.TB, platform string, labels map[string]string) v1.Image {
	t.Helper()
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	base := RandomImage(t)
	cf, err := base.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Labels = labels
	img, err := mutate.ConfigFile(base, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Index is an OCI index of one image per platform, each made by mk.
func Index(t testing.TB, mk func(platform string) v1.Image, platforms ...string) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pl := range platforms {
		p, err := v1.ParsePlatform(pl)
		if err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        mk(pl),
			Descriptor: v1.Descriptor{Platform: p},
		})
	}
	return idx
}
