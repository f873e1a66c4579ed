package membudget

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// cgroup lays out a fake cgroup file system: files by path under root.
func cgroup(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestCgroupLimit(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		limit int64
		file  string // the file read, relative to root
		ok    bool
		err   string
	}{
		{name: "v2", files: map[string]string{"memory.max": "805306368\n"}, limit: 768 << 20, file: "memory.max", ok: true},
		{name: "v2 unlimited", files: map[string]string{"memory.max": "max\n"}, file: "memory.max"},
		{name: "v1", files: map[string]string{"memory/memory.limit_in_bytes": "536870912\n"}, limit: 512 << 20, file: "memory/memory.limit_in_bytes", ok: true},
		// v1's default: the page counter's maximum, a page short of 2^63.
		{name: "v1 unlimited", files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, file: "memory/memory.limit_in_bytes"},
		{name: "v2 before v1", files: map[string]string{"memory.max": "1073741824", "memory/memory.limit_in_bytes": "536870912"}, limit: 1 << 30, file: "memory.max", ok: true},
		{name: "no cgroup"},
		{name: "garbage", files: map[string]string{"memory.max": "lots\n"}, file: "memory.max", err: `"lots" is not a memory limit`},
		{name: "zero", files: map[string]string{"memory.max": "0\n"}, file: "memory.max", err: `"0" is not a memory limit`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := cgroup(t, tc.files)
			limit, file, ok, err := CgroupLimit(root)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), filepath.Join(root, tc.file)) {
					t.Fatalf("err = %v; want one naming %s and saying %s", err, tc.file, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantFile := ""
			if tc.file != "" {
				wantFile = filepath.Join(root, tc.file)
			}
			if limit != tc.limit || ok != tc.ok || file != wantFile {
				t.Errorf("got %d, %q, %v; want %d, %q, %v", limit, file, ok, tc.limit, wantFile, tc.ok)
			}
		})
	}
}

func TestRuntimeLimit(t *testing.T) {
	for _, tc := range []struct{ cgroup, want int64 }{
		// The shipped deployment: 128 MiB left, more than a tenth.
		{768 << 20, 640 << 20},
		{4 << 30, 4<<30 - 4<<30/10},
		{200 << 20, 100 << 20},
	} {
		if got := RuntimeLimit(tc.cgroup); got != tc.want {
			t.Errorf("RuntimeLimit(%d MiB) = %d MiB, want %d MiB", tc.cgroup>>20, got>>20, tc.want>>20)
		}
	}
}

// TestSetLimit: without GOMEMLIMIT the runtime gets RuntimeLimit of the
// cgroup's limit; with it, the runtime's own is kept and reported; without either
// there is none.
func TestSetLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	limited := cgroup(t, map[string]string{"memory.max": "805306368\n"})
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMEMLIMIT" {
				return v
			}
			return ""
		}
	}

	s, err := SetLimit(env(""), limited)
	if err != nil {
		t.Fatal(err)
	}
	want := RuntimeLimit(768 << 20)
	if s.Limit != want || s.Cgroup != 768<<20 || s.From != filepath.Join(limited, "memory.max") || debug.SetMemoryLimit(-1) != want {
		t.Errorf("from the cgroup: %+v, runtime %d; want %d", s, debug.SetMemoryLimit(-1), want)
	}

	// GOMEMLIMIT set: the runtime read it at start; it stays.
	debug.SetMemoryLimit(300 << 20)
	s, err = SetLimit(env("300MiB"), limited)
	if err != nil {
		t.Fatal(err)
	}
	if s.Limit != 300<<20 || s.From != "GOMEMLIMIT" || debug.SetMemoryLimit(-1) != 300<<20 {
		t.Errorf("with GOMEMLIMIT: %+v, runtime %d; want 300 MiB kept", s, debug.SetMemoryLimit(-1))
	}

	debug.SetMemoryLimit(prev)
	s, err = SetLimit(env(""), cgroup(t, map[string]string{"memory.max": "max\n"}))
	if err != nil || s.Limit != 0 || debug.SetMemoryLimit(-1) != prev {
		t.Errorf("no limit: %+v, %v, runtime %d; want none set", s, err, debug.SetMemoryLimit(-1))
	}

	if _, err := SetLimit(env(""), cgroup(t, map[string]string{"memory.max": "lots"})); err == nil {
		t.Error("an unreadable limit: no error")
	}
}
