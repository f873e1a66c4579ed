package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// This file turns a registry+v1 bundle (manifests/ and metadata/) into the
// one olm.bundle blob opm render makes of it. It follows operator-registry's
// pkg/registry (bundleParser.Parse, Bundle, ObjectsAndPropertiesFromBundle)
// and alpha/action (bundleToDeclcfg, getRelatedImages) step by step, because
// the output is compared byte for byte with opm's, including which of two
// conflicting inputs wins and which error is reported first.

// The bundle annotation keys opm reads. Only these three decide whether a
// metadata file is the annotations file.
type annotations struct {
	PackageName        string `json:"operators.operatorframework.io.bundle.package.v1"`
	Channels           string `json:"operators.operatorframework.io.bundle.channels.v1"`
	DefaultChannelName string `json:"operators.operatorframework.io.bundle.channel.default.v1"`
}

type annotationsFile struct {
	Annotations annotations `json:"annotations"`
}

// regProperty is a property or dependency as a bundle's metadata files and
// the CSV's olm.properties annotation hold it. Its value stays raw: these
// bytes are compared for deduplication and sorting, and printed as they are
// for types opm passes through.
type regProperty struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// key is how opm's bundle parser tells properties apart.
func (p regProperty) key() string { return fmt.Sprintf("type: %s, value: %s", p.Type, p.Value) }

type dependenciesFile struct {
	Dependencies []regProperty `json:"dependencies"`
}

type propertiesFile struct {
	Properties []regProperty `json:"properties"`
}

// apiKey identifies an API a bundle provides or requires. The field order
// and String format are opm's: both show in the "couldn't find" error, which
// prints a Go map of these.
type apiKey struct {
	Group   string
	Version string
	Kind    string
	Plural  string
}

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s/%s (%s)", k.Group, k.Version, k.Kind, k.Plural)
}

// manifestObject is one decoded manifest and its JSON encoding, which is
// what olm.bundle.object stores.
type manifestObject struct {
	obj  object
	json []byte
}

// csvObject is the part of the ClusterServiceVersion the parser reads
// through typed accessors; spec stays raw, as in opm, and each accessor
// decodes the piece it needs.
type csvObject struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec json.RawMessage `json:"spec"`
}

// crdObject holds what a CustomResourceDefinition contributes to the
// provided APIs.
type crdObject struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Version  string `json:"version"`
		Versions []struct {
			Name string `json:"name"`
		} `json:"versions"`
	} `json:"spec"`
	legacy bool // apiextensions.k8s.io/v1beta1, which also has spec.version
}

// definitionKey is an entry of the CSV's owned or required CRDs or API
// services.
type definitionKey struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// registryBundle is a parsed registry+v1 bundle.
type registryBundle struct {
	name         string
	pkg          string
	image        string
	objects      []manifestObject
	csv          *csvObject
	csvJSON      string
	crds         []crdObject
	dependencies []regProperty
	properties   []regProperty
}

// parseBundle parses the bundle rooted at fsys, as opm's bundleParser.Parse.
func parseBundle(fsys fs.FS) (*registryBundle, error) {
	b := &registryBundle{}
	if err := b.addManifests(fsys); err != nil {
		return nil, err
	}
	ann, err := b.addMetadata(fsys)
	if err != nil {
		return nil, err
	}
	derived, err := b.derivedProperties(ann)
	if err != nil {
		return nil, fmt.Errorf("failed to derive properties: %s", err)
	}
	b.properties = propertySet(append(b.properties, derived...))
	return b, nil
}

func (b *registryBundle) addManifests(root fs.FS) error {
	manifests, err := fs.Sub(root, "manifests")
	if err != nil {
		return fmt.Errorf("error opening manifests directory: %s", err)
	}
	entries, err := fs.ReadDir(manifests, ".")
	if err != nil {
		return relativePathError(err, "manifests")
	}
	csvFound := false
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := fs.ReadFile(manifests, e.Name())
		if err != nil {
			continue // opm warns and skips undecodable files
		}
		obj, err := decodeManifest(data)
		if err != nil {
			continue
		}
		// Only the first CSV counts; later ones are dropped entirely.
		if obj.kind() == "ClusterServiceVersion" {
			if csvFound {
				continue
			}
			csvFound = true
		}
		// encoding/json escapes HTML, so "<" is stored as \u003c, exactly
		// as opm stores it.
		data, err = json.Marshal(obj)
		if err != nil {
			return err
		}
		b.objects = append(b.objects, manifestObject{obj: obj, json: data})
	}
	if len(b.objects) == 0 {
		return fmt.Errorf("no bundle objects found")
	}
	if err := b.decodeObjects(); err != nil {
		return err
	}
	if b.csv == nil {
		return fmt.Errorf("no csv in bundle")
	}
	b.name = b.csv.Metadata.Name
	if err := b.allProvidedAPIsInBundle(); err != nil {
		return fmt.Errorf("error checking provided apis in bundle %s: %s", b.name, err)
	}
	return nil
}

// relativePathError names the bundle's own directory in a file system error
// rather than wherever the bundle was unpacked: a missing manifests/ in a
// bundle image reads "open manifests: no such file or directory".
func relativePathError(err error, name string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

// decodeObjects types the CSV and the CRDs, as opm's Bundle.cache does on
// first use.
func (b *registryBundle) decodeObjects() error {
	for _, m := range b.objects {
		if m.obj.kind() != "ClusterServiceVersion" {
			continue
		}
		var csv csvObject
		if err := json.Unmarshal(m.json, &csv); err != nil {
			return err
		}
		// A null spec reads as a missing one: opm's accessors then fail
		// to decode it, rather than finding nothing in it.
		if string(csv.Spec) == "null" {
			csv.Spec = nil
		}
		b.csv = &csv
		b.csvJSON = string(m.json)
		break
	}
	for _, m := range b.objects {
		if m.obj.kind() != "CustomResourceDefinition" {
			continue
		}
		// opm switches on the apiVersion's version and then decodes with a
		// scheme that knows only apiextensions.k8s.io.
		group, version, ok := parseGroupVersion(m.obj.apiVersion())
		if !ok || (version != "v1" && version != "v1beta1") {
			continue
		}
		if group != "apiextensions.k8s.io" {
			return fmt.Errorf("error decoding %s CRD: no kind %q is registered for version %q", version, "CustomResourceDefinition", m.obj.apiVersion())
		}
		crd := crdObject{legacy: version == "v1beta1"}
		if err := json.Unmarshal(m.json, &crd); err != nil {
			return fmt.Errorf("error decoding %s CRD: %v", version, err)
		}
		b.crds = append(b.crds, crd)
	}
	return nil
}

// parseGroupVersion splits an apiVersion as Kubernetes does: "v1" is the
// core group, and more than one slash is no version at all.
func parseGroupVersion(apiVersion string) (group, version string, ok bool) {
	switch strings.Count(apiVersion, "/") {
	case 0:
		return "", apiVersion, true
	case 1:
		group, version, _ = strings.Cut(apiVersion, "/")
		return group, version, true
	}
	return "", "", false
}

// specMap decodes the CSV spec into its raw fields, failing as opm's
// accessors fail when the spec is missing or not an object.
func (c *csvObject) specMap() (map[string]*json.RawMessage, error) {
	var m map[string]*json.RawMessage
	if err := json.Unmarshal(c.Spec, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// specField is one raw field of the spec, nil when absent or null.
func (c *csvObject) specField(name string) (json.RawMessage, error) {
	m, err := c.specMap()
	if err != nil {
		return nil, err
	}
	if raw := m[name]; raw != nil {
		return *raw, nil
	}
	return nil, nil
}

func (c *csvObject) stringField(name string) (string, error) {
	raw, err := c.specField(name)
	if err != nil || raw == nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

func (c *csvObject) version() (string, error) { return c.stringField("version") }

// release accepts a string or a number, as opm's GetRelease does.
func (c *csvObject) release() (string, error) {
	raw, err := c.specField("release")
	if err != nil || raw == nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var num float64
	if err := json.Unmarshal(raw, &num); err == nil {
		if num == float64(int64(num)) {
			return fmt.Sprintf("%d", int64(num)), nil
		}
		return fmt.Sprintf("%g", num), nil
	}
	return "", fmt.Errorf("release field must be a string or number")
}

func (c *csvObject) definitions(field string) (owned, required []definitionKey, err error) {
	raw, err := c.specField(field)
	if err != nil || raw == nil {
		return nil, nil, err
	}
	var defs struct {
		Owned    []definitionKey `json:"owned"`
		Required []definitionKey `json:"required"`
	}
	if err := json.Unmarshal(raw, &defs); err != nil {
		return nil, nil, err
	}
	return defs.Owned, defs.Required, nil
}

func (c *csvObject) crdDefinitions() ([]definitionKey, []definitionKey, error) {
	return c.definitions("customresourcedefinitions")
}

func (c *csvObject) apiServiceDefinitions() ([]definitionKey, []definitionKey, error) {
	// opm words this one decode failure differently from the others.
	if _, err := c.specMap(); err != nil {
		return nil, nil, fmt.Errorf("error unmarshaling into object map: %s", err)
	}
	return c.definitions("apiservicedefinitions")
}

func (b *registryBundle) version() (string, error) { return b.csv.version() }
func (b *registryBundle) release() (string, error) { return b.csv.release() }

func (b *registryBundle) providedAPIs() (map[apiKey]struct{}, error) {
	provided := map[apiKey]struct{}{}
	for _, crd := range b.crds {
		s := crd.Spec
		for _, v := range s.Versions {
			provided[apiKey{Group: s.Group, Version: v.Name, Kind: s.Names.Kind, Plural: s.Names.Plural}] = struct{}{}
		}
		if crd.legacy && s.Version != "" {
			provided[apiKey{Group: s.Group, Version: s.Version, Kind: s.Names.Kind, Plural: s.Names.Plural}] = struct{}{}
		}
	}
	owned, _, err := b.csv.apiServiceDefinitions()
	if err != nil {
		return nil, fmt.Errorf("error getting apiservice definitions: %s", err)
	}
	for _, api := range owned {
		provided[apiKey{Group: api.Group, Version: api.Version, Kind: api.Kind, Plural: api.Name}] = struct{}{}
	}
	return provided, nil
}

func (b *registryBundle) requiredAPIs() (map[apiKey]struct{}, error) {
	required := map[apiKey]struct{}{}
	_, crds, err := b.csv.crdDefinitions()
	if err != nil {
		return nil, err
	}
	for _, api := range crds {
		plural, group, ok := strings.Cut(api.Name, ".")
		if !ok {
			return nil, fmt.Errorf("couldn't parse plural.group from crd name: %s", api.Name)
		}
		required[apiKey{Group: group, Version: api.Version, Kind: api.Kind, Plural: plural}] = struct{}{}
	}
	_, apis, err := b.csv.apiServiceDefinitions()
	if err != nil {
		return nil, err
	}
	for _, api := range apis {
		required[apiKey{Group: api.Group, Version: api.Version, Kind: api.Kind, Plural: api.Name}] = struct{}{}
	}
	return required, nil
}

// allProvidedAPIsInBundle checks that every CRD the CSV owns is shipped.
// opm walks a map and so names a random missing CRD when several are
// missing; this names the first in the CSV's order.
func (b *registryBundle) allProvidedAPIsInBundle() error {
	provided, err := b.providedAPIs()
	if err != nil {
		return err
	}
	owned, _, err := b.csv.crdDefinitions()
	if err != nil {
		return err
	}
	var want []apiKey
	for _, d := range owned {
		plural, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return fmt.Errorf("couldn't parse plural.group from crd name: %s", d.Name)
		}
		want = append(want, apiKey{Group: group, Version: d.Version, Kind: d.Kind, Plural: plural})
	}
	for _, k := range want {
		if _, ok := provided[k]; !ok {
			return fmt.Errorf("couldn't find %v in bundle. found: %v", k, provided)
		}
	}
	return nil
}

// addMetadata finds the annotations, dependencies and properties files.
// Any file may be any of them: each is the first file, in name order, that
// decodes into that shape with something in it.
func (b *registryBundle) addMetadata(root fs.FS) (*annotations, error) {
	metadata, err := fs.Sub(root, "metadata")
	if err != nil {
		return nil, fmt.Errorf("error opening metadata directory: %s", err)
	}
	entries, err := fs.ReadDir(metadata, ".")
	if err != nil {
		return nil, relativePathError(err, "metadata")
	}
	var (
		af *annotationsFile
		df *dependenciesFile
		pf *propertiesFile
	)
	for _, e := range entries {
		data, err := fs.ReadFile(metadata, e.Name())
		if err != nil {
			continue
		}
		if af == nil {
			var decoded annotationsFile
			if decodeFirst(data, &decoded) == nil && decoded != (annotationsFile{}) {
				af = &decoded
			}
		}
		if df == nil {
			var decoded dependenciesFile
			if decodeFirst(data, &decoded) == nil && len(decoded.Dependencies) > 0 {
				df = &decoded
			}
		}
		if pf == nil {
			var decoded propertiesFile
			if decodeFirst(data, &decoded) == nil && len(decoded.Properties) > 0 {
				pf = &decoded
			}
		}
	}
	if af == nil {
		//lint:ignore ST1005 opm's message, which render reproduces
		return nil, fmt.Errorf("Could not find annotations file")
	}
	b.pkg = af.Annotations.PackageName
	if df != nil {
		b.dependencies = append(b.dependencies, df.Dependencies...)
	}
	if pf != nil {
		b.properties = append(b.properties, pf.Properties...)
	}
	return &af.Annotations, nil
}

// derivedProperties are the properties the parser adds to properties.yaml:
// the package from the annotations (its version and release split as
// splitBuildMetadata says for a substituting bundle), the CSV's
// olm.properties annotation and the provided APIs, in that order. The order
// decides which olm.package wins later: the last one.
func (b *registryBundle) derivedProperties(ann *annotations) ([]regProperty, error) {
	var derived []regProperty
	if props, ok := b.csv.Metadata.Annotations["olm.properties"]; ok {
		// A malformed annotation only draws a warning from opm; whatever
		// decoded before the error is kept, as encoding/json leaves it.
		_ = json.Unmarshal([]byte(props), &derived)
	}
	if ann.PackageName != "" {
		version, err := b.version()
		if err != nil {
			return nil, err
		}
		release, err := b.release()
		if err != nil {
			return nil, err
		}
		if release == "" && b.csv.Metadata.Annotations[substitutesForAnnotation] != "" {
			version, release, err = splitBuildMetadata(version)
			if err != nil {
				return nil, fmt.Errorf("bundle %q error: %v", b.name, err)
			}
		}
		value, err := json.Marshal(property.Package{PackageName: ann.PackageName, Version: version, Release: release})
		if err != nil {
			return nil, fmt.Errorf("failed to marshal package property: %s", err)
		}
		derived = append([]regProperty{{Type: property.TypePackage, Value: value}}, derived...)
	}
	provided, err := b.providedAPIs()
	if err != nil {
		return nil, fmt.Errorf("error getting provided apis: %s", err)
	}
	for _, api := range sortedKeys(provided) {
		value, err := json.Marshal(property.GVK{Group: api.Group, Kind: api.Kind, Version: api.Version})
		if err != nil {
			return nil, fmt.Errorf("failed to marshal gvk property: %s", err)
		}
		derived = append(derived, regProperty{Type: property.TypeGVK, Value: value})
	}
	return propertySet(derived), nil
}

// substitutesForAnnotation names the CSV a bundle replaces in place. A
// bundle that has it and no spec.release carries its release as the build
// metadata of its version (0.14.0+0.1234 is version 0.14.0, release 0.1234),
// the convention from before the release field existed.
const substitutesForAnnotation = "olm.substitutesFor"

// splitBuildMetadata splits a CSV version at its first "+" into the
// version and the release, as opm does for a substituting bundle. A version
// without build metadata is an error there, since the release would be lost.
func splitBuildMetadata(version string) (string, string, error) {
	v, release, ok := strings.Cut(version, "+")
	if !ok {
		return "", "", fmt.Errorf("no release version expressed as build metadata: %q", version)
	}
	return v, release, nil
}

// propertySet drops repeated properties, keeping the first.
func propertySet(in []regProperty) []regProperty {
	var out []regProperty
	seen := map[string]bool{}
	for _, p := range in {
		if k := p.key(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys(m map[apiKey]struct{}) []apiKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b apiKey) int {
		return strings.Compare(a.String(), b.String())
	})
}

// packageVersion is the version the image reference template sees: that of
// the first olm.package property, where the emitted olm.package is the last.
func (b *registryBundle) packageVersion() (string, error) {
	for _, p := range b.properties {
		if p.Type != property.TypePackage {
			continue
		}
		var pkg property.Package
		if err := json.Unmarshal(p.Value, &pkg); err != nil {
			return "", err
		}
		return pkg.Version, nil
	}
	return "", nil
}

// toDeclcfg builds the olm.bundle blob, as opm's bundleToDeclcfg. The
// returned CSV JSON feeds the csv-metadata migration.
func (b *registryBundle) toDeclcfg() (*declcfg.Bundle, string, error) {
	props, err := b.blobProperties()
	if err != nil {
		return nil, "", fmt.Errorf("get properties for bundle %q: %v", b.name, err)
	}
	related, err := b.relatedImages()
	if err != nil {
		return nil, "", fmt.Errorf("get related images for bundle %q: %v", b.name, err)
	}
	return &declcfg.Bundle{
		Schema:        declcfg.SchemaBundle,
		Name:          b.name,
		Package:       b.pkg,
		Image:         b.image,
		Properties:    props,
		RelatedImages: related,
	}, b.csvJSON, nil
}

// blobProperties follows opm's ObjectsAndPropertiesFromBundle.
func (b *registryBundle) blobProperties() ([]property.Property, error) {
	provided := map[property.GVK]struct{}{}
	required := map[property.GVKRequired]struct{}{}
	var pkgProp *property.Property
	var others []property.Property

	for i, p := range b.properties {
		switch p.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, property.ParseError{Idx: i, Typ: p.Type, Err: err}
			}
			provided[v] = struct{}{}
		case property.TypePackage:
			var v property.Package
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, property.ParseError{Idx: i, Typ: p.Type, Err: err}
			}
			built := buildProperty(property.TypePackage, property.Package{PackageName: v.PackageName, Version: v.Version, Release: v.Release})
			pkgProp = &built
		default:
			others = append(others, property.Property{Type: p.Type, Value: p.Value})
		}
	}

	var pkgRequired []property.Property
	for i, d := range b.dependencies {
		switch d.Type {
		case property.TypeGVK:
			var v property.GVK
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, property.ParseError{Idx: i, Typ: d.Type, Err: err}
			}
			required[property.GVKRequired(v)] = struct{}{}
		case property.TypePackage:
			// A package dependency's version is a range.
			var v property.Package
			if err := json.Unmarshal(d.Value, &v); err != nil {
				return nil, property.ParseError{Idx: i, Typ: d.Type, Err: err}
			}
			pkgRequired = append(pkgRequired, buildProperty(property.TypePackageRequired, property.PackageRequired{PackageName: v.PackageName, VersionRange: v.Version}))
		default:
			others = append(others, property.Property{Type: d.Type, Value: d.Value})
		}
	}

	version, err := b.version()
	if err != nil {
		return nil, fmt.Errorf("get version: %v", err)
	}
	release, err := b.release()
	if err != nil {
		return nil, fmt.Errorf("get release: %v", err)
	}
	providedAPIs, err := b.providedAPIs()
	if err != nil {
		return nil, fmt.Errorf("get provided apis: %v", err)
	}
	for api := range providedAPIs {
		provided[property.GVK{Group: api.Group, Kind: api.Kind, Version: api.Version}] = struct{}{}
	}
	requiredAPIs, err := b.requiredAPIs()
	if err != nil {
		return nil, fmt.Errorf("get required apis: %v", err)
	}
	for api := range requiredAPIs {
		required[property.GVKRequired{Group: api.Group, Kind: api.Kind, Version: api.Version}] = struct{}{}
	}

	var props []property.Property
	for _, o := range b.objects {
		props = append(props, buildProperty(property.TypeBundleObject, property.BundleObject{Data: o.json}))
	}
	if pkgProp == nil {
		built := buildProperty(property.TypePackage, property.Package{PackageName: b.pkg, Version: version, Release: release})
		pkgProp = &built
	}
	props = append(props, *pkgProp)
	for v := range provided {
		props = append(props, buildProperty(property.TypeGVK, v))
	}
	for v := range required {
		props = append(props, buildProperty(property.TypeGVKRequired, v))
	}
	props = append(props, pkgRequired...)
	props = append(props, others...)

	// Map order above is random; the sort makes the result deterministic
	// except among equal entries, which are identical.
	slices.SortFunc(props, func(a, b property.Property) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(string(a.Value), string(b.Value))
	})
	return props, nil
}

// relatedImages follows opm's getRelatedImages: the CSV's relatedImages as
// written, then the bundle image, then every operator container image not
// seen yet. Render sorts them afterwards.
func (b *registryBundle) relatedImages() ([]declcfg.RelatedImage, error) {
	raw, err := b.csv.specField("relatedImages")
	if err != nil {
		return nil, err
	}
	var related []declcfg.RelatedImage
	if raw != nil {
		if err := json.Unmarshal(raw, &related); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, ri := range related {
		seen[ri.Image] = true
	}
	// opm does not add the bundle image to the seen set, so an operator
	// image equal to the bundle image is listed twice. Kept for parity.
	if b.image != "" && !seen[b.image] {
		related = append(related, declcfg.RelatedImage{Image: b.image})
	}
	images, err := b.operatorImages()
	if err != nil {
		return nil, err
	}
	for _, img := range images {
		if !seen[img] {
			related = append(related, declcfg.RelatedImage{Image: img})
		}
		seen[img] = true
	}
	return related, nil
}

// operatorImages lists the images of the containers and init containers of
// the CSV's deployments, when its install strategy is "deployment". The set
// is returned sorted; opm iterates a map here.
func (b *registryBundle) operatorImages() ([]string, error) {
	type container struct {
		Image string `json:"image"`
	}
	var spec struct {
		Install struct {
			Strategy string `json:"strategy"`
			Spec     struct {
				Deployments []struct {
					Spec struct {
						Template struct {
							Spec struct {
								Containers     []container `json:"containers"`
								InitContainers []container `json:"initContainers"`
							} `json:"spec"`
						} `json:"template"`
					} `json:"spec"`
				} `json:"deployments"`
			} `json:"spec"`
		} `json:"install"`
	}
	if err := json.Unmarshal(b.csv.Spec, &spec); err != nil {
		return nil, err
	}
	if spec.Install.Strategy != "deployment" {
		return nil, nil
	}
	set := map[string]bool{}
	for _, d := range spec.Install.Spec.Deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			set[c.Image] = true
		}
		for _, c := range d.Spec.Template.Spec.InitContainers {
			set[c.Image] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}

// buildProperty encodes a property value as opm's property.Build does:
// compact JSON without HTML escaping, fields in struct order.
func buildProperty(typ string, v any) property.Property {
	data, err := marshalNoEscape(v)
	if err != nil {
		// Only the fixed property structs come here; they always encode.
		panic(err)
	}
	return property.Property{Type: typ, Value: data}
}
