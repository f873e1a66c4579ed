package fbc

import (
	"context"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// TestPlacedMaxOpenShiftVersion: a bundle's olm.maxOpenShiftVersion
// reaches Placed as OLM reads it, the JSON text of the value with its
// quotes trimmed, the same through the fast path and the exact one.
func TestPlacedMaxOpenShiftVersion(t *testing.T) {
	bundle := func(props string) string {
		return "schema: olm.bundle\npackage: foo\nname: foo.v1\nimage: quay.io/x/foo:v1\nproperties:\n" +
			"  - type: olm.package\n    value:\n      packageName: foo\n      version: 1.0.0\n" + props
	}
	tests := []struct {
		name, file, data, want string
		// slow says the fast path leaves the document to the exact one.
		slow bool
	}{
		{name: "a quoted string", file: "c.yaml", data: bundle("  - type: olm.maxOpenShiftVersion\n    value: \"4.17\"\n"), want: "4.17"},
		{name: "a plain string", file: "c.yaml", data: bundle("  - type: olm.maxOpenShiftVersion\n    value: v4.17\n"), want: "v4.17"},
		// A number is a float to YAML: 4.10 would read 4.1, as in opm.
		{name: "a number", file: "c.yaml", data: bundle("  - type: olm.maxOpenShiftVersion\n    value: 4.17\n"), want: "4.17", slow: true},
		{name: "JSON", file: "c.json", data: `{"schema":"olm.bundle","package":"foo","name":"foo.v1","image":"quay.io/x/foo:v1","properties":[` +
			`{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"type":"olm.maxOpenShiftVersion","value":"4.17"}]}`, want: "4.17"},
		{name: "the first of two", file: "c.yaml", data: bundle("  - type: olm.maxOpenShiftVersion\n    value: \"4.16\"\n  - type: olm.maxOpenShiftVersion\n    value: \"4.18\"\n"), want: "4.16"},
		{name: "none", file: "c.yaml", data: bundle(""), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{tt.file: {Data: []byte(tt.data)}}
			for _, exact := range []bool{false, true} {
				cat, err := load(context.Background(), fsys, Options{exact: exact})
				if err != nil {
					t.Fatal(err)
				}
				if len(cat.files) != 1 || len(cat.files[0].bundles) != 1 || len(cat.files[0].errs) > 0 {
					t.Fatalf("exact=%v: the fixture does not load as one bundle: %+v", exact, cat.files)
				}
				if fast := cat.files[0].fastDocs > 0; fast != (!exact && !tt.slow) {
					t.Errorf("exact=%v: the fast path took the document: %v", exact, fast)
				}
				if got := cat.files[0].bundles[0].maxOCP; got != tt.want {
					t.Errorf("exact=%v: maxOpenShiftVersion %q, want %q", exact, got, tt.want)
				}
			}
			p, err := LoadPlaced(context.Background(), fsys)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, pr := range p.Config.Bundles[0].Properties {
				if pr.Type == property.TypeMaxOpenShiftVersion {
					if err := json.Unmarshal(pr.Value, &got); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got != tt.want {
				t.Errorf("Placed has maxOpenShiftVersion %q, want %q", got, tt.want)
			}
		})
	}
}
