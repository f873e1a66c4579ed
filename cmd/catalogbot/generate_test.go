package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// opm's recorded Dockerfiles; see publisher/dockerfile/testdata/README.md.
const dockerfileGolden = "publisher/dockerfile/testdata"

func TestGenerateDockerfile(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"defaults", nil, "default.Dockerfile"},
		{"scratch base and labels", []string{"-i", "scratch", "-l", "a=b", "-l", "z=1 2", "-l", "c=d"}, "scratch-labels.Dockerfile"},
		{"comma-separated labels", []string{"-i", "scratch", "-l", "a=b,c=d", "-l", "z=1 2"}, "scratch-labels.Dockerfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "catalog")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"generate", "dockerfile", dir + "/"}, tt.args...)
			r := cli(t, nil, args...)
			if r.code != exitOK || r.stdout != "" || r.stderr != "" {
				t.Fatalf("got %+v", r)
			}
			got, err := os.ReadFile(filepath.Join(root, "catalog.Dockerfile"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(repoRoot, dockerfileGolden, tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("catalog.Dockerfile =\n%s\nwant\n%s", got, want)
			}

			// Never overwritten: a second run fails and changes nothing.
			r = cli(t, nil, "generate", "dockerfile", dir, "-i", "other:latest")
			path := filepath.Join(root, "catalog.Dockerfile")
			if r.code != exitInvalid || r.stderr != `catalogbot: path "`+path+`": file already exists`+"\n" {
				t.Errorf("second run: got %+v", r)
			}
			if again, _ := os.ReadFile(path); string(again) != string(got) {
				t.Error("second run changed the Dockerfile")
			}
		})
	}
}

func TestGenerateDockerfileErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "catalog")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // first line of stderr
	}{
		{"scratch builder", []string{dir, "-b", "scratch"}, exitError, `catalogbot: invalid builder image: "scratch"`},
		{"label without =", []string{dir, "-l", "novalue"}, exitError, `catalogbot: invalid label "novalue"`},
		{"no DIR", nil, exitError, "catalogbot: generate dockerfile takes exactly one catalog directory, got 0 arguments"},
		{"DIR is a file", []string{file}, exitInvalid, `catalogbot: provided root path "` + file + `" is not a directory`},
		{"DIR is missing", []string{filepath.Join(root, "missing")}, exitInvalid, "catalogbot: stat " + filepath.Join(root, "missing") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"generate", "dockerfile"}, tt.args...)...)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d", r.code, tt.code)
			}
			if first, _, _ := strings.Cut(r.stderr, "\n"); first != tt.want {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", r.stderr, tt.want)
			}
			if _, err := os.Stat(filepath.Join(root, "catalog.Dockerfile")); !os.IsNotExist(err) {
				t.Error("a Dockerfile was written despite the error")
			}
		})
	}

	r := cli(t, nil, "generate")
	if r.code != exitError || !strings.HasPrefix(r.stderr, "catalogbot: generate needs a generator: dockerfile\n") {
		t.Errorf("generate without a generator: got %+v", r)
	}
}
