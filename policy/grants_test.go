package policy

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckTarget: a repository publishes into its own namespace, or where
// the service's operator grants it; never over another repository's image.
func TestCheckTarget(t *testing.T) {
	grants := []TargetGrant{
		{Repositories: []string{"acme/catalog"}, Prefixes: []string{"quay.io/acme/index", "oci:/srv/catalogs/acme"}},
		{Repositories: []string{"Partners/*"}, Prefixes: []string{"registry.example.com/partners/"}},
	}
	for _, tc := range []struct {
		repo, target string
		err          string
	}{
		// The default: the repository's own namespace on any registry.
		{"example/catalog", "quay.io/example/catalog:v1", ""},
		{"example/catalog", "ghcr.io/example/catalog/index:v4.20", ""},
		{"Example/Catalog", "quay.io/example/catalog:v1", ""},
		{"example/catalog", "quay.io/example/catalog2:v1", "outside example/catalog's own namespace"},
		{"example/catalog", "quay.io/example/other:v1", "outside example/catalog's own namespace"},
		{"example/other", "quay.io/example/catalog:v1", "outside example/other's own namespace"},
		{"example/catalog", "oci:/tmp/out", "outside example/catalog's own namespace"},
		// What the operator grants replaces the default.
		{"acme/catalog", "quay.io/acme/index:v4.20", ""},
		{"ACME/catalog", "quay.io/acme/index/v4.20:latest", ""},
		{"acme/catalog", "oci:/srv/catalogs/acme/v4.20", ""},
		{"acme/catalog", "oci:/srv/catalogs/acme/../other", "under none of the prefixes"},
		{"acme/catalog", "quay.io/acme/index2:v1", "under none of the prefixes"},
		{"acme/catalog", "quay.io/acme/catalog:v1", "under none of the prefixes"},
		{"acme/other", "quay.io/acme/index:v4.20", "outside acme/other's own namespace"},
		{"partners/one", "registry.example.com/partners/one:v1", ""},
		{"partners/two", "registry.example.com/partnersx/one:v1", "under none of the prefixes"},
	} {
		t.Run(tc.repo+" "+tc.target, func(t *testing.T) {
			err := CheckTarget(grants, tc.repo, tc.target)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("CheckTarget: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTargetNotGranted) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("CheckTarget: %v; want %q", err, tc.err)
			}
		})
	}
}

func TestCheckPrefix(t *testing.T) {
	for s, want := range map[string]string{
		"quay.io/acme/":        "",
		"quay.io/acme/index":   "",
		"oci:/srv/catalogs":    "",
		"oci:out":              "oci:/ABSOLUTE/DIR",
		"acme/":                "no registry host",
		"quay.io/acme/index:1": "without tag or digest",
	} {
		err := CheckPrefix(s)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckPrefix(%q) = %v; want %q", s, err, want)
		}
	}
}
