package catalogyaml

import (
	"reflect"
	"testing"
)

// TestDiffLists: entries are matched by name, and a list the strict parser
// would refuse (an entry listed twice) still diffs, so that ownership can
// be decided entry by entry.
func TestDiffLists(t *testing.T) {
	const base = "name: cool\nreferences:\n- name: etcd\n  image: quay.io/x/etcd:v1\n- name: prom\n  image: quay.io/x/prom:v1\n"
	tests := []struct {
		name       string
		base, head string // "-" for a missing side
		want       Diff
	}{
		{"unchanged", base, base, Diff{IsList: true, Catalogs: []string{"cool"}}},
		{"an entry changed", base, "name: cool\nreferences:\n- name: etcd\n  image: quay.io/x/etcd:v2\n- name: prom\n  image: quay.io/x/prom:v1\n",
			Diff{IsList: true, Catalogs: []string{"cool"}, Entries: []EntryChange{{Name: "etcd", Change: Changed, From: "quay.io/x/etcd:v1", To: "quay.io/x/etcd:v2", Detail: "image quay.io/x/etcd:v1 -> quay.io/x/etcd:v2"}}}},
		{"renamed catalog, reordered", base, "name: hot\nreferences:\n- name: prom\n  image: quay.io/x/prom:v1\n- name: etcd\n  image: quay.io/x/etcd:v1\n",
			Diff{IsList: true, Catalogs: []string{"cool", "hot"}, Fields: []string{"name", "order"}}},
		{"added list", "-", "name: cool\nreferences:\n- name: etcd\n  image: quay.io/x/etcd:v1\n",
			Diff{IsList: true, Catalogs: []string{"cool"}, Fields: []string{"name"}, Entries: []EntryChange{{Name: "etcd", Change: Added, To: "quay.io/x/etcd:v1"}}}},
		{"listed twice", base, base + "- name: etcd\n  image: quay.io/x/etcd:v1\n",
			Diff{IsList: true, Catalogs: []string{"cool"}, Duplicates: []Duplicate{{Name: "etcd", Count: 2, Lines: []int{3, 7}}},
				Entries: []EntryChange{{Name: "etcd", Change: Changed, From: "quay.io/x/etcd:v1", To: "quay.io/x/etcd:v1", Detail: "listed 2 times, was 1"}}}},
		{"unreadable head", base, "references: {}\n", Diff{IsList: true, Fields: []string{"content"}, HeadProblem: "references must be a list"}},
		{"not a list", "a: 1\n", "a: 2\n", Diff{}},
	}
	side := func(s string) []byte {
		if s == "-" {
			return nil
		}
		return []byte(s)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DiffLists(side(tt.base), side(tt.head))
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("DiffLists =\n%+v\nwant\n%+v", *got, tt.want)
			}
		})
	}
}

// TestImageRefs: the images checks look up are the entries' registry
// images; a layout and an image that does not parse are not.
func TestImageRefs(t *testing.T) {
	data := "name: cool\nreferences:\n- name: etcd\n  image: quay.io/x/etcd:v1\n- name: local\n  image: oci:layouts/local\n- name: bad\n  image: quay.io/X/Bad:v1\n"
	f, _ := Parse("catalog.yaml", []byte(data))
	want := []ImageRef{{Name: "etcd", Image: "quay.io/x/etcd:v1", File: "catalog.yaml", Line: 4}}
	if got := f.ImageRefs(); !reflect.DeepEqual(got, want) {
		t.Errorf("ImageRefs = %+v, want %+v", got, want)
	}
}
