package build

import (
	"errors"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/checks/reference"
)

// Target is where a catalog image is published: an OCI image layout
// directory (oci:DIR[:TAG]) or a fully qualified registry reference.
// ParseTarget is its one grammar; the policy's publish targets and the
// command line's --image are both read with it.
type Target struct {
	// Layout is the OCI image layout directory, "" for a registry.
	Layout string
	// Registry is the registry host[:port]; Repository the path under
	// it (owner/name/…). Both "" for a layout.
	Registry, Repository string
	// Tag is the tag (a layout's, DefaultLayoutTag when it names none);
	// Digest the digest a registry reference pins, if any.
	Tag, Digest string
}

// ErrNoRegistry is ParseTarget's error for a reference that names no
// registry host, which a registry client would send to Docker Hub.
var ErrNoRegistry = errors.New("no registry host: it would be pushed to Docker Hub")

// ParseTarget reads a publish target. A registry reference must be fully
// qualified (a host with a dot or a port, or localhost: catalog:v1 would
// silently go to Docker Hub, so Docker Hub is named as docker.io/…); a
// missing tag stands for latest, as registries read it. An OCI layout
// needs a directory, and its tag, if given, is a valid tag.
func ParseTarget(s string) (Target, error) {
	if spec, ok := strings.CutPrefix(s, LayoutPrefix); ok {
		dir, tag := SplitLayout(spec)
		switch {
		case dir == "":
			return Target{}, errors.New("an OCI layout target needs a directory, oci:DIR[:TAG]")
		case !reference.IsTag(tag):
			return Target{}, fmt.Errorf("tag %q is not valid: want letters, digits, '_', '.' and '-', at most 128, not starting with '.' or '-'", tag)
		}
		return Target{Layout: dir, Tag: tag}, nil
	}
	err := reference.CheckQualified(s)
	if errors.Is(err, reference.ErrNameNotCanonical) {
		return Target{}, fmt.Errorf("%w; write the registry host too (a name with a dot or a port, or localhost), such as quay.io/example/catalog:v1, or docker.io/example/catalog:v1 for Docker Hub", ErrNoRegistry)
	}
	if err != nil {
		return Target{}, fmt.Errorf("%v; write a reference such as quay.io/example/catalog:v1 (lowercase repository, tag or @sha256:digest)", err)
	}
	rest, digest, _ := strings.Cut(s, "@")
	name, tag := rest, ""
	if c := strings.LastIndexByte(rest, ':'); c >= 0 && !strings.Contains(rest[c+1:], "/") {
		name, tag = rest[:c], rest[c+1:]
	}
	if tag == "" && digest == "" {
		tag = "latest"
	}
	host, repo, _ := strings.Cut(name, "/")
	return Target{Registry: host, Repository: repo, Tag: tag, Digest: digest}, nil
}

// IsLayout says whether the target is an OCI image layout.
func (t Target) IsLayout() bool { return t.Layout != "" }

// Name is the target without its tag or digest: the layout's directory
// (oci:DIR) or the registry repository (HOST/PATH). Two targets with
// the same Name and tag are one image.
func (t Target) Name() string {
	if t.IsLayout() {
		return LayoutPrefix + t.Layout
	}
	return t.Registry + "/" + t.Repository
}

// String is the target in the grammar ParseTarget reads, with the tag
// it stands for.
func (t Target) String() string {
	s := t.Name()
	if t.Tag != "" {
		s += ":" + t.Tag
	}
	if t.Digest != "" {
		s += "@" + t.Digest
	}
	return s
}
