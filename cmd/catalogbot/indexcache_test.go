package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckCacheDir: check keeps the package index in --cache-dir, in the
// user's cache directory by default, and nowhere with --cache-dir=off;
// the verdict is the same every way.
func TestCheckCacheDir(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	explicit := filepath.Join(t.TempDir(), "index")
	tests := []struct {
		name  string
		flags []string
		where string // where an index file must be, "" for nowhere
	}{
		{"off", []string{"--cache-dir=off"}, ""},
		{"default", nil, filepath.Join(home, "catalogbot", "package-index")},
		{"explicit", []string{"--cache-dir", explicit}, explicit},
	}
	for _, tt := range tests {
		args := append([]string{"check", "--base", "main", "--head", "bad", "--author", "alice"}, tt.flags...)
		res := ownersCLI(t, r.Dir, args...)
		if res.code != exitInvalid {
			t.Fatalf("%s: exit %d\n%s%s", tt.name, res.code, res.stdout, res.stderr)
		}
		files, _ := filepath.Glob(filepath.Join(home, "catalogbot", "package-index", "*.idx"))
		if tt.where != "" {
			files, _ = filepath.Glob(filepath.Join(tt.where, "*.idx"))
			if len(files) == 0 {
				t.Errorf("%s: no package index in %s", tt.name, tt.where)
			}
		} else if len(files) > 0 {
			t.Errorf("%s: a package index was written: %v", tt.name, files)
		}
	}
	if _, err := os.Stat(explicit); err != nil {
		t.Error(err)
	}
}
