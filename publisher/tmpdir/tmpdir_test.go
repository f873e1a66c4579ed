package tmpdir

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID is above any kernel's pid_max, so no process has it.
const deadPID = 2147483646

func TestSweep(t *testing.T) {
	now := time.Now()
	old := now.Add(-2 * MinAge)
	self := strconv.Itoa(os.Getpid())
	dead := strconv.Itoa(deadPID)
	tests := []struct {
		name    string
		entry   string
		file    bool // a file, not a directory
		mtime   time.Time
		removed bool
	}{
		{"dead owner, old", "catalogbot-render-pid" + dead + "-123", false, old, true},
		{"dead owner, no kind", "catalogbot-pid" + dead + "-123", false, old, true},
		{"dead owner, recent", "catalogbot-rebuild-pid" + dead + "-123", false, now, false},
		{"live owner, old", "catalogbot-render-pid" + self + "-123", false, old, false},
		{"init is alive", "catalogbot-render-pid1-123", false, old, false},
		{"another prefix", "other-pid" + dead + "-123", false, old, false},
		{"no owner", "catalogbot-render-123", false, old, false},
		{"malformed owner", "catalogbot-render-pidx-123", false, old, false},
		{"owner inside a word", "catalogbot-rapid" + dead + "-123", false, old, false},
		{"a file", "catalogbot-render-pid" + dead + "-123.json", true, old, false},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		p := filepath.Join(dir, tt.entry)
		var err error
		if tt.file {
			err = os.WriteFile(p, nil, 0o644)
		} else if err = os.Mkdir(p, 0o700); err == nil {
			err = os.WriteFile(filepath.Join(p, "layer"), []byte("x"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, tt.mtime, tt.mtime); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := Sweep(dir, Prefix, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.entry)
		_, statErr := os.Stat(p)
		if gone := os.IsNotExist(statErr); gone != tt.removed || slices.Contains(removed, p) != tt.removed {
			t.Errorf("%s: removed %v (reported %v), want %v", tt.name, gone, slices.Contains(removed, p), tt.removed)
		}
	}
}

func TestMakeNamesOwner(t *testing.T) {
	dir := t.TempDir()
	p, err := Make(dir, Prefix+"render-")
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := owner(filepath.Base(p), Prefix); !ok || pid != os.Getpid() {
		t.Errorf("%s: owner %d, %v; want %d", p, pid, ok, os.Getpid())
	}
	if !strings.HasPrefix(filepath.Base(p), Prefix+"render-pid") {
		t.Errorf("name %s", p)
	}
	// Its own directories are never swept, however old.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if removed, err := Sweep(dir, Prefix, time.Now()); err != nil || len(removed) != 0 {
		t.Errorf("swept %v, %v", removed, err)
	}
}

func TestSweepMissingDir(t *testing.T) {
	if removed, err := Sweep(filepath.Join(t.TempDir(), "absent"), Prefix, time.Now()); err != nil || removed != nil {
		t.Errorf("Sweep of a missing directory = %v, %v", removed, err)
	}
}
