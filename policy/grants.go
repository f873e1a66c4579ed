package policy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/publisher/build"
)

// A repository's policy names where its catalogs are published, and the
// App pushes and signs with the service's credentials, which reach every
// image of every repository it serves. So which repository may publish to
// which image is the service operator's to say (the App's configuration,
// publish.targets), never a repository's: without that, a second
// repository that names the first one's image gets the App's push and
// signature over it. The policy can only narrow what the operator grants.

// TargetGrant gives repositories the publish targets under some prefixes.
type TargetGrant struct {
	// Repositories are OWNER/NAME, or OWNER/* for every repository of an
	// owner, compared without regard to case as GitHub compares them.
	Repositories []string
	// Installations are App installation ids: every repository of the
	// installation.
	Installations []int64
	// Prefixes are target names (build.Target.Name) or their beginnings
	// on a path boundary: quay.io/acme/ holds quay.io/acme/index and
	// quay.io/acme/x/y; quay.io/acme/index holds itself and what is under
	// it, not quay.io/acme/index2. oci:DIR holds the layouts in and under
	// DIR.
	Prefixes []string
	// Line is where the grant is written in the configuration file.
	Line int
}

// ErrTargetNotGranted is CheckTarget's error for a target the repository
// may not publish to.
var ErrTargetNotGranted = errors.New("the repository may not publish to this target")

// CheckPrefix checks a grant's prefix: a registry HOST/PATH[/] or
// oci:DIR, without tag or digest.
func CheckPrefix(s string) error {
	if strings.HasPrefix(s, build.LayoutPrefix) {
		if dir := strings.TrimPrefix(s, build.LayoutPrefix); dir == "" || !path.IsAbs(dir) {
			return errors.New("an OCI layout prefix is oci:/ABSOLUTE/DIR")
		}
		return nil
	}
	t, err := build.ParseTarget(strings.TrimSuffix(s, "/"))
	if err != nil {
		return err
	}
	if t.Name() != strings.TrimSuffix(s, "/") {
		return errors.New("want a registry host and path without tag or digest, such as quay.io/acme/")
	}
	return nil
}

// CheckTarget says whether repository (OWNER/NAME), of the App
// installation installation (0 when not known), may publish to target.
// The grants whose Repositories or Installations match say where it may publish;
// when none does, the repository's own namespace: a registry repository
// whose path is OWNER/NAME or under it (quay.io/acme/catalog,
// ghcr.io/acme/catalog/index), on any registry the service can push to,
// and no OCI layout, since a layout is a directory on the service's disk.
// The path is compared as registries write it, in lowercase. The error
// (ErrTargetNotGranted) says what the repository may use.
func CheckTarget(grants []TargetGrant, repository string, installation int64, target string) error {
	t, err := build.ParseTarget(target)
	if err != nil {
		return err
	}
	name := t.Name()
	if t.IsLayout() {
		// ../ never climbs out of a granted directory.
		name = build.LayoutPrefix + path.Clean(t.Layout)
	}
	var granted []string
	for _, g := range grants {
		if !grantsRepository(g, repository) && (installation == 0 || !slices.Contains(g.Installations, installation)) {
			continue
		}
		for _, p := range g.Prefixes {
			if holds(p, name) {
				return nil
			}
		}
		granted = append(granted, g.Prefixes...)
	}
	if granted == nil {
		own := strings.ToLower(repository)
		if !t.IsLayout() && (t.Repository == own || strings.HasPrefix(t.Repository, own+"/")) {
			return nil
		}
		return fmt.Errorf("%w: %s is outside %s's own namespace (REGISTRY/%s[/…]), and the service's configuration grants it no other (publish.targets)", ErrTargetNotGranted, name, repository, own)
	}
	return fmt.Errorf("%w: %s is under none of the prefixes the service's configuration grants %s (%s)", ErrTargetNotGranted, name, repository, strings.Join(granted, ", "))
}

// grantsRepository says whether g names repository, as OWNER/NAME or
// OWNER/*.
func grantsRepository(g TargetGrant, repository string) bool {
	owner, _, _ := strings.Cut(repository, "/")
	for _, r := range g.Repositories {
		if strings.EqualFold(r, repository) || strings.HasSuffix(r, "/*") && strings.EqualFold(strings.TrimSuffix(r, "/*"), owner) {
			return true
		}
	}
	return false
}

// holds says whether the prefix p holds the target name, on a path
// boundary.
func holds(p, name string) bool {
	if strings.HasSuffix(p, "/") {
		return strings.HasPrefix(name, p)
	}
	return name == p || strings.HasPrefix(name, p+"/")
}
