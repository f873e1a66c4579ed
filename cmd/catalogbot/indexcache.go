package main

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// cacheDirOff is the --cache-dir value that keeps no package index on
// disk.
const cacheDirOff = "off"

// addCacheDirFlag defines --cache-dir: where check and backtest keep the
// package index of the base's catalogs across runs, so that a run reads
// only the package directories whose git trees no earlier run indexed,
// and what the base's operators/*/ci.yaml files say (policy.Records).
func addCacheDirFlag(fl *pflag.FlagSet, dir *string) {
	fl.StringVar(dir, "cache-dir", "", "keep the package index of the base's catalogs, and what its operators/*/ci.yaml files say, in this `DIR` across runs (default: catalogbot/package-index in the user's cache directory, $XDG_CACHE_HOME or ~/.cache; off for none)")
}

// openIndex opens the package index --cache-dir names. The default
// directory is a convenience: when it cannot be made (no home, a
// read-only one) the run goes on without it, as it would with off. A
// directory the user named must work.
func openIndex(dir string) (*pkgindex.Store, error) {
	switch dir {
	case cacheDirOff:
		return nil, nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, nil
		}
		s, err := pkgindex.Open(filepath.Join(base, "catalogbot", "package-index"), pkgindex.Options{})
		if err != nil {
			return nil, nil
		}
		return s, nil
	}
	return pkgindex.Open(dir, pkgindex.Options{})
}
