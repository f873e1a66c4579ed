// Package property decodes bundle properties by type.
//
// As in package declcfg, names and JSON tags are behaviour: they appear in the
// decode errors opm reports ("Go struct field Package.version of type string").
package property

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	v1 "github.com/catalogbot/catalogbot/checks/fbc/internal/metav1"
	"github.com/catalogbot/catalogbot/checks/fbc/internal/v1alpha1"
)

// Property is one typed entry of a bundle's or package's properties list.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// The property types whose values have a fixed shape.
const (
	TypePackage         = "olm.package"
	TypePackageRequired = "olm.package.required"
	TypeGVK             = "olm.gvk"
	TypeGVKRequired     = "olm.gvk.required"
	TypeBundleObject    = "olm.bundle.object"
	TypeCSVMetadata     = "olm.csv.metadata"
	TypeChannel         = "olm.channel"
)

// TypeMaxOpenShiftVersion is the newest OpenShift version a bundle runs
// on: while it is installed, OLM keeps the cluster from upgrading past
// that minor version. opm checks nothing of its value; OLM reads the
// value's JSON text, quotes trimmed, as a version.
const TypeMaxOpenShiftVersion = "olm.maxOpenShiftVersion"

type Package struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitzero"`
}

type PackageRequired struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type GVKRequired struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type BundleObject struct {
	Data []byte `json:"data"`
}

// Channel is the internal olm.channel property. Current opm has no priority
// field, so any JSON object decodes.
type Channel struct {
	ChannelName string `json:"channelName"`
}

type CSVMetadata struct {
	Annotations               map[string]string                  `json:"annotations,omitempty"`
	APIServiceDefinitions     v1alpha1.APIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions v1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                             `json:"description,omitempty"`
	DisplayName               string                             `json:"displayName,omitempty"`
	InstallModes              []v1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                           `json:"keywords,omitempty"`
	Labels                    map[string]string                  `json:"labels,omitempty"`
	Links                     []v1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers               []v1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                             `json:"maturity,omitempty"`
	MinKubeVersion            string                             `json:"minKubeVersion,omitempty"`
	NativeAPIs                []v1.GroupVersionKind              `json:"nativeAPIs,omitempty"`
	Provider                  v1alpha1.AppLink                   `json:"provider,omitempty"`
}

// ParseError names the property that failed to decode.
type ParseError struct {
	Idx int
	Typ string
	Err error
}

func (e ParseError) Error() string {
	return fmt.Sprintf("parse property[%d] of type %q: %v", e.Idx, e.Typ, e.Err)
}

// Parsed is what validation needs from a property list: the olm.package
// values, and how many bundle objects there are; and, for the checks that
// follow clusters across OpenShift versions, the olm.maxOpenShiftVersion. Other decoded values are
// dropped as soon as they have been shape-checked, which keeps memory flat on
// catalogs whose bundles carry megabytes of manifests.
type Parsed struct {
	Packages      []Package
	BundleObjects int
	// MaxOpenShiftVersion is the first olm.maxOpenShiftVersion value as
	// OLM reads it: its JSON text with the quotes trimmed; "" for none.
	MaxOpenShiftVersion string
}

// Parse shape-checks every property against its type, in order, and stops at
// the first that does not decode.
func Parse(in []Property) (*Parsed, error) { return parse(in, false) }

// ParseObjectsRead is Parse for a property list whose olm.bundle.object
// values have each been decoded as a BundleObject without error: they are
// counted, not decoded again. A bundle's manifests are most of its bytes,
// and each decode holds them base64-decoded.
func ParseObjectsRead(in []Property) (*Parsed, error) { return parse(in, true) }

func parse(in []Property, objectsRead bool) (*Parsed, error) {
	var out Parsed
	for i, p := range in {
		if objectsRead && p.Type == TypeBundleObject {
			out.BundleObjects++
			continue
		}
		var err error
		switch p.Type {
		case TypePackage:
			var v Package
			if v, err = ParsePackage(p.Value); err == nil {
				out.Packages = append(out.Packages, v)
			}
		case TypePackageRequired:
			var v PackageRequired
			err = json.Unmarshal(p.Value, &v)
		case TypeGVK:
			var v GVK
			err = json.Unmarshal(p.Value, &v)
		case TypeGVKRequired:
			var v GVKRequired
			err = json.Unmarshal(p.Value, &v)
		case TypeBundleObject:
			var v BundleObject
			if err = json.Unmarshal(p.Value, &v); err == nil {
				out.BundleObjects++
			}
		case TypeChannel:
			var v Channel
			err = json.Unmarshal(p.Value, &v)
		case TypeCSVMetadata:
			var v CSVMetadata
			err = json.Unmarshal(p.Value, &v)
		case TypeMaxOpenShiftVersion:
			var v json.RawMessage
			if err = json.Unmarshal(p.Value, &v); err == nil && out.MaxOpenShiftVersion == "" {
				out.MaxOpenShiftVersion = strings.Trim(string(v), `"`)
			}
		default:
			var v json.RawMessage
			err = json.Unmarshal(p.Value, &v)
		}
		if err != nil {
			return nil, ParseError{Idx: i, Typ: p.Type, Err: err}
		}
	}
	return &out, nil
}

// ParsePackage decodes an olm.package value as json.Unmarshal does. The
// value as catalogs hold it, {"packageName":"x","version":"y"} with plain
// strings, is read without the reflection of encoding/json: a check reads
// it for every bundle of every graph it draws. Anything else (escapes,
// spaces, other keys, another order) goes to json.Unmarshal.
func ParsePackage(raw json.RawMessage) (Package, error) {
	rest, ok := bytes.CutPrefix(raw, []byte(`{"packageName":"`))
	if ok {
		name, rest, ok1 := plainString(rest)
		rest, ok2 := bytes.CutPrefix(rest, []byte(`,"version":"`))
		version, rest, ok3 := plainString(rest)
		if ok1 && ok2 && ok3 && string(rest) == "}" {
			return Package{PackageName: name, Version: version}, nil
		}
	}
	var v Package
	err := json.Unmarshal(raw, &v)
	return v, err
}

// plainString reads a JSON string's content up to its closing quote when
// it needs no decoding: no escape, no control character, valid UTF-8.
func plainString(b []byte) (string, []byte, bool) {
	for i, c := range b {
		switch {
		case c == '"':
			if !utf8.Valid(b[:i]) {
				return "", nil, false
			}
			return string(b[:i]), b[i+1:], true
		case c == '\\' || c < 0x20:
			return "", nil, false
		}
	}
	return "", nil, false
}
