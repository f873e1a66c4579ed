package dockerfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestGenerateMatchesOPM(t *testing.T) {
	tests := []struct {
		name          string
		dir           string
		base, builder string
		labels        []string
		golden        string
	}{
		{"defaults", "catalog", DefaultImage, DefaultImage, nil, "default.Dockerfile"},
		{"trailing slash and dot", "./catalog/", DefaultImage, DefaultImage, nil, "default.Dockerfile"},
		{"nested dir", "repo/catalogs/catalog", DefaultImage, DefaultImage, nil, "default.Dockerfile"},
		{"scratch base with labels", "catalog", "scratch", DefaultImage,
			[]string{"a=b", "z=1 2", "c=d"}, "scratch-labels.Dockerfile"},
		{"duplicate label keys keep the last", "catalog", "scratch", DefaultImage,
			[]string{"a=x", "z=1 2", "c=d", "a=b"}, "scratch-labels.Dockerfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels, err := ParseLabels(tt.labels)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Generate(tt.dir, tt.base, tt.builder, labels)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join("testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("Generate() =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestArgumentErrors(t *testing.T) {
	tests := []struct {
		name          string
		dir           string
		base, builder string
		want          string
	}{
		{"scratch builder", "catalog", DefaultImage, "scratch", `invalid builder image: "scratch"`},
		{"no base", "catalog", "", DefaultImage, "base image is unset"},
		{"root dir", "/", DefaultImage, DefaultImage, "index directory is unset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Generate(tt.dir, tt.base, tt.builder, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Generate() error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseLabels(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr string
	}{
		{in: nil, want: map[string]string{}},
		{in: []string{"a=b=c", "e="}, want: map[string]string{"a": "b=c", "e": ""}},
		{in: []string{"a=b", "novalue"}, wantErr: `invalid label "novalue"`},
	}
	for _, tt := range tests {
		got, err := ParseLabels(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseLabels(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseLabels(%q): %v", tt.in, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("ParseLabels(%q) = %v, want %v", tt.in, got, tt.want)
		}
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("ParseLabels(%q)[%q] = %q, want %q", tt.in, k, got[k], v)
			}
		}
	}
}

func TestPath(t *testing.T) {
	tests := map[string]string{
		"catalog":          "catalog.Dockerfile",
		"./catalog/":       "catalog.Dockerfile",
		"a/b/catalog":      "a/b/catalog.Dockerfile",
		"/abs/catalog//":   "/abs/catalog.Dockerfile",
		"../up/catalog/./": "../up/catalog.Dockerfile",
	}
	for in, want := range tests {
		if got := dockerfilePath(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWrite(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "catalog")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir+"/", DefaultImage, DefaultImage, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "catalog.Dockerfile"); path != want {
		t.Errorf("Write() path = %q, want %q", path, want)
	}
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile("testdata/default.Dockerfile")
	if string(got) != string(want) {
		t.Errorf("written Dockerfile =\n%s\nwant\n%s", got, want)
	}

	// A second run must not overwrite what the first wrote.
	_, err = Write(dir, "scratch", DefaultImage, nil)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Write() error = %v, want fs.ErrExist", err)
	}
	if want := `path "` + path + `": file already exists`; err.Error() != want {
		t.Errorf("second Write() error = %q, want %q", err, want)
	}
	if again, _ := os.ReadFile(path); string(again) != string(got) {
		t.Error("second Write() changed the existing Dockerfile")
	}

	file := filepath.Join(root, "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(file, DefaultImage, DefaultImage, nil); err == nil || err.Error() != `provided root path "`+file+`" is not a directory` {
		t.Errorf("Write(file) error = %v", err)
	}
	if _, err := os.Stat(file + ".Dockerfile"); !os.IsNotExist(err) {
		t.Errorf("Write(file) left %s.Dockerfile behind", file)
	}
	if _, err := Write(filepath.Join(root, "missing"), DefaultImage, DefaultImage, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write(missing) error = %v, want fs.ErrNotExist", err)
	}
}
