package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"
)

// mountSmallFS mounts a tmpfs of size bytes at dir, unmounted when the
// test ends, and returns "", or why it could not: mounting needs root.
// Under CI=true as root it must work; as another user the full-disk
// fault is left out, saying why.
func mountSmallFS(t *testing.T, dir string, size int) string {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return "not root: no file system of its own to fill"
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0700", size)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs as root: %v", err)
		}
		return "mounting a tmpfs: " + err.Error()
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return ""
}
