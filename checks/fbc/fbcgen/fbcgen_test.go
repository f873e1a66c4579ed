package fbcgen_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks/fbc/fbcgen"
)

// readTree returns every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func write(t *testing.T, s fbcgen.Spec) (string, fbcgen.Stats) {
	t.Helper()
	dir := t.TempDir()
	st, err := fbcgen.Write(dir, s)
	if err != nil {
		t.Fatalf("Write(%+v): %v", s, err)
	}
	return dir, st
}

func TestDeterministic(t *testing.T) {
	for _, s := range []fbcgen.Spec{
		{Packages: 6, BundlesPerPackage: 5, ChannelsPerPackage: 3, Seed: 42, Payload: "mixed", Format: "yaml"},
		{Packages: 3, BundlesPerPackage: 4, ChannelsPerPackage: 2, Seed: 42, Payload: "bundle-object", Format: "json"},
	} {
		d1, st1 := write(t, s)
		d2, st2 := write(t, s)
		if st1 != st2 {
			t.Errorf("%+v: stats differ: %v vs %v", s, st1, st2)
		}
		f1, f2 := readTree(t, d1), readTree(t, d2)
		if len(f1) != s.Packages || len(f1) != len(f2) {
			t.Fatalf("%+v: %d and %d files, want %d", s, len(f1), len(f2), s.Packages)
		}
		var total int64
		for name, b := range f1 {
			if !bytes.Equal(b, f2[name]) {
				t.Errorf("%+v: %s differs between runs", s, name)
			}
			if want := fbcgen.FileName(s.Format); filepath.Base(name) != want {
				t.Errorf("file %s, want basename %s", name, want)
			}
			total += int64(len(b))
		}
		if total != st1.Bytes {
			t.Errorf("%+v: Stats.Bytes %d, files hold %d", s, st1.Bytes, total)
		}

		// Another seed gives other content of about the same size.
		s2 := s
		s2.Seed++
		d3, st3 := write(t, s2)
		if f3 := readTree(t, d3); len(f3) == len(f1) {
			same := 0
			for name, b := range f1 {
				if bytes.Equal(b, f3[name]) {
					same++
				}
			}
			if same > 0 {
				t.Errorf("seed %d and %d share %d identical files", s.Seed, s2.Seed, same)
			}
		}
		if r := float64(st3.Bytes) / float64(st1.Bytes); r < 0.85 || r > 1.15 {
			t.Errorf("seed changed the size by a factor of %.2f", r)
		}
	}
}

func TestSpecForSize(t *testing.T) {
	cases := []struct {
		target int64
		format string
	}{{5e6, "yaml"}, {20e6, "yaml"}, {5e6, "json"}}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		s := fbcgen.SpecForSize(c.target, c.format)
		_, st := write(t, s)
		ratio := float64(st.Bytes) / float64(c.target)
		t.Logf("target %d %s: %d packages x %d bundles -> %d bytes (%.3f; estimate %d): %v",
			c.target, c.format, s.Packages, s.BundlesPerPackage, st.Bytes, ratio, s.EstimatedBytes(), st)
		if ratio < 0.9 || ratio > 1.1 {
			t.Errorf("SpecForSize(%d, %s) = %+v wrote %d bytes, want within 10%%", c.target, c.format, s, st.Bytes)
		}
	}
}

func TestSpecForSizeLarge(t *testing.T) {
	// Like merged-all: ~100 packages of 15 bundles, 3 channels each. Only
	// planned here; generating 110 MB is left to benchmarks.
	s := fbcgen.SpecForSize(110e6, "yaml")
	if s.BundlesPerPackage != 15 || s.ChannelsPerPackage != 3 || s.Packages < 90 || s.Packages > 110 || s.Payload != "mixed" {
		t.Errorf("SpecForSize(110MB) = %+v", s)
	}
	if e := s.EstimatedBytes(); e < 104e6 || e > 116e6 {
		t.Errorf("estimate %d for 110MB", e)
	}
	small := fbcgen.SpecForSize(27.5e6, "yaml")
	mid := fbcgen.SpecForSize(55e6, "yaml")
	if small.BundlesPerPackage != 15 || mid.BundlesPerPackage != 15 {
		t.Errorf("27.5MB -> %+v, 55MB -> %+v: want 15 bundles per package", small, mid)
	}
}

func TestSpecErrors(t *testing.T) {
	for _, s := range []fbcgen.Spec{
		{},
		{Packages: 1, BundlesPerPackage: 1},
		{Packages: 1, BundlesPerPackage: 1, ChannelsPerPackage: 1, Payload: "nope"},
		{Packages: 1, BundlesPerPackage: 1, ChannelsPerPackage: 1, Format: "toml"},
	} {
		if _, err := fbcgen.Write(t.TempDir(), s); err == nil {
			t.Errorf("Write(%+v) succeeded", s)
		}
	}
}

// TestYAMLIsJSONToYAML checks that the YAML writer (which swaps base64
// strings for placeholders around the conversion) gives exactly what
// converting each JSON document with sigs.k8s.io/yaml gives, i.e. the
// output of `opm render -o yaml`.
func TestYAMLIsJSONToYAML(t *testing.T) {
	s := fbcgen.Spec{Packages: 5, BundlesPerPackage: 4, ChannelsPerPackage: 2, Seed: 9, Payload: "mixed"}
	s.Format = "yaml"
	dy, _ := write(t, s)
	s.Format = "json"
	dj, _ := write(t, s)
	fy, fj := readTree(t, dy), readTree(t, dj)
	for name, y := range fy {
		j := fj[strings.TrimSuffix(name, ".yaml")+".json"]
		var want bytes.Buffer
		dec := json.NewDecoder(bytes.NewReader(j))
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			conv, err := yaml.JSONToYAML(raw)
			if err != nil {
				t.Fatal(err)
			}
			want.WriteString("---\n")
			want.Write(conv)
		}
		if !bytes.Equal(y, want.Bytes()) {
			i := 0
			for i < len(y) && i < want.Len() && y[i] == want.Bytes()[i] {
				i++
			}
			t.Errorf("%s: YAML differs from JSONToYAML of the JSON output at byte %d: %q vs %q",
				name, i, y[max(0, i-40):min(len(y), i+40)], want.Bytes()[max(0, i-40):min(want.Len(), i+40)])
		}
	}
}
