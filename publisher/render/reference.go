package render

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// opm parses image references with containers/image's reference.ParseNamed,
// which accepts only the canonical form: "foo:v1" is an error, not
// "docker.io/library/foo:v1". catalogbot keeps that rule because the string
// as typed becomes the bundle's image field, and a catalog must not carry a
// short name that resolves differently depending on the cluster's registry
// configuration. The grammar below is distribution's reference grammar.

var (
	errNameNotCanonical = errors.New("repository name must be canonical")
	errInvalidFormat    = errors.New("invalid reference format")
	errNameUppercase    = errors.New("invalid reference format: repository name must be lowercase")
	errNameEmpty        = errors.New("repository name must have at least one component")
	errNameTooLong      = errors.New("repository name must not be more than 255 characters")
)

const (
	refAlphaNumeric  = `[a-z0-9]+`
	refSeparator     = `(?:[._]|__|[-]*)`
	refPathComponent = refAlphaNumeric + `(?:` + refSeparator + refAlphaNumeric + `)*`
	refDomainComp    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refIPv6          = `\[(?:[a-fA-F0-9:]+)\]`
	refHost          = `(?:` + refDomainComp + `(?:\.` + refDomainComp + `)*|` + refIPv6 + `)`
	refDomain        = refHost + `(?::[0-9]+)?`
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
	refRemoteName    = refPathComponent + `(?:/` + refPathComponent + `)*`
	refName          = `(?:` + refDomain + `/)?` + refRemoteName
)

var (
	referenceRE  = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	nameRE       = regexp.MustCompile(`^(?:(` + refDomain + `)/)?(` + refRemoteName + `)$`)
	identifierRE = regexp.MustCompile(`^[a-f0-9]{64}$`)
	digestHexRE  = regexp.MustCompile(`^[a-f0-9]+$`)
)

// digestSizes are the algorithms go-digest accepts, with their hex length.
var digestSizes = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// imageRef is a canonical image reference, split.
type imageRef struct {
	domain, path, tag, digest string
}

// String is the canonical form.
func (r imageRef) String() string {
	s := r.domain + "/" + r.path
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// familiar is the short form docker prints: without docker.io and library/.
func (r imageRef) familiar() string {
	s := r.String()
	if r.domain == "docker.io" {
		s = strings.TrimPrefix(strings.TrimPrefix(s, "docker.io/"), "library/")
	}
	return s
}

// parseCanonical parses s as opm's image pull does and returns the errors
// opm reports for it: ParseNamed's, then the docker transport's.
func parseCanonical(s string) (imageRef, error) {
	if identifierRE.MatchString(s) {
		return imageRef{}, fmt.Errorf("invalid repository name (%s), cannot specify 64-byte hexadecimal strings", s)
	}
	domain, remainder := splitDockerDomain(s)
	remote, _, _ := strings.Cut(remainder, ":")
	if strings.ToLower(remote) != remote {
		return imageRef{}, errNameUppercase
	}
	full := domain + "/" + remainder
	m := referenceRE.FindStringSubmatch(full)
	if m == nil {
		if referenceRE.MatchString(strings.ToLower(full)) {
			return imageRef{}, errNameUppercase
		}
		return imageRef{}, errInvalidFormat
	}
	if len(m[1]) > 255 {
		return imageRef{}, errNameTooLong
	}
	n := nameRE.FindStringSubmatch(m[1])
	ref := imageRef{domain: n[1], path: n[2], tag: m[2], digest: m[3]}
	if ref.digest != "" {
		if err := validateDigest(ref.digest); err != nil {
			return imageRef{}, err
		}
	}
	if ref.String() != s {
		return imageRef{}, errNameNotCanonical
	}
	if ref.tag == "" && ref.digest == "" {
		return imageRef{}, fmt.Errorf("Docker reference %s has neither a tag nor a digest", ref.familiar()) //nolint:staticcheck // opm's text
	}
	if ref.tag != "" && ref.digest != "" {
		return imageRef{}, errors.New("Docker references with both a tag and digest are currently not supported") //nolint:staticcheck // opm's text
	}
	return ref, nil
}

// splitDockerDomain applies docker's defaults: no registry means docker.io,
// and a single-component docker.io name lives under library/.
func splitDockerDomain(name string) (domain, remainder string) {
	i := strings.IndexRune(name, '/')
	if i == -1 || (!strings.ContainsAny(name[:i], ".:") && name[:i] != "localhost") {
		domain, remainder = "docker.io", name
	} else {
		domain, remainder = name[:i], name[i+1:]
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.ContainsRune(remainder, '/') {
		remainder = "library/" + remainder
	}
	return domain, remainder
}

func validateDigest(d string) error {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok || alg == "" || hex == "" {
		return errors.New("invalid checksum digest format")
	}
	size, known := digestSizes[alg]
	if !known {
		return errors.New("unsupported digest algorithm")
	}
	if len(hex) != size {
		return errors.New("invalid checksum digest length")
	}
	if !digestHexRE.MatchString(hex) {
		return errors.New("invalid checksum digest format")
	}
	return nil
}
