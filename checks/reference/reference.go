// Package reference is the one grammar of container image references in
// catalogbot. Validate checks a reference the way
// go.podman.io/image/v5/docker/reference.ParseNormalizedNamed does, which is
// what `opm validate` (operator-registry v1.64.0 and later) uses for a
// bundle's image and its related images; ParseCanonical reads one the way
// `opm render` does before it pulls, which takes the canonical form only.
//
// Only acceptance and the error text matter here, so the grammar is checked by
// hand-written scanners instead of regular expressions:
//
//	reference        := name [ ":" tag ] [ "@" digest ]
//	name             := [domain "/"] component ("/" component)*
//	domain           := host-part ("." host-part)* [":" [0-9]+]
//	host-part        := [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
//	component        := [a-z0-9]+ (separator [a-z0-9]+)*
//	separator        := "." | "_" | "__" | "-"*
//	tag              := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//	digest           := algorithm ":" [0-9a-fA-F]{32,}
//	algorithm        := alg-part ([-_+.] alg-part)*
//	alg-part         := [A-Za-z][A-Za-z0-9]*
//
// There is no IPv6 literal host in this grammar: "[::1]:5000/foo" is an
// invalid reference format, unlike in github.com/distribution/reference.
package reference

import (
	"errors"
	"strings"
)

// Errors returned by Validate and normalize. Their texts are those of
// go.podman.io/image/v5/docker/reference and github.com/opencontainers/go-digest.
var (
	// errReferenceInvalidFormat: the string does not match the grammar.
	errReferenceInvalidFormat = errors.New("invalid reference format")
	// errFamiliarNameUppercase: the repository path (everything after the
	// domain and before the first ':') is not lowercase. ParseNormalizedNamed
	// checks this before the grammar.
	errFamiliarNameUppercase = errors.New("invalid reference format: repository name must be lowercase")
	// errNameContainsUppercase: the string fails the grammar but its
	// strings.ToLower form matches it (only reachable through characters such
	// as U+212A KELVIN SIGN that lower-case to ASCII letters).
	errNameContainsUppercase = errors.New("repository name must be lowercase")
	// errNameTooLong: the normalized name (domain included, tag and digest
	// excluded) is longer than NameTotalLengthMax.
	errNameTooLong = errors.New("repository name must not be more than 255 characters")
	// errDigestInvalidFormat is go-digest's error for a malformed digest.
	errDigestInvalidFormat = errors.New("invalid checksum digest format")
	// errDigestInvalidLength is go-digest's error for a wrong-size encoded part.
	errDigestInvalidLength = errors.New("invalid checksum digest length")
	// errDigestUnsupported is go-digest's error for an unknown algorithm.
	errDigestUnsupported = errors.New("unsupported digest algorithm")
)

// NameTotalLengthMax is the longest normalized repository name accepted.
const NameTotalLengthMax = 255

const (
	defaultDomain       = "docker.io"
	legacyDefaultDomain = "index.docker.io"
	officialRepoPrefix  = "library/"
)

// identifierError reports a bare 64-character lowercase hex string, which
// ParseNormalizedNamed refuses before anything else.
type identifierError struct{ s string }

func (e *identifierError) Error() string {
	return "invalid repository name (" + e.s + "), cannot specify 64-byte hexadecimal strings"
}

// Validate reports whether s parses as a normalized docker image reference,
// exactly as go.podman.io/image/v5/docker/reference.ParseNormalizedNamed
// does, returning an error whose Error() text is byte-identical to that
// function's error (nil when it parses).
func Validate(s string) error {
	_, err := normalize(s)
	return err
}

// normalize returns the fully qualified form of the familiar reference s,
// with its tag and digest as given: "foo:v1" becomes
// "docker.io/library/foo:v1", "foo" becomes "docker.io/library/foo" and
// "index.docker.io/x/y" becomes "docker.io/x/y". No default tag is added. The
// result equals String() of ParseNormalizedNamed's result; the error is the
// one Validate returns.
func normalize(s string) (string, error) {
	if isIdentifier(s) {
		return "", &identifierError{s: s}
	}
	domain, remainder := splitDockerDomain(s)
	path := remainder
	if i := strings.IndexByte(remainder, ':'); i >= 0 {
		path = remainder[:i]
	}
	if !isLower(path) {
		return "", errFamiliarNameUppercase
	}
	full := domain + "/" + remainder
	if err := parse(full); err != nil {
		return "", err
	}
	return full, nil
}

// splitDockerDomain separates the registry host from the rest of s. The first
// path element is a host only when it contains '.' or ':' or is "localhost";
// otherwise docker.io is implied. Single-element docker.io names live under
// "library/".
func splitDockerDomain(s string) (domain, remainder string) {
	i := strings.IndexByte(s, '/')
	if i < 0 || (s[:i] != "localhost" && !strings.ContainsAny(s[:i], ".:")) {
		domain, remainder = defaultDomain, s
	} else {
		domain, remainder = s[:i], s[i+1:]
	}
	if domain == legacyDefaultDomain {
		domain = defaultDomain
	}
	if domain == defaultDomain && strings.IndexByte(remainder, '/') < 0 {
		remainder = officialRepoPrefix + remainder
	}
	return domain, remainder
}

// isLower reports whether strings.ToLower(s) == s, without allocating for
// ASCII input.
func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			// Non-ASCII (or invalid UTF-8, which ToLower rewrites): defer to
			// the exact library behaviour.
			return strings.ToLower(s) == s
		}
		if 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

// parse mirrors reference.Parse for a string that always contains a '/'.
func parse(s string) error {
	nameLen, digest, ok := match(s)
	if !ok {
		if lower := strings.ToLower(s); lower != s {
			if _, _, ok := match(lower); ok {
				return errNameContainsUppercase
			}
		}
		return errReferenceInvalidFormat
	}
	if nameLen > NameTotalLengthMax {
		return errNameTooLong
	}
	if digest != "" {
		return validateDigest(digest)
	}
	return nil
}

// match checks s against the whole reference grammar and returns the length
// of the name part and the digest part (empty when absent).
//
// The split is unambiguous: none of name, tag and digest contain '@', so an
// '@' starts the digest. Before it, a tag contains neither ':' nor '/', and a
// ':' inside the name (the domain's port) is always followed by a '/', so the
// last ':' separates the tag exactly when no '/' follows it.
func match(s string) (nameLen int, digest string, ok bool) {
	pre := s
	if at := strings.IndexByte(s, '@'); at >= 0 {
		pre, digest = s[:at], s[at+1:]
		if !isDigestSyntax(digest) {
			return 0, "", false
		}
	}
	name := pre
	if c := strings.LastIndexByte(pre, ':'); c >= 0 && strings.IndexByte(pre[c+1:], '/') < 0 {
		name = pre[:c]
		if !isTag(pre[c+1:]) {
			return 0, "", false
		}
	}
	if !isName(name) {
		return 0, "", false
	}
	return len(name), digest, true
}

// isName checks the name production: an optional domain followed by one or
// more path components separated by '/'.
func isName(name string) bool {
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return isComponent(name)
	}
	if first := name[:i]; !isComponent(first) && !isDomain(first) {
		return false
	}
	rest := name[i+1:]
	for {
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return isComponent(rest)
		}
		if !isComponent(rest[:j]) {
			return false
		}
		rest = rest[j+1:]
	}
}

func isLowerAlnum(c byte) bool { return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') }

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWord(c byte) bool { return isAlnum(c) || c == '_' }

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// isComponent checks one path component: runs of [a-z0-9] joined by a single
// '.', one or two '_', or any number of '-'.
func isComponent(s string) bool {
	i, n := 0, len(s)
	for {
		// an alphanumeric run, at least one character
		start := i
		for i < n && isLowerAlnum(s[i]) {
			i++
		}
		if i == start {
			return false
		}
		if i == n {
			return true
		}
		switch s[i] {
		case '.':
			i++
		case '_':
			i++
			if i < n && s[i] == '_' {
				i++
			}
		case '-':
			for i < n && s[i] == '-' {
				i++
			}
		default:
			return false
		}
	}
}

// isDomain checks dot-separated host parts with an optional ":port".
func isDomain(s string) bool {
	host := s
	if c := strings.IndexByte(s, ':'); c >= 0 {
		host = s[:c]
		port := s[c+1:]
		if port == "" {
			return false
		}
		for i := 0; i < len(port); i++ {
			if !isDigit(port[i]) {
				return false
			}
		}
	}
	for {
		j := strings.IndexByte(host, '.')
		part := host
		if j >= 0 {
			part = host[:j]
		}
		if !isHostPart(part) {
			return false
		}
		if j < 0 {
			return true
		}
		host = host[j+1:]
	}
}

func isHostPart(s string) bool {
	n := len(s)
	if n == 0 || !isAlnum(s[0]) || !isAlnum(s[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if !isAlnum(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isTag checks a tag: a word character followed by at most 127 word
// characters, '.' or '-'.
func isTag(s string) bool {
	if len(s) == 0 || len(s) > 128 || !isWord(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isWord(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isDigestSyntax checks the digest production of the reference grammar,
// which is looser than what go-digest accepts afterwards.
func isDigestSyntax(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 0 || !isAlgorithm(s[:colon]) {
		return false
	}
	encoded := s[colon+1:]
	if len(encoded) < 32 {
		return false
	}
	for i := 0; i < len(encoded); i++ {
		if !isHex(encoded[i]) {
			return false
		}
	}
	return true
}

// isAlgorithm checks parts of [A-Za-z][A-Za-z0-9]* joined by one of "-_+.".
func isAlgorithm(a string) bool {
	i, n := 0, len(a)
	for {
		if i >= n || !isLetter(a[i]) {
			return false
		}
		i++
		for i < n && isAlnum(a[i]) {
			i++
		}
		if i == n {
			return true
		}
		switch a[i] {
		case '-', '_', '+', '.':
			i++
		default:
			return false
		}
	}
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// validateDigest mirrors go-digest's Digest.Validate with sha256, sha384 and
// sha512 available (they are linked into opm).
func validateDigest(s string) error {
	i := strings.IndexByte(s, ':')
	if i <= 0 || i+1 == len(s) {
		return errDigestInvalidFormat
	}
	alg, encoded := s[:i], s[i+1:]
	var size int
	switch alg {
	case "sha256":
		size = 64
	case "sha384":
		size = 96
	case "sha512":
		size = 128
	default:
		if !isLowerDigest(alg, encoded) {
			return errDigestInvalidFormat
		}
		return errDigestUnsupported
	}
	if len(encoded) != size {
		return errDigestInvalidLength
	}
	for j := 0; j < len(encoded); j++ {
		if c := encoded[j]; !isDigit(c) && (c < 'a' || c > 'f') {
			return errDigestInvalidFormat
		}
	}
	return nil
}

// isLowerDigest checks go-digest's own digest grammar:
// [a-z0-9]+([.+_-][a-z0-9]+)* ":" [a-zA-Z0-9=_-]+
func isLowerDigest(alg, encoded string) bool {
	i, n := 0, len(alg)
	for {
		start := i
		for i < n && isLowerAlnum(alg[i]) {
			i++
		}
		if i == start {
			return false
		}
		if i == n {
			break
		}
		switch alg[i] {
		case '.', '+', '_', '-':
			i++
		default:
			return false
		}
	}
	if encoded == "" {
		return false
	}
	for j := 0; j < len(encoded); j++ {
		if c := encoded[j]; !isAlnum(c) && c != '=' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isIdentifier reports whether s is exactly 64 lowercase hex characters.
func isIdentifier(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
