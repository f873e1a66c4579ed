package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

func meta(schema, pkg, blob string) declcfg.Meta {
	return declcfg.Meta{Schema: schema, Package: pkg, Blob: json.RawMessage(blob)}
}

// The order rules of opm's writer, beyond what the goldens exercise.
func TestWriteOrder(t *testing.T) {
	cfg := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{
			{Schema: "olm.package", Name: "zeta"},
			{Schema: "olm.package", Name: "alpha", DefaultChannel: "b"},
			{Schema: "olm.package", Name: ""},
		},
		Channels: []declcfg.Channel{
			{Schema: "olm.channel", Package: "alpha", Name: "b"},
			{Schema: "olm.channel", Package: "alpha", Name: "a"},
			{Schema: "olm.channel", Package: "", Name: "orphan"},
		},
		Bundles: []declcfg.Bundle{
			{Schema: "olm.bundle", Package: "zeta", Name: "z2", Properties: []property.Property{{Type: "t", Value: json.RawMessage(`{"a":"<&>"}`)}}},
			{Schema: "olm.bundle", Package: "zeta", Name: "z1"},
			{Schema: "olm.bundle", Package: "", Name: "orphan"},
		},
		Others: []declcfg.Meta{
			meta("root.b", "", `{"schema":"root.b"}`),
			meta("x.second", "alpha", `{"n":2,"package":"alpha","schema":"x.second"}`),
			meta("root.a", "", `{"schema":"root.a"}`),
			meta("x.first", "alpha", `{"n":3,"package":"alpha","schema":"x.first"}`),
			meta("x.second", "alpha", `{"n":1,"package":"alpha","schema":"x.second"}`),
			meta("x", "beta", `{"package":"beta","schema":"x"}`),
		},
		Deprecations: []declcfg.Deprecation{
			{Schema: "olm.deprecations", Package: "alpha"},
			{Schema: "olm.deprecations", Package: ""},
		},
	}
	var got []string
	err := writeConfig(cfg, func(v any) error {
		data, err := marshalNoEscape(v)
		got = append(got, string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"schema":"olm.package","name":"alpha","defaultChannel":"b"}`,
		`{"schema":"olm.channel","name":"a","package":"alpha","entries":null}`,
		`{"schema":"olm.channel","name":"b","package":"alpha","entries":null}`,
		`{"n":3,"package":"alpha","schema":"x.first"}`,
		`{"n":2,"package":"alpha","schema":"x.second"}`,
		`{"n":1,"package":"alpha","schema":"x.second"}`,
		`{"schema":"olm.deprecations","package":"alpha","entries":null}`,
		`{"package":"beta","schema":"x"}`,
		`{"schema":"olm.package","name":"zeta","defaultChannel":""}`,
		`{"schema":"olm.bundle","name":"z1","package":"zeta","image":""}`,
		`{"schema":"olm.bundle","name":"z2","package":"zeta","image":"","properties":[{"type":"t","value":{"a":"<&>"}}]}`,
		`{"schema":"root.b"}`,
		`{"schema":"root.a"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("written =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
