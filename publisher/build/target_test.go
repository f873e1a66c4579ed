package build_test

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/publisher/build"
)

// TestParseTarget: the one grammar of publish targets, which the policy and
// the command line both read with.
func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want build.Target
		err  string
	}{
		{in: "quay.io/acme/catalog:v1", want: build.Target{Registry: "quay.io", Repository: "acme/catalog", Tag: "v1"}},
		{in: "quay.io/acme/catalog", want: build.Target{Registry: "quay.io", Repository: "acme/catalog", Tag: "latest"}},
		{in: "localhost:5000/catalog:v4.20", want: build.Target{Registry: "localhost:5000", Repository: "catalog", Tag: "v4.20"}},
		{in: "docker.io/acme/catalog:v1", want: build.Target{Registry: "docker.io", Repository: "acme/catalog", Tag: "v1"}},
		{in: "quay.io/acme/catalog@sha256:" + strings.Repeat("a", 64), want: build.Target{Registry: "quay.io", Repository: "acme/catalog", Digest: "sha256:" + strings.Repeat("a", 64)}},
		{in: "oci:out", want: build.Target{Layout: "out", Tag: "latest"}},
		{in: "oci:out/cat:v1", want: build.Target{Layout: "out/cat", Tag: "v1"}},
		{in: "oci:C:\\out", want: build.Target{Layout: "C:\\out", Tag: "latest"}},

		// catalog:v1 would go to Docker Hub without a word.
		{in: "catalog:v1", err: "no registry host: it would be pushed to Docker Hub"},
		{in: "acme/catalog:v1", err: "no registry host: it would be pushed to Docker Hub"},
		{in: "docker.io/catalog:v1", err: "no registry host: it would be pushed to Docker Hub"},
		{in: "quay.io/acme/catalog:v4.20:evil", err: "invalid reference format"},
		{in: "quay.io/acme/catalog:v1@sha256:" + strings.Repeat("a", 64), err: "both a tag and digest"},
		{in: "quay.io/Acme/catalog:v1", err: "invalid reference format"},
		{in: "oci:", err: "needs a directory"},
		{in: "oci::v1", err: "needs a directory"},
		{in: "oci:out:", err: "is not valid"},
		{in: "oci:out:-x", err: "is not valid"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := build.ParseTarget(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseTarget(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseTarget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}
