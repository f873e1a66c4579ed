// Package platform parses the os/arch[/variant] platforms that catalog
// and base images are built for and checked against. It is the one parser
// of platforms in catalogbot: the publish and rebuild command lines, the
// images checks and the policy file all use it, so "linux/amd46" is refused
// the same way everywhere, before any registry is asked for it.
package platform

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks"
)

// dist is the output of `go tool dist list`: the GOOS/GOARCH pairs Go
// builds for, which are the pairs OCI image platforms use. A test compares
// it with the Go on PATH, so a new port shows up as a failing test.
//
//go:embed dist.txt
var dist string

// known maps each OS to its architectures.
var known = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Fields(dist) {
		os, arch, _ := strings.Cut(line, "/")
		m[os] = append(m[os], arch)
	}
	return m
}()

// variants are the variants the OCI image index specification and the
// container runtimes know for an architecture: ARM's versions, and the
// amd64 micro-architecture levels of GOAMD64. Other architectures have
// none.
var variants = map[string][]string{
	"arm":   {"v5", "v6", "v7", "v8"},
	"arm64": {"v8", "v8.0", "v8.1", "v8.2", "v8.3", "v8.4", "v8.5", "v8.6", "v8.7", "v8.8", "v8.9", "v9", "v9.0", "v9.1", "v9.2", "v9.3", "v9.4", "v9.5"},
	"amd64": {"v1", "v2", "v3", "v4"},
}

// Error is a platform that cannot be parsed or is not known.
type Error struct {
	Spec   string // as written
	Reason string // what is wrong, and the fix when there is one
}

func (e *Error) Error() string { return fmt.Sprintf("platform %q: %s", e.Spec, e.Reason) }

// Parse parses an os/arch[/variant] platform, optionally followed by
// ":os.version", and checks it names a platform Go and the container
// runtimes know. The error says what is wrong and, for a misspelling,
// what was probably meant.
func Parse(s string) (v1.Platform, error) {
	p, err := v1.ParsePlatform(s)
	if err != nil || p.OS == "" || p.Architecture == "" || strings.Count(strings.SplitN(s, ":", 2)[0], "/") > 2 {
		return v1.Platform{}, &Error{s, "want os/arch or os/arch/variant, such as linux/amd64"}
	}
	archs, ok := known[p.OS]
	if !ok {
		return v1.Platform{}, &Error{s, fmt.Sprintf("unknown operating system %q%s", p.OS, suggest(p.OS, keys(known), ""))}
	}
	if !slices.Contains(archs, p.Architecture) {
		return v1.Platform{}, &Error{s, fmt.Sprintf("unknown architecture %q for %s%s", p.Architecture, p.OS,
			suggest(p.Architecture, archs, p.OS+"/"))}
	}
	if p.Variant != "" && !slices.Contains(variants[p.Architecture], p.Variant) {
		if len(variants[p.Architecture]) == 0 {
			return v1.Platform{}, &Error{s, fmt.Sprintf("%s has no variants; write %s/%s", p.Architecture, p.OS, p.Architecture)}
		}
		return v1.Platform{}, &Error{s, fmt.Sprintf("unknown variant %q of %s (known: %s)", p.Variant, p.Architecture,
			strings.Join(variants[p.Architecture], ", "))}
	}
	return *p, nil
}

// ParseList parses each platform and refuses one given twice, which would
// build or check the same image twice.
func ParseList(specs []string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for _, s := range specs {
		p, err := Parse(s)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(ps, func(q v1.Platform) bool { return q.Equals(p) }) {
			return nil, fmt.Errorf("platform %s given twice", s)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// suggest names the closest candidate when s is one or two edits away:
// "amd46" is "amd64" with two letters swapped.
func suggest(s string, candidates []string, prefix string) string {
	best := checks.Closest(s, candidates)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s%s?)", prefix, best)
}
