package owners_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/owners"
)

const refBase = `name: cool
repo: quay.io/example/cool
tag: latest
references:
  - name: etcd
    image: quay.io/example/etcd:v1
  - name: prom
    image: quay.io/example/prom:v1
`

func TestDiffReferenceList(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		base, head string // "-" for a missing side
		refs       []string
		fields     []string
		notList    bool
		findings   []string
	}{
		{
			name: "unchanged",
			base: refBase, head: refBase,
		},
		{
			name: "image changed",
			base: refBase, head: strings.Replace(refBase, "etcd:v1", "etcd:v2", 1),
			refs: []string{"etcd changed image quay.io/example/etcd:v1 -> quay.io/example/etcd:v2 [cool/etcd/index.yaml]"},
		},
		{
			name: "another field of an entry changed",
			base: refBase, head: strings.Replace(refBase, "name: prom\n", "name: prom\n    channel: fast\n", 1),
			refs: []string{"prom changed fields other than the image [cool/prom/index.yaml]"},
		},
		{
			name: "added and removed",
			base: refBase, head: strings.Replace(refBase, "name: prom", "name: thanos", 1),
			refs: []string{"prom removed  [cool/prom/index.yaml]", "thanos added  [cool/thanos/index.yaml]"},
		},
		{
			name: "beside a list in a subdirectory",
			file: "catalogs/catalog.yaml",
			base: refBase, head: strings.Replace(refBase, "prom:v1", "prom:v2", 1),
			refs: []string{"prom changed image quay.io/example/prom:v1 -> quay.io/example/prom:v2 [catalogs/cool/prom/index.yaml]"},
		},
		{
			name: "fields",
			base: refBase, head: strings.Replace(strings.Replace(refBase, "tag: latest", "tag: v2", 1), "repo:", "extra: 1\nrepo:", 1),
			fields: []string{"extra", "tag"},
		},
		{
			name: "order only",
			base: refBase, head: "name: cool\nrepo: quay.io/example/cool\ntag: latest\nreferences:\n  - {name: prom, image: quay.io/example/prom:v1}\n  - {name: etcd, image: quay.io/example/etcd:v1}\n",
			fields: []string{"order"},
		},
		{
			name: "a removal does not count as reordering",
			base: refBase + "  - name: zed\n    image: z\n", head: strings.Replace(refBase+"  - name: zed\n    image: z\n", "  - name: prom\n    image: quay.io/example/prom:v1\n", "", 1),
			refs: []string{"prom removed  [cool/prom/index.yaml]"},
		},
		{
			name: "the catalog is renamed: entries are owned under both names",
			base: refBase, head: strings.Replace(strings.Replace(refBase, "name: cool", "name: warm", 1), "etcd:v1", "etcd:v2", 1),
			refs:   []string{"etcd changed image quay.io/example/etcd:v1 -> quay.io/example/etcd:v2 [cool/etcd/index.yaml warm/etcd/index.yaml]"},
			fields: []string{"name"},
		},
		{
			name: "a list added as a whole",
			base: "-", head: refBase,
			refs:   []string{"etcd added  [cool/etcd/index.yaml]", "prom added  [cool/prom/index.yaml]"},
			fields: []string{"name", "repo", "tag"},
		},
		{
			name: "a list removed as a whole",
			base: refBase, head: "-",
			refs:   []string{"etcd removed  [cool/etcd/index.yaml]", "prom removed  [cool/prom/index.yaml]"},
			fields: []string{"name", "repo", "tag"},
		},
		{
			name: "names that leave their directory",
			base: refBase, head: strings.Replace(refBase, "name: etcd", "name: ../operators/mine", 1),
			refs: []string{"../operators/mine added  []", "etcd removed  [cool/etcd/index.yaml]"},
		},
		{
			name: "a catalog name that is not a string",
			base: strings.Replace(refBase, "name: cool", "name: 12", 1), head: strings.Replace(strings.Replace(refBase, "name: cool", "name: 12", 1), "etcd:v1", "etcd:v2", 1),
			refs: []string{"etcd changed image quay.io/example/etcd:v1 -> quay.io/example/etcd:v2 []"},
		},
		{
			name: "a side that does not parse",
			base: refBase, head: "references: [\n",
			fields:   []string{"content"},
			findings: []string{"OW11 warning 0: reference list does not parse"},
		},
		{
			name: "an entry without a name",
			base: refBase, head: refBase + "  - image: x\n",
			fields:   []string{"content"},
			findings: []string{"OW11 warning 0: references[2] has no name"},
		},
		{
			name: "references that are not a list",
			base: refBase, head: "name: cool\nreferences: {etcd: x}\n",
			fields:   []string{"content"},
			findings: []string{"OW11 warning 0: references must be a list"},
		},
		{
			name: "a File-Based Catalog named catalog.yaml is not a reference list",
			base: "schema: olm.package\nname: etcd\n", head: "schema: olm.package\nname: etcd\ndefaultChannel: stable\n",
			notList: true,
		},
		{
			name: "duplicates in the head are reported",
			base: refBase, head: refBase + "  - name: etcd\n    image: quay.io/example/etcd:v1\n",
			refs:     []string{"etcd changed listed 2 times, was 1 [cool/etcd/index.yaml]"},
			findings: []string{`OW11 warning 9: reference "etcd" is listed 2 times (lines 5, 9)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := func(s string) []byte {
				if s == "-" {
					return nil
				}
				return []byte(s)
			}
			file := tt.file
			if file == "" {
				file = "catalog.yaml"
			}
			d, findings := owners.DiffReferenceList(file, side(tt.base), side(tt.head))
			if d.IsList == tt.notList {
				t.Errorf("IsList = %v", d.IsList)
			}
			var refs []string
			for _, rc := range d.References {
				refs = append(refs, fmt.Sprintf("%s %s %s [%s]", rc.Name, rc.Change, rc.Detail, strings.Join(rc.Paths, " ")))
			}
			if !reflect.DeepEqual(refs, tt.refs) {
				t.Errorf("references:\n%q\nwant:\n%q", refs, tt.refs)
			}
			if !reflect.DeepEqual(d.Fields, tt.fields) {
				t.Errorf("fields = %q, want %q", d.Fields, tt.fields)
			}
			b := brief(findings)
			if len(b) != len(tt.findings) {
				t.Fatalf("findings %q, want %q", b, tt.findings)
			}
			for i := range b {
				if !strings.HasPrefix(b[i], tt.findings[i]) {
					t.Errorf("finding %q, want prefix %q", b[i], tt.findings[i])
				}
			}
		})
	}
}

// TestDiffReferenceListReal diffs real reference lists from
// zncdatadev/kubedoop-catalog (see testdata/real/README.md).
func TestDiffReferenceListReal(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "real", "kubedoop-catalog", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// The two commits rename the catalog and keep its one entry.
	d, findings := owners.DiffReferenceList("catalog.yaml", read("catalog-373d5c8.yaml"), read("catalog-ccc1337.yaml"))
	if len(d.References) != 0 || !reflect.DeepEqual(d.Fields, []string{"name"}) || len(findings) != 0 {
		t.Errorf("diff = %+v, findings %v; want only the name changed", d, findings)
	}
	// The template lists zookeeper-operator twice; adding it as a new
	// list reports that and owns every entry under catalog/.
	d, findings = owners.DiffReferenceList("catalog-template.yaml", nil, read("catalog-template-af13ed5.yaml"))
	if got := brief(findings); len(got) != 1 || !strings.HasPrefix(got[0], `OW11 warning 13: reference "zookeeper-operator" is listed 2 times (lines 9, 13)`) {
		t.Errorf("findings = %q", got)
	}
	if len(d.References) != 8 {
		t.Fatalf("%d references, want 8 distinct", len(d.References))
	}
	for _, rc := range d.References {
		if want := []string{"catalog/" + rc.Name + "/index.yaml"}; rc.Change != owners.RefAdded || !reflect.DeepEqual(rc.Paths, want) {
			t.Errorf("%s: %s %v, want added %v", rc.Name, rc.Change, rc.Paths, want)
		}
	}
}
