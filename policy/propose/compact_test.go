package propose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// TestAddEntriesKeepsLayout: a channel added to in a catalog written
// compactly, as opm writes it (community-operators-prod's, real and whole),
// comes back as it was plus the new entry's lines, and so does one written
// with indented sequences.
func TestAddEntriesKeepsLayout(t *testing.T) {
	const pkg = "libredb-studio-operator"
	real, err := os.ReadFile(filepath.Join("..", "..", "testdata", "community-operators-prod", "catalogs", "v4.22", pkg, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	indented := "---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1.0.0\n    skipRange: <1.0.0\n---\nschema: olm.package\nname: foo\n"
	for _, tc := range []struct {
		name, file, pkg, head, want string
	}{
		{"compact, real", string(real), pkg, pkg + ".v0.9.59",
			strings.Replace(string(real), "- name: "+pkg+".v0.9.59\n", "- name: "+pkg+".v0.9.59\n- name: "+pkg+".v0.9.60\n  replaces: "+pkg+".v0.9.59\n", 1)},
		{"indented", indented, "foo", "foo.v1.0.0",
			strings.Replace(indented, "    skipRange: <1.0.0\n", "    skipRange: <1.0.0\n  - name: foo.v1.0.1\n    replaces: foo.v1.0.0\n", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := strings.Replace(tc.head, "0.9.59", "0.9.60", 1)
			next = strings.Replace(next, "1.0.0", "1.0.1", 1)
			channel := "alpha"
			if tc.pkg == "foo" {
				channel = "stable"
			}
			got, err := addEntries("catalog.yaml", []byte(tc.file), tc.pkg, channel, []declcfg.ChannelEntry{{Name: next, Replaces: tc.head}})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("not the file plus the entry:\n%s", firstDifference(tc.want, string(got)))
			}
		})
	}
}

// firstDifference shows the first line where want and got part.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) && i < len(g); i++ {
		if w[i] != g[i] {
			return "line " + string(rune('0'+i%10)) + ": want " + w[i] + "\n got " + g[i]
		}
	}
	return "lengths differ"
}
