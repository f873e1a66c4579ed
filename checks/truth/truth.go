// Package truth says where an olm.bundle blob does not tell the truth about
// its image. Reviewers read a catalog's blobs, and clusters install the
// bundle images the blobs name: a blob whose package, version, provided or
// required APIs or related images differ from what its image holds passes
// review and then installs something else. opm render makes the blob from
// the image; Compare sets the blob beside that rendering and lists every
// difference, one per thing a blob claims:
//
//   - BT1 the bundle's name (the CSV's name);
//   - BT2 the package (the blob's package field and its olm.package);
//   - BT3 the version and release (olm.package);
//   - BT4 the provided APIs (olm.gvk);
//   - BT5 the required APIs (olm.gvk.required);
//   - BT6 the required packages (olm.package.required);
//   - BT7 the manifests (olm.bundle.object) and the CSV's metadata
//     (olm.csv.metadata), when the blob carries them;
//   - BT8 the related images.
//
// Values are compared as what they mean, not as bytes: a blob written by
// hand or by another tool may order keys and list entries differently
// from opm. The image's side is the caller's to render (publisher/render
// does it as opm render does); this package only compares, so that the
// comparison is pure and cheap to test.
package truth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// The bundle truthfulness rules.
const (
	RuleName            = "BT1"
	RulePackage         = "BT2"
	RuleVersion         = "BT3"
	RuleProvidedAPIs    = "BT4"
	RuleRequiredAPIs    = "BT5"
	RuleRequiredPackage = "BT6"
	RuleObjects         = "BT7"
	RuleRelatedImages   = "BT8"
	// RuleUnreadable is an image that was pulled and does not render as
	// a bundle: the blob could not be judged, which is never taken for
	// truthful.
	RuleUnreadable = "BT9"
)

// Rules are the truthfulness rules, for the rule catalogue.
var Rules = []checks.Rule{
	{ID: RuleName, Name: "BundleNameTruth", Description: "An olm.bundle blob's name differs from the name of the CSV its image holds."},
	{ID: RulePackage, Name: "BundlePackageTruth", Description: "An olm.bundle blob's package differs from the package its image declares."},
	{ID: RuleVersion, Name: "BundleVersionTruth", Description: "An olm.bundle blob's olm.package version or release differs from its image's CSV."},
	{ID: RuleProvidedAPIs, Name: "ProvidedAPIsTruth", Description: "An olm.bundle blob's olm.gvk properties differ from the APIs its image provides."},
	{ID: RuleRequiredAPIs, Name: "RequiredAPIsTruth", Description: "An olm.bundle blob's olm.gvk.required properties differ from the APIs its image requires."},
	{ID: RuleRequiredPackage, Name: "RequiredPackagesTruth", Description: "An olm.bundle blob's olm.package.required properties differ from the package dependencies its image declares."},
	{ID: RuleObjects, Name: "BundleObjectsTruth", Description: "An olm.bundle blob's olm.bundle.object or olm.csv.metadata content differs from its image's manifests."},
	{ID: RuleRelatedImages, Name: "RelatedImagesTruth", Description: "An olm.bundle blob's relatedImages differ from those its image's CSV and deployments name."},
	{ID: RuleUnreadable, Name: "BundleImageUnreadable", Description: "An olm.bundle blob's image was pulled and does not render as a bundle, so the blob could not be checked against it."},
}

// Difference is one way a blob differs from its image.
type Difference struct {
	Rule string
	// Message says what the blob claims and what the image holds.
	Message string
}

// Compare lists how blob differs from image, the bundle its image renders
// to, in the order of the rules. Each rule gives at most one difference,
// which names every value that differs. Image is compared as given: for a
// blob that carries olm.csv.metadata, the caller adds the metadata the
// image's CSV migrates to (opm's bundle-object-to-csv-metadata).
func Compare(blob, image declcfg.Bundle) []Difference {
	var out []Difference
	add := func(rule, format string, args ...any) {
		out = append(out, Difference{Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	if blob.Name != image.Name {
		add(RuleName, "the blob is named %q; the image's CSV is %q", blob.Name, image.Name)
	}
	bp, ip := packageOf(blob), packageOf(image)
	switch {
	case blob.Package != image.Package:
		add(RulePackage, "the blob is in package %q; the image declares package %q", blob.Package, image.Package)
	case bp != nil && ip != nil && bp.PackageName != ip.PackageName:
		add(RulePackage, "the blob's olm.package names package %q; the image declares package %q", bp.PackageName, ip.PackageName)
	}
	switch {
	case ip == nil:
	case bp == nil:
		add(RuleVersion, "the blob has no olm.package property; the image is version %s", versionText(ip))
	case bp.Version != ip.Version || bp.Release != ip.Release:
		add(RuleVersion, "the blob says version %s; the image is version %s", versionText(bp), versionText(ip))
	}
	if d := setDiff(blob, image, property.TypeGVK, gvkText); d != "" {
		add(RuleProvidedAPIs, "olm.gvk (provided APIs): %s", d)
	}
	if d := setDiff(blob, image, property.TypeGVKRequired, gvkText); d != "" {
		add(RuleRequiredAPIs, "olm.gvk.required (required APIs): %s", d)
	}
	if d := setDiff(blob, image, property.TypePackageRequired, packageRequiredText); d != "" {
		add(RuleRequiredPackage, "olm.package.required (required packages): %s", d)
	}
	var objs []string
	if has(blob, property.TypeBundleObject) {
		if d := setDiff(blob, image, property.TypeBundleObject, objectText); d != "" {
			objs = append(objs, "olm.bundle.object (manifests): "+d)
		}
	}
	if has(blob, property.TypeCSVMetadata) {
		if d := setDiff(blob, image, property.TypeCSVMetadata, metadataText); d != "" {
			objs = append(objs, "olm.csv.metadata: "+d)
		}
	}
	if len(objs) > 0 {
		add(RuleObjects, "%s", strings.Join(objs, "; "))
	}
	if d := relatedDiff(blob.RelatedImages, image.RelatedImages); d != "" {
		add(RuleRelatedImages, "relatedImages: %s", d)
	}
	return out
}

// compared are the property types Compare reads.
var compared = []string{property.TypePackage, property.TypeGVK, property.TypeGVKRequired, property.TypePackageRequired,
	property.TypeBundleObject, property.TypeCSVMetadata}

// Claims is what of b Compare reads: its name, package, image, related
// images and the properties of the types it compares, in b's order. Two
// blobs with equal claims get the same verdict against one image, so a
// change that touches only other properties of a bundle (a label, an
// olm.maxOpenShiftVersion) needs no pull to judge.
func Claims(b declcfg.Bundle) declcfg.Bundle {
	c := declcfg.Bundle{Schema: b.Schema, Name: b.Name, Package: b.Package, Image: b.Image, RelatedImages: b.RelatedImages}
	for _, p := range b.Properties {
		if slices.Contains(compared, p.Type) {
			c.Properties = append(c.Properties, p)
		}
	}
	return c
}

// Findings places differences on the blob at file:line.
func Findings(diffs []Difference, blob declcfg.Bundle, file string, line int, sev checks.Severity) []checks.Finding {
	out := make([]checks.Finding, len(diffs))
	for i, d := range diffs {
		out[i] = checks.Finding{Rule: d.Rule, Severity: sev, File: file, Line: line, Package: blob.Package, Bundle: blob.Name,
			Message: fmt.Sprintf("bundle %s does not match its image %s: %s", blob.Name, blob.Image, d.Message)}
	}
	return out
}

// packageOf is the bundle's first olm.package value, nil when it has none
// that decodes (opm validate reports that).
func packageOf(b declcfg.Bundle) *property.Package {
	for _, p := range b.Properties {
		if p.Type != property.TypePackage {
			continue
		}
		var v property.Package
		if json.Unmarshal(p.Value, &v) != nil {
			return nil
		}
		return &v
	}
	return nil
}

func versionText(p *property.Package) string {
	if p.Release != "" {
		return fmt.Sprintf("%q release %q", p.Version, p.Release)
	}
	return fmt.Sprintf("%q", p.Version)
}

func has(b declcfg.Bundle, typ string) bool {
	return slices.ContainsFunc(b.Properties, func(p property.Property) bool { return p.Type == typ })
}

// setDiff compares the values of one property type on both sides as
// multisets of what they mean (canonical JSON), and says what the blob
// claims that the image lacks and what the image holds that the blob does
// not declare, each value shown by show. "" means they agree.
func setDiff(blob, image declcfg.Bundle, typ string, show func(json.RawMessage) string) string {
	bv, iv := values(blob, typ), values(image, typ)
	var onlyBlob, onlyImage []string
	left := slices.Clone(iv)
	for _, v := range bv {
		if i := slices.IndexFunc(left, func(w canon) bool { return w.key == v.key }); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		onlyBlob = append(onlyBlob, show(v.raw))
	}
	for _, w := range left {
		onlyImage = append(onlyImage, show(w.raw))
	}
	return claims(onlyBlob, onlyImage)
}

// claims words the two sides of a difference. A value named alike on
// both sides (a manifest of the same kind and name) differs in content.
func claims(onlyBlob, onlyImage []string) string {
	slices.Sort(onlyBlob)
	slices.Sort(onlyImage)
	var differ []string
	for _, v := range onlyBlob {
		if i := slices.Index(onlyImage, v); i >= 0 {
			differ = append(differ, v)
			onlyImage = slices.Delete(onlyImage, i, i+1)
		}
	}
	onlyBlob = slices.DeleteFunc(onlyBlob, func(v string) bool { return slices.Contains(differ, v) })
	var parts []string
	if len(differ) > 0 {
		parts = append(parts, strings.Join(differ, ", ")+" differ"+map[bool]string{true: "s", false: ""}[len(differ) == 1]+" from the image's")
	}
	if len(onlyBlob) > 0 {
		parts = append(parts, "the blob declares "+strings.Join(onlyBlob, ", ")+", which the image does not")
	}
	if len(onlyImage) > 0 {
		parts = append(parts, "the image declares "+strings.Join(onlyImage, ", ")+", which the blob does not")
	}
	return strings.Join(parts, "; ")
}

// canon is a property value with its canonical form: the JSON re-encoded
// from its decoding, which sorts object keys.
type canon struct {
	key string
	raw json.RawMessage
}

func values(b declcfg.Bundle, typ string) []canon {
	var out []canon
	for _, p := range b.Properties {
		if p.Type != typ {
			continue
		}
		out = append(out, canon{key: canonical(typ, p.Value), raw: p.Value})
	}
	return out
}

// canonical is a value's meaning as a string. An olm.bundle.object's
// manifest is base64 inside JSON: it is decoded too, so that a manifest
// encoded with its keys in another order is the same manifest.
func canonical(typ string, raw json.RawMessage) string {
	if typ == property.TypeBundleObject {
		var o property.BundleObject
		if json.Unmarshal(raw, &o) == nil {
			return "object:" + canonicalJSON(o.Data)
		}
	}
	return canonicalJSON(raw)
}

func canonicalJSON(data []byte) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return "raw:" + string(data)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return "raw:" + string(data)
	}
	return string(out)
}

func gvkText(raw json.RawMessage) string {
	var g property.GVK
	if json.Unmarshal(raw, &g) != nil {
		return string(raw)
	}
	if g.Group == "" {
		return fmt.Sprintf("%s/%s", g.Version, g.Kind)
	}
	return fmt.Sprintf("%s/%s/%s", g.Group, g.Version, g.Kind)
}

func packageRequiredText(raw json.RawMessage) string {
	var p property.PackageRequired
	if json.Unmarshal(raw, &p) != nil {
		return string(raw)
	}
	return fmt.Sprintf("%s %s", p.PackageName, p.VersionRange)
}

// objectText names a manifest by kind and name; its content is too long
// for a message.
func objectText(raw json.RawMessage) string {
	var o property.BundleObject
	if json.Unmarshal(raw, &o) != nil {
		return "an undecodable object"
	}
	var m struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(o.Data, &m) != nil || m.Kind == "" {
		return "an undecodable object"
	}
	return fmt.Sprintf("%s %s", m.Kind, m.Metadata.Name)
}

func metadataText(raw json.RawMessage) string {
	var m struct {
		DisplayName string `json:"displayName"`
	}
	if json.Unmarshal(raw, &m) == nil && m.DisplayName != "" {
		return fmt.Sprintf("metadata of %q", m.DisplayName)
	}
	return "metadata"
}

// relatedDiff compares related images as multisets of name and image.
func relatedDiff(blob, image []declcfg.RelatedImage) string {
	var onlyBlob, onlyImage []string
	left := slices.Clone(image)
	for _, r := range blob {
		if i := slices.IndexFunc(left, func(w declcfg.RelatedImage) bool { return reflect.DeepEqual(w, r) }); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		onlyBlob = append(onlyBlob, relatedText(r))
	}
	for _, r := range left {
		onlyImage = append(onlyImage, relatedText(r))
	}
	return claims(onlyBlob, onlyImage)
}

func relatedText(r declcfg.RelatedImage) string {
	if r.Name == "" {
		return r.Image
	}
	return fmt.Sprintf("%s (%s)", r.Image, r.Name)
}
