package reference

import (
	"errors"
	"strings"
)

// ErrNameNotCanonical is ParseNamed's error for a reference that is not
// written in full: "foo:v1" rather than "docker.io/library/foo:v1".
var ErrNameNotCanonical = errors.New("repository name must be canonical")

// Canonical is a fully written image reference, split into its parts.
type Canonical struct {
	Domain, Path, Tag, Digest string
}

// String is the reference as written.
func (r Canonical) String() string {
	s := r.Domain + "/" + r.Path
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// Familiar is the short form docker prints: without docker.io and
// library/.
func (r Canonical) Familiar() string {
	s := r.String()
	if r.Domain == defaultDomain {
		s = strings.TrimPrefix(strings.TrimPrefix(s, defaultDomain+"/"), officialRepoPrefix)
	}
	return s
}

// ParseCanonical parses s as `opm render` reads an image to pull: with
// go.podman.io/image's ParseNamed, which takes only the canonical form
// (the grammar of Validate, and nothing left to defaults), then the docker
// transport's rule that a reference names exactly one of a tag and a
// digest. The errors are theirs, word for word.
//
// catalogbot keeps the rule because the reference as typed becomes a
// bundle's image field: a catalog must not carry a short name that
// resolves differently depending on a cluster's registry configuration.
func ParseCanonical(s string) (Canonical, error) {
	full, err := normalize(s)
	if err != nil {
		return Canonical{}, err
	}
	if full != s {
		return Canonical{}, ErrNameNotCanonical
	}
	rest, digest, _ := strings.Cut(s, "@")
	name, tag := rest, ""
	if c := strings.LastIndexByte(rest, ':'); c >= 0 && !strings.Contains(rest[c+1:], "/") {
		name, tag = rest[:c], rest[c+1:]
	}
	domain, path, _ := strings.Cut(name, "/")
	ref := Canonical{Domain: domain, Path: path, Tag: tag, Digest: digest}
	switch {
	case tag == "" && digest == "":
		return Canonical{}, errors.New("Docker reference " + ref.Familiar() + " has neither a tag nor a digest")
	case tag != "" && digest != "":
		//lint:ignore ST1005 distribution/reference's message, which opm prints
		return Canonical{}, errors.New("Docker references with both a tag and digest are currently not supported")
	}
	return ref, nil
}

// CheckQualified checks that s is an image reference in the canonical form
// render requires: a registry host (with a dot or a port, or localhost),
// the repository, and a tag or digest. A missing tag stands for latest, as
// registries read it. Command lines use it to refuse "foo:v1" or a
// misspelt keyword before any registry is contacted, by the same grammar
// render applies.
func CheckQualified(s string) error {
	ref := s
	last := s[strings.LastIndex(s, "/")+1:]
	if !strings.Contains(s, "@") && !strings.Contains(last, ":") {
		ref += ":latest"
	}
	_, err := ParseCanonical(ref)
	return err
}

// IsTag says whether s is a valid tag: a letter, digit or '_', then at
// most 127 of those, '.' or '-'.
func IsTag(s string) bool { return isTag(s) }
