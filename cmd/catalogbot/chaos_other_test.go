//go:build !linux

package main

import (
	"os"
	"testing"
)

// mountSmallFS would mount a small file system to fill at dir: a tmpfs,
// which only Linux has here. The full-disk fault is left out.
func mountSmallFS(t *testing.T, dir string, _ int) string {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return "no tmpfs to mount on this system"
}
