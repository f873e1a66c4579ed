package images

import (
	"cmp"
	"path"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// Kind says what role an image plays where it is written. Policy rules
// differ by kind: a bundle image must be a single manifest, a catalog image
// must carry the catalog label, and digest pinning is required per kind.
type Kind string

const (
	// KindBundle is an olm.bundle's image.
	KindBundle Kind = "bundle"
	// KindRelated is an entry of an olm.bundle's relatedImages.
	KindRelated Kind = "related"
	// KindReference is a catalog image listed in a catalog.yaml.
	KindReference Kind = "reference"
	// KindBase is the base image a catalog is published on.
	KindBase Kind = "base"
)

// Location is one place an image reference is written. Fields that do not
// apply are empty: a catalog.yaml entry has no package or bundle, the base
// image comes from configuration and has no file.
type Location struct {
	Kind    Kind   `json:"kind"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Package string `json:"package,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// Name is the relatedImages name or the catalog.yaml reference name.
	Name string `json:"name,omitempty"`
}

// Use is an image reference as written at one location.
type Use struct {
	Image string
	Location
}

// Reference is one image to check with every place it is written.
type Reference struct {
	// Image is the reference as first written.
	Image     string
	Locations []Location
}

// FromFBC turns the image references of a validated catalog into uses.
// root is prefixed to the file names, which fbc reports relative to the
// catalog root, so that positions read as paths from where the user is.
// Empty images (bundles that carry their manifests inline) are skipped.
func FromFBC(root string, refs []fbc.ImageRef) []Use {
	uses := make([]Use, 0, len(refs))
	for _, r := range refs {
		if r.Image == "" {
			continue
		}
		kind := KindBundle
		if r.Kind == fbc.RelatedImage {
			kind = KindRelated
		}
		file := r.File
		if root != "" && root != "." {
			file = path.Join(root, r.File)
		}
		uses = append(uses, Use{Image: r.Image, Location: Location{
			Kind: kind, File: file, Line: r.Line, Package: r.Package, Bundle: r.Bundle, Name: r.Name,
		}})
	}
	return uses
}

// FromCatalogYAML turns the images of a catalog.yaml's entries
// (catalogyaml.File.ImageRefs) into uses.
func FromCatalogYAML(f *catalogyaml.File) []Use {
	refs := f.ImageRefs()
	uses := make([]Use, 0, len(refs))
	for _, r := range refs {
		uses = append(uses, Use{Image: r.Image, Location: Location{
			Kind: KindReference, File: r.File, Line: r.Line, Name: r.Name,
		}})
	}
	return uses
}

// Base is the use of the catalog's base image, which comes from policy.
func Base(image string) Use {
	return Use{Image: image, Location: Location{Kind: KindBase}}
}

// Dedupe groups uses by the image they name, so that each image is checked
// once. References that name the same image in different spellings
// ("quay.io/x/y" and "quay.io/x/y:latest", "docker.io/library/busybox" and
// "busybox") are one image. The result is sorted by image, and each
// reference's locations keep their input order.
func Dedupe(uses []Use) []Reference {
	index := map[string]int{}
	var refs []Reference
	for _, u := range uses {
		key := canonical(u.Image)
		i, ok := index[key]
		if !ok {
			i = len(refs)
			index[key] = i
			refs = append(refs, Reference{Image: u.Image})
		}
		refs[i].Locations = append(refs[i].Locations, u.Location)
	}
	slices.SortStableFunc(refs, func(a, b Reference) int { return cmp.Compare(a.Image, b.Image) })
	return refs
}

// canonical is the key references are grouped by: the fully qualified name,
// or the text itself when it does not parse (it is reported as such).
func canonical(image string) string {
	if ref, err := name.ParseReference(image); err == nil {
		return ref.Name()
	}
	return image
}

// kinds lists the distinct kinds among locs.
func kinds(locs []Location) map[Kind]bool {
	m := make(map[Kind]bool, 2)
	for _, l := range locs {
		m[l.Kind] = true
	}
	return m
}
