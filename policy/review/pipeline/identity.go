package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/catalogfs"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// Under the directories layout a directory is named for its operator, not
// for the package it holds (catalogs/v4.22/konflux holds
// konflux-operator), so a directory's owners could otherwise ship any
// package there, another operator's included, in a catalog that lacks it.
// A package's name is its identity across the repository: the touched
// packages carry where the base keeps them, in every catalog, and owners
// requires those places' approvers too (owners.Repo.packageTargets).

// withIdentity marks the touched packages as owned by their names, with
// the directories that hold each on the base, when the layout names
// directories for operators. Only the base is read: it is what decides
// who may approve.
func withIdentity(ctx context.Context, in *Input, pkgs []owners.PackageTouch) error {
	if in.Policy.Catalog.Layout != policy.LayoutDirectories || len(pkgs) == 0 {
		return nil
	}
	var names []string
	for _, p := range pkgs {
		if p.Home != "" && !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	holders, err := packageHolders(ctx, in.indexBase(), in.Index, in.Policy.Catalog.Roots, names)
	if err != nil {
		return fmt.Errorf("find where the base keeps the packages the change touches: %w", err)
	}
	for i := range pkgs {
		if pkgs[i].Home == "" {
			continue
		}
		pkgs[i].ByName = true
		pkgs[i].Holders = holders[pkgs[i].Name]
	}
	return nil
}

// packageHolders lists, for each of names, the directories
// ("<root>/<dir>/") that hold a blob of that package in base, under every
// root of roots that base has. The package index (cached by tree id) says
// which directories mention a name; a mention may be a dependency, so each
// is read to see that it holds the package itself.
func packageHolders(ctx context.Context, base fs.FS, store *pkgindex.Store, roots, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	if base == nil || len(names) == 0 {
		return out, nil
	}
	for _, root := range roots {
		if !isDir(base, root) {
			continue
		}
		rootFS, err := catalogfs.New(base, []string{root})
		if err != nil {
			return nil, err
		}
		index, err := packageIndex(ctx, rootFS, store, root)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			for _, dir := range index[name] {
				d := path.Join(root, dir)
				ok, err := holds(base, d, name)
				if err != nil {
					return nil, err
				}
				if ok {
					out[name] = append(out[name], d+"/")
				}
			}
		}
	}
	return out, nil
}

// holds says whether a file below dir in fsys holds a blob of package pkg.
func holds(fsys fs.FS, dir, pkg string) (bool, error) {
	found := false
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		blobs, err := fileBlobs(fsys, p, nil)
		if err != nil {
			return err
		}
		found = slices.ContainsFunc(blobs, func(b fbc.Blob) bool { return b.Package == pkg })
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return found, err
}

// catalogChanges are the catalogs of the policy's catalogs list that the
// change adds or removes: a catalog on one side only. A policy without a
// catalogs list has one catalog, which no change adds.
func catalogChanges(in *Input) ([]owners.CatalogChange, error) {
	if len(in.Policy.CatalogSets) == 0 {
		return nil, nil
	}
	base, err := in.Policy.Targets(in.Base)
	if err != nil {
		return nil, err
	}
	head, err := in.Policy.Targets(in.Head)
	if err != nil {
		return nil, err
	}
	var out []owners.CatalogChange
	oneSide := func(from, other []policy.Target, added bool) {
		for _, t := range from {
			if slices.ContainsFunc(other, func(u policy.Target) bool { return u.Name == t.Name }) {
				continue
			}
			cc := owners.CatalogChange{Name: t.Name, Roots: t.Roots, Added: added}
			for _, p := range in.Change.Paths() {
				if slices.ContainsFunc(t.Roots, func(r string) bool { return r == "." || strings.HasPrefix(p, r+"/") }) {
					cc.Files = append(cc.Files, p)
				}
			}
			out = append(out, cc)
		}
	}
	oneSide(head, base, true)
	oneSide(base, head, false)
	return out, nil
}
