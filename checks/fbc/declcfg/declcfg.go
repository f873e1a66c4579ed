// Package declcfg holds the typed forms of the four FBC schemas, as opm
// decodes them.
//
// The package name, the type names, the field types and the JSON tags are
// part of the behaviour: encoding/json prints them in type-mismatch errors
// ("json: cannot unmarshal string into Go struct field Channel.entries of type
// []declcfg.ChannelEntry"), and those errors are what opm reports. Changing any
// of them changes the messages catalogbot prints in opm format.
package declcfg

import (
	"encoding/json"

	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// The schemas opm decodes into typed structs; every other schema is opaque.
const (
	SchemaPackage     = "olm.package"
	SchemaChannel     = "olm.channel"
	SchemaBundle      = "olm.bundle"
	SchemaDeprecation = "olm.deprecations"
)

type Package struct {
	Schema         string              `json:"schema"`
	Name           string              `json:"name"`
	DefaultChannel string              `json:"defaultChannel"`
	Icon           *Icon               `json:"icon,omitempty"`
	Description    string              `json:"description,omitempty"`
	Properties     []property.Property `json:"properties,omitempty"`
}

type Icon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type Channel struct {
	Schema     string              `json:"schema"`
	Name       string              `json:"name"`
	Package    string              `json:"package"`
	Entries    []ChannelEntry      `json:"entries"`
	Properties []property.Property `json:"properties,omitempty"`
}

type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

type Bundle struct {
	Schema        string              `json:"schema"`
	Name          string              `json:"name,omitempty"`
	Package       string              `json:"package,omitempty"`
	Image         string              `json:"image"`
	Properties    []property.Property `json:"properties,omitempty"`
	RelatedImages []RelatedImage      `json:"relatedImages,omitempty"`
}

type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type Deprecation struct {
	Schema  string             `json:"schema"`
	Package string             `json:"package"`
	Entries []DeprecationEntry `json:"entries"`
}

type DeprecationEntry struct {
	Reference PackageScopedReference `json:"reference"`
	Message   string                 `json:"message"`
}

type PackageScopedReference struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
}

// DeclarativeConfig is a whole catalog as opm's loader returns it: the
// typed blobs of the four known schemas and every other blob as it was
// read, each list in load order.
type DeclarativeConfig struct {
	Packages     []Package
	Channels     []Channel
	Bundles      []Bundle
	Deprecations []Deprecation
	Others       []Meta
}

// Append adds o's blobs after c's, each schema's in order.
func (c *DeclarativeConfig) Append(o *DeclarativeConfig) {
	c.Packages = append(c.Packages, o.Packages...)
	c.Channels = append(c.Channels, o.Channels...)
	c.Bundles = append(c.Bundles, o.Bundles...)
	c.Deprecations = append(c.Deprecations, o.Deprecations...)
	c.Others = append(c.Others, o.Others...)
}

// Meta is a blob of a schema opm does not type: its identifying keys and
// the object re-encoded as JSON with sorted keys, as opm keeps it.
type Meta struct {
	Schema  string
	Package string
	Name    string
	Blob    json.RawMessage
}

// MarshalJSON writes the blob as it was read.
func (m Meta) MarshalJSON() ([]byte, error) { return m.Blob, nil }
