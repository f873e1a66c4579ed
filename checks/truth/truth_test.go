package truth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

func prop(typ, value string) property.Property {
	return property.Property{Type: typ, Value: json.RawMessage(value)}
}

func object(manifest string) property.Property {
	data, _ := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(manifest))})
	return property.Property{Type: property.TypeBundleObject, Value: data}
}

const csv = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"foo.v1.0.0"},"spec":{"version":"1.0.0"}}`

// image is the bundle an image renders to, as opm writes it.
func image() declcfg.Bundle {
	return declcfg.Bundle{
		Schema: declcfg.SchemaBundle, Name: "foo.v1.0.0", Package: "foo", Image: "quay.io/example/foo@sha256:aaaa",
		Properties: []property.Property{
			prop(property.TypeGVK, `{"group":"foo.example.com","kind":"Foo","version":"v1"}`),
			prop(property.TypeGVKRequired, `{"group":"bar.example.com","kind":"Bar","version":"v1"}`),
			prop(property.TypePackage, `{"packageName":"foo","version":"1.0.0"}`),
			prop(property.TypePackageRequired, `{"packageName":"bar","versionRange":">=1.0.0"}`),
			object(csv),
		},
		RelatedImages: []declcfg.RelatedImage{{Image: "quay.io/example/foo@sha256:aaaa"}, {Name: "operator", Image: "quay.io/example/op:v1"}},
	}
}

// TestCompare starts from a blob equal to its image and changes one thing
// per case; the golden holds every message.
func TestCompare(t *testing.T) {
	set := func(b *declcfg.Bundle, typ, value string) {
		for i, p := range b.Properties {
			if p.Type == typ {
				b.Properties[i].Value = json.RawMessage(value)
				return
			}
		}
		b.Properties = append(b.Properties, prop(typ, value))
	}
	drop := func(b *declcfg.Bundle, typ string) {
		b.Properties = slices.DeleteFunc(b.Properties, func(p property.Property) bool { return p.Type == typ })
	}
	tests := []struct {
		name  string
		blob  func(b *declcfg.Bundle)
		rules []string
	}{
		{"the same", func(b *declcfg.Bundle) {}, nil},
		{"the same, written otherwise", func(b *declcfg.Bundle) {
			// Keys in another order, properties and related images too.
			set(b, property.TypeGVK, `{"version":"v1","kind":"Foo","group":"foo.example.com"}`)
			drop(b, property.TypeBundleObject)
			b.Properties = append([]property.Property{object(`{"spec":{"version":"1.0.0"},"metadata":{"name":"foo.v1.0.0"},"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1"}`)}, b.Properties...)
			slices.Reverse(b.RelatedImages)
		}, nil},
		{"another name", func(b *declcfg.Bundle) { b.Name = "foo.v2.0.0" }, []string{RuleName}},
		{"another package", func(b *declcfg.Bundle) { b.Package = "bar" }, []string{RulePackage}},
		{"another package in olm.package", func(b *declcfg.Bundle) {
			set(b, property.TypePackage, `{"packageName":"bar","version":"1.0.0"}`)
		}, []string{RulePackage}},
		{"another version", func(b *declcfg.Bundle) {
			set(b, property.TypePackage, `{"packageName":"foo","version":"1.0.1"}`)
		}, []string{RuleVersion}},
		{"another release", func(b *declcfg.Bundle) {
			set(b, property.TypePackage, `{"packageName":"foo","version":"1.0.0","release":"2"}`)
		}, []string{RuleVersion}},
		{"no olm.package", func(b *declcfg.Bundle) { drop(b, property.TypePackage) }, []string{RuleVersion}},
		{"a provided API the image lacks", func(b *declcfg.Bundle) {
			b.Properties = append(b.Properties, prop(property.TypeGVK, `{"group":"foo.example.com","kind":"Foo","version":"v2"}`))
		}, []string{RuleProvidedAPIs}},
		{"a required API left out", func(b *declcfg.Bundle) { drop(b, property.TypeGVKRequired) }, []string{RuleRequiredAPIs}},
		{"a required package left out", func(b *declcfg.Bundle) { drop(b, property.TypePackageRequired) }, []string{RuleRequiredPackage}},
		{"another range", func(b *declcfg.Bundle) {
			set(b, property.TypePackageRequired, `{"packageName":"bar","versionRange":">=0.1.0"}`)
		}, []string{RuleRequiredPackage}},
		{"another manifest", func(b *declcfg.Bundle) {
			drop(b, property.TypeBundleObject)
			b.Properties = append(b.Properties, object(strings.Replace(csv, `"1.0.0"}`, `"1.0.1"}`, 1)))
		}, []string{RuleObjects}},
		{"no manifests: nothing claimed", func(b *declcfg.Bundle) { drop(b, property.TypeBundleObject) }, nil},
		{"metadata the image does not migrate to", func(b *declcfg.Bundle) {
			drop(b, property.TypeBundleObject)
			b.Properties = append(b.Properties, prop(property.TypeCSVMetadata, `{"displayName":"Foo"}`))
		}, []string{RuleObjects}},
		{"other related images", func(b *declcfg.Bundle) {
			b.RelatedImages[1].Image = "quay.io/example/op:v2"
		}, []string{RuleRelatedImages}},
		{"a related image left out", func(b *declcfg.Bundle) { b.RelatedImages = b.RelatedImages[:1] }, []string{RuleRelatedImages}},
		{"everything at once", func(b *declcfg.Bundle) {
			b.Name, b.Package, b.RelatedImages = "x.v9", "x", nil
			b.Properties = []property.Property{prop(property.TypePackage, `{"packageName":"x","version":"9"}`), object(`{"kind":"Secret","metadata":{"name":"s"}}`)}
		}, []string{RuleName, RulePackage, RuleVersion, RuleProvidedAPIs, RuleRequiredAPIs, RuleRequiredPackage, RuleObjects, RuleRelatedImages}},
	}
	var golden strings.Builder
	for _, tt := range tests {
		blob := image()
		tt.blob(&blob)
		diffs := Compare(blob, image())
		var rules []string
		for _, d := range diffs {
			rules = append(rules, d.Rule)
		}
		if !slices.Equal(rules, tt.rules) {
			t.Errorf("%s: rules %v, want %v", tt.name, rules, tt.rules)
		}
		fmt.Fprintf(&golden, "## %s\n", tt.name)
		for _, f := range Findings(diffs, blob, "catalog/foo/catalog.yaml", 7, checks.SeverityError) {
			fmt.Fprintf(&golden, "%s:%d %s %s %s\n", f.File, f.Line, f.Rule, f.Severity, f.Message)
		}
	}
	checkstest.Golden(t, "testdata/compare.golden", []byte(golden.String()))
}
