package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
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

// TestLoadPlacedWhole: the whole load places the same blobs as LoadPlaced,
// index by index, across files and past a document that does not load,
// and keeps what LoadPlaced drops (a package's icon, every property).
func TestLoadPlacedWhole(t *testing.T) {
	fsys := fstest.MapFS{
		"a/catalog.yaml": {Data: []byte("---\nschema: olm.package\nname: a\nicon: {base64data: iVBORw0KGgo=, mediatype: image/png}\n---\nschema: olm.bundle\npackage: a\nname: a.v1\nimage: quay.io/x/a:v1\nproperties:\n  - type: olm.package\n    value: {packageName: a, version: 1.0.0}\n  - type: olm.gvk.required\n    value: {group: g, kind: K, version: v1}\n")},
		"b/catalog.yaml": {Data: []byte("---\nschema: olm.package\nname: [\n---\nschema: olm.channel\npackage: b\nname: stable\nentries:\n  - name: b.v1\n")},
	}
	thin, err := LoadPlaced(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := LoadPlacedWhole(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(thin.Packages, whole.Packages) || !slices.Equal(thin.Channels, whole.Channels) || !slices.Equal(thin.Bundles, whole.Bundles) || !slices.Equal(thin.Unread, whole.Unread) {
		t.Errorf("places differ:\nthin %+v\nwhole %+v", thin, whole)
	}
	if len(whole.Config.Packages) != 1 || whole.Config.Packages[0].Icon == nil || len(whole.Config.Bundles) != 1 || len(whole.Config.Bundles[0].Properties) != 2 {
		t.Errorf("the whole load dropped content: %+v", whole.Config)
	}
	if at := whole.EntryPlace(0, "b.v1"); at != (Place{File: "b/catalog.yaml", Line: 9}) {
		t.Errorf("entry placed at %+v, want b/catalog.yaml:9", at)
	}
}

// entryLine is how EntryPlace found an entry's line before it kept a map
// of each channel's entries: the reference FuzzEntryLines holds the map
// to.
// entryLine finds the offset of the line where an entries item names
// name, in YAML ("- name: x", "name: 'x'") or JSON ("\"name\": \"x\"").
// The value must be the whole scalar, so that foo.v1.0 does not find
// foo.v1.0.0.
func entryLine(blob []byte, name string) int {
	quoted := strconv.Quote(name)
	for off := 0; off < len(blob); {
		end := bytes.IndexByte(blob[off:], '\n')
		if end < 0 {
			end = len(blob) - off
		}
		line := bytes.TrimSpace(blob[off : off+end])
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("-")))
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("{")))
		for _, key := range []string{"name:", `"name":`} {
			if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
				v := string(bytes.TrimRight(bytes.TrimSpace(rest), ",}"))
				v = string(bytes.TrimSpace([]byte(v)))
				if v == name || v == quoted || v == "'"+name+"'" {
					return off
				}
			}
		}
		off += end + 1
	}
	return -1
}

// FuzzEntryLines: the line entryLinesOf keeps for a name is the line
// entryLine finds for it, for every name a line of the channel names and
// for names no line does.
func FuzzEntryLines(f *testing.F) {
	for _, seed := range []struct{ blob, name string }{
		{"schema: olm.channel\nentries:\n  - name: foo.v1.0.0\n  - name: foo.v1.0\n    replaces: foo.v0.9\n", "foo.v1.0"},
		{"{\"schema\":\"olm.channel\",\"entries\":[\n{\"name\": \"a\"},\n{\"name\":\"b\"}]}\n", "b"},
		{"entries:\n- name: 'quoted'\n- name: \"dq\\u0041\"\n- name: \"dq\\\"x\"\n", "quoted"},
		{"- name: x\n- name: x\n", "x"},
		{"- name: '\n- name: ''\n", ""},
	} {
		f.Add(seed.blob, seed.name)
	}
	f.Fuzz(func(t *testing.T, blob, name string) {
		p := &Placed{
			fsys:     fstest.MapFS{"c.yaml": {Data: []byte(blob)}},
			Channels: []Place{{File: "c.yaml", Line: 1}},
			spans:    []span{{0, len(blob)}},
		}
		names := []string{name}
		for line := range strings.Lines(blob) {
			names = append(names, entryNames([]byte(line))...)
		}
		for _, n := range names {
			want := 1
			if k := entryLine([]byte(blob), n); k >= 0 {
				want += strings.Count(blob[:k], "\n")
			}
			if len(blob) == 0 {
				want = 1
			}
			if got := p.EntryPlace(0, n).Line; got != want {
				t.Fatalf("EntryPlace(%q) line %d, entryLine says %d\n%s", n, got, want, blob)
			}
		}
	})
}
