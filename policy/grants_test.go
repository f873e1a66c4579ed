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
		{Installations: []int64{42}, Prefixes: []string{"registry.example.com/installation-42/"}},
	}
	for _, tc := range []struct {
		repo, target string
		err          string
		installation int64
	}{
		// The default: the repository's own namespace on any registry.
		{"example/catalog", "quay.io/example/catalog:v1", "", 0},
		{"example/catalog", "ghcr.io/example/catalog/index:v4.20", "", 0},
		{"Example/Catalog", "quay.io/example/catalog:v1", "", 0},
		{"example/catalog", "quay.io/example/catalog2:v1", "outside example/catalog's own namespace", 0},
		{"example/catalog", "quay.io/example/other:v1", "outside example/catalog's own namespace", 0},
		{"example/other", "quay.io/example/catalog:v1", "outside example/other's own namespace", 0},
		{"example/catalog", "oci:/tmp/out", "outside example/catalog's own namespace", 0},
		// What the operator grants replaces the default.
		{"acme/catalog", "quay.io/acme/index:v4.20", "", 0},
		{"ACME/catalog", "quay.io/acme/index/v4.20:latest", "", 0},
		{"acme/catalog", "oci:/srv/catalogs/acme/v4.20", "", 0},
		{"acme/catalog", "oci:/srv/catalogs/acme/../other", "under none of the prefixes", 0},
		{"acme/catalog", "quay.io/acme/index2:v1", "under none of the prefixes", 0},
		{"acme/catalog", "quay.io/acme/catalog:v1", "under none of the prefixes", 0},
		{"acme/other", "quay.io/acme/index:v4.20", "outside acme/other's own namespace", 0},
		{"partners/one", "registry.example.com/partners/one:v1", "", 0},
		{"partners/two", "registry.example.com/partnersx/one:v1", "under none of the prefixes", 0},
		// By installation: every repository of it.
		{"someone/catalog", "registry.example.com/installation-42/catalog:v1", "", 42},
		{"someone/catalog", "quay.io/someone/catalog:v1", "under none of the prefixes", 42},
		{"someone/catalog", "registry.example.com/installation-42/catalog:v1", "outside someone/catalog's own namespace", 7},
	} {
		t.Run(tc.repo+" "+tc.target, func(t *testing.T) {
			err := CheckTarget(grants, tc.repo, tc.installation, tc.target)
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
