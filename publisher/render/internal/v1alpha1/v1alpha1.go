// Package v1alpha1 holds the part of operator-framework/api's
// ClusterServiceVersion type whose decoding can fail on a CSV that the
// bundle parser accepts: spec.version, which must be semver (tolerantly
// parsed), and spec.release, dot-separated semver pre-release identifiers.
//
// opm's bundle-object-to-csv-metadata migration decodes the whole CSV into
// the upstream type and fails on these, so a bundle that renders fine
// cannot be migrated. Type and package names are upstream's because
// encoding/json prints them in its errors ("Go struct field
// ClusterServiceVersionSpec.spec.release of type string").
package v1alpha1

import (
	"encoding/json"
	"strings"

	"github.com/blang/semver/v4"
)

// ClusterServiceVersion is the checked part of a CSV.
type ClusterServiceVersion struct {
	Spec ClusterServiceVersionSpec `json:"spec"`
}

// ClusterServiceVersionSpec is the checked part of a CSV's spec.
type ClusterServiceVersionSpec struct {
	Version OperatorVersion `json:"version,omitempty"`
	Release OperatorRelease `json:"release,omitzero"`
}

// OperatorVersion decodes as upstream's version.OperatorVersion.
type OperatorVersion struct{ semver.Version }

func (v *OperatorVersion) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	parsed, err := semver.ParseTolerant(s)
	if err != nil {
		return err
	}
	v.Version = parsed
	return nil
}

// OperatorRelease decodes as upstream's release.OperatorRelease.
type OperatorRelease struct{ Release []semver.PRVersion }

func (r *OperatorRelease) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	for _, segment := range strings.Split(s, ".") {
		pr, err := semver.NewPRVersion(segment)
		if err != nil {
			return err
		}
		r.Release = append(r.Release, pr)
	}
	return nil
}
