// Command fakeopm stands in for opm in the tests of publisher/build. It
// does to the cache directory what `opm serve CONFIGS --cache-dir=DIR
// --cache-only` does when DIR holds an empty json cache: it writes one
// file per catalog file under DIR/cache and a digest, with opm's modes.
//
// A catalog file named fail-opm makes it fail as opm does; one named
// opm-log names a file it appends a line to on every run.
package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "level=fatal msg=%q\n", err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 || args[0] != "serve" {
		return fmt.Errorf("usage: serve CONFIGS --cache-dir=DIR --cache-only")
	}
	configs, dir, only := args[1], "", false
	for _, a := range args[2:] {
		switch {
		case strings.HasPrefix(a, "--cache-dir="):
			dir = strings.TrimPrefix(a, "--cache-dir=")
		case a == "--cache-only":
			only = true
		}
	}
	if dir == "" || !only {
		return fmt.Errorf("want --cache-dir and --cache-only, got %q", args)
	}
	if _, err := os.Stat(filepath.Join(configs, "fail-opm")); err == nil {
		return fmt.Errorf("failed to load or rebuild cache: fake failure")
	}
	if p, err := os.ReadFile(filepath.Join(configs, "opm-log")); err == nil {
		f, err := os.OpenFile(strings.TrimSpace(string(p)), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fmt.Fprintln(f, "ran")
		f.Close()
	}
	for _, name := range []string{"cache", "digest"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("not a json cache: %v", err)
		}
	}
	syscall.Umask(0)
	if err := os.Remove(filepath.Join(dir, "digest")); err != nil {
		return err
	}
	sum := sha256.New()
	err := filepath.WalkDir(configs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(configs, p)
		fmt.Fprintf(sum, "%s %o %x\n", rel, info.Mode().Perm(), sha256.Sum256(data))
		name := strings.ReplaceAll(rel, string(filepath.Separator), "_") + ".json"
		return os.WriteFile(filepath.Join(dir, "cache", name), fmt.Appendf(nil, "%q\n", data), 0o640)
	})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "digest"), fmt.Appendf(nil, "%x", sum.Sum(nil)), 0o640)
}
