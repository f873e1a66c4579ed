package fbc

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
)

const labelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"

var (
	labelRE     = regexp.MustCompile("^" + labelFmt + "$")
	subdomainRE = regexp.MustCompile("^" + labelFmt + "(\\." + labelFmt + ")*$")
)

// labelErrors checks a package name the way opm does (Kubernetes'
// IsDNS1123Label), returning the same messages.
func labelErrors(v string) []string {
	var errs []string
	if len(v) > 63 {
		errs = append(errs, "must be no more than 63 characters")
	}
	if !labelRE.MatchString(v) {
		if subdomainRE.MatchString(v) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "+
				"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "+
				"regex used for validation is '"+labelFmt+"')")
		}
	}
	return errs
}

// maxReleaseLen bounds the olm.package release field.
const maxReleaseLen = 20

// parseRelease splits a bundle release into semver pre-release identifiers,
// reporting every bad segment at once as opm does.
func parseRelease(r string) ([]semver.PRVersion, error) {
	if len(r) > maxReleaseLen {
		return nil, fmt.Errorf("invalid release %q: exceeds maximum length of %d characters", r, maxReleaseLen)
	}
	var pres []semver.PRVersion
	var errs []error
	for i, seg := range strings.Split(r, ".") {
		pr, err := semver.NewPRVersion(seg)
		if err != nil {
			errs = append(errs, fmt.Errorf("segment %d: %v", i, err))
			continue
		}
		pres = append(pres, pr)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid release %q: %w", r, errors.Join(errs...))
	}
	return pres, nil
}
