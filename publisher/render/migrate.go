package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/publisher/render/internal/v1alpha1"
)

// Migration levels, as opm render's --migrate-level names them. A level runs
// every migration up to and including itself.
const (
	MigrateNone               = "none"
	MigrateBundleObjectToMeta = "bundle-object-to-csv-metadata"
	// MigrateAll is what opm's deprecated --migrate flag selects.
	MigrateAll = "all"
)

// MigrationLevels lists the levels in the order they run.
var MigrationLevels = []string{MigrateNone, MigrateBundleObjectToMeta}

// migrationSteps returns how many of the migrations after "none" a level
// runs, or an error naming an unknown level.
func migrationSteps(level string) (int, error) {
	switch level {
	case "", MigrateNone:
		return 0, nil
	case MigrateBundleObjectToMeta, MigrateAll:
		return 1, nil
	}
	return 0, fmt.Errorf("unknown migration level %q", level)
}

// migrateCSVMetadata replaces a bundle's olm.bundle.object properties with
// one olm.csv.metadata built from its CSV, as opm's
// bundle-object-to-csv-metadata migration does. Bundles without an image
// or without a CSV are left alone, and so, entirely, is a bundle that
// already has olm.csv.metadata.
func migrateCSVMetadata(b *declcfg.Bundle, csvJSON string) error {
	if b.Image == "" || csvJSON == "" {
		return nil
	}
	meta, err := csvMetadata(csvJSON)
	if err != nil {
		return err
	}
	// Filtering in place, as opm does, is safe: render has already moved
	// the objects and any olm.csv.metadata after every kept property, so a
	// bundle left alone is left unchanged.
	props := b.Properties[:0]
	for _, p := range b.Properties {
		switch p.Type {
		case property.TypeBundleObject:
		case property.TypeCSVMetadata:
			return nil
		default:
			props = append(props, p)
		}
	}
	b.Properties = append(props, meta)
	return nil
}

// csvMetadata builds the olm.csv.metadata property from a CSV. The CSV
// fields are picked by the names the upstream CSV type gives them (so
// matching is case-insensitive, as encoding/json's is) and decoded into
// property.CSVMetadata, whose types and tags are upstream's, so the output
// has upstream's field order and omissions: apiServiceDefinitions and
// provider are structs and so always printed.
// CSVMetadata is the olm.csv.metadata property opm's
// bundle-object-to-csv-metadata migration makes of a CSV given as JSON
// (Rendered.CSVs), for comparing a migrated blob with its image.
func CSVMetadata(csvJSON string) (property.Property, error) { return csvMetadata(csvJSON) }

func csvMetadata(csvJSON string) (property.Property, error) {
	var csv struct {
		Metadata struct {
			Annotations json.RawMessage `json:"annotations"`
			Labels      json.RawMessage `json:"labels"`
		} `json:"metadata"`
		Spec struct {
			APIServiceDefinitions     json.RawMessage `json:"apiservicedefinitions"`
			CustomResourceDefinitions json.RawMessage `json:"customresourcedefinitions"`
			Description               json.RawMessage `json:"description"`
			DisplayName               json.RawMessage `json:"displayName"`
			InstallModes              json.RawMessage `json:"installModes"`
			Keywords                  json.RawMessage `json:"keywords"`
			Links                     json.RawMessage `json:"links"`
			Maintainers               json.RawMessage `json:"maintainers"`
			Maturity                  json.RawMessage `json:"maturity"`
			MinKubeVersion            json.RawMessage `json:"minKubeVersion"`
			NativeAPIs                json.RawMessage `json:"nativeAPIs"`
			Provider                  json.RawMessage `json:"provider"`
		} `json:"spec"`
	}
	// The typed decode opm does first: it rejects a CSV whose version is
	// not semver or whose release is not a string of pre-release
	// identifiers, though rendering accepted both.
	if err := json.Unmarshal([]byte(csvJSON), &v1alpha1.ClusterServiceVersion{}); err != nil {
		return property.Property{}, err
	}
	if err := json.Unmarshal([]byte(csvJSON), &csv); err != nil {
		return property.Property{}, err
	}
	fields := map[string]json.RawMessage{
		"annotations":           csv.Metadata.Annotations,
		"labels":                csv.Metadata.Labels,
		"apiServiceDefinitions": csv.Spec.APIServiceDefinitions,
		"crdDescriptions":       csv.Spec.CustomResourceDefinitions,
		"description":           csv.Spec.Description,
		"displayName":           csv.Spec.DisplayName,
		"installModes":          csv.Spec.InstallModes,
		"keywords":              csv.Spec.Keywords,
		"links":                 csv.Spec.Links,
		"maintainers":           csv.Spec.Maintainers,
		"maturity":              csv.Spec.Maturity,
		"minKubeVersion":        csv.Spec.MinKubeVersion,
		"nativeAPIs":            csv.Spec.NativeAPIs,
		"provider":              csv.Spec.Provider,
	}
	for k, v := range fields {
		if v == nil {
			delete(fields, k)
		}
	}
	joined, err := json.Marshal(fields)
	if err != nil {
		return property.Property{}, err
	}
	var meta property.CSVMetadata
	if err := json.Unmarshal(joined, &meta); err != nil {
		return property.Property{}, err
	}
	data, err := marshalNoEscape(meta)
	if err != nil {
		return property.Property{}, err
	}
	return property.Property{Type: property.TypeCSVMetadata, Value: data}, nil
}

// catalogCSVJSON finds the CSV among a loaded bundle's olm.bundle.object
// properties, as opm's loader does for the migration: the first object
// whose kind is ClusterServiceVersion, converted to JSON. The loader has
// already checked that every object decodes.
func catalogCSVJSON(b *declcfg.Bundle) string {
	for _, p := range b.Properties {
		if p.Type != property.TypeBundleObject {
			continue
		}
		var obj property.BundleObject
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			continue
		}
		data, err := yaml.YAMLToJSON(obj.Data)
		if err != nil {
			continue
		}
		// A map, not a struct: the kind key is matched exactly, as
		// unstructured.Unstructured matches it.
		var head map[string]any
		if json.Unmarshal(data, &head) == nil && head["kind"] == "ClusterServiceVersion" {
			return string(data)
		}
	}
	return ""
}

// marshalNoEscape is encoding/json without HTML escaping and without the
// trailing newline: how opm encodes the property values it builds.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
