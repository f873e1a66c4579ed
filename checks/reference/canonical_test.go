package reference

import (
	"strings"
	"testing"
)

// TestParseCanonical: references as opm render reads an image to pull,
// with go.podman.io/image's ParseNamed and the docker transport's errors.
func TestParseCanonical(t *testing.T) {
	hex64 := strings.Repeat("ab", 32)
	tests := []struct {
		ref     string
		wantErr string
	}{
		{"quay.io/example/foo:v1", ""},
		{"quay.io/example/foo@sha256:" + hex64, ""},
		{"localhost:5000/foo:v1", ""},
		{"127.0.0.1:5000/a/b/c:v1.2.3-rc.1", ""},
		{"[::1]:5000/foo:v1", "invalid reference format"}, // no IPv6 literal in go.podman.io/image v5.39.1's grammar
		{"docker.io/library/foo:v1", ""},
		{"Quay.io/example/foo:v1", ""},
		{"foo:v1", "repository name must be canonical"},
		{"foo-bundle:v0.2.0", "repository name must be canonical"},
		{"example/foo:v1", "repository name must be canonical"},
		{"docker.io/foo:v1", "repository name must be canonical"},
		{"index.docker.io/library/foo:v1", "repository name must be canonical"},
		{"quay.io/Example/foo:v1", "invalid reference format: repository name must be lowercase"},
		{"quay.io/example/foo", "Docker reference quay.io/example/foo has neither a tag nor a digest"},
		{"docker.io/library/foo", "Docker reference foo has neither a tag nor a digest"},
		{"quay.io/example/foo:v1@sha256:" + hex64, "Docker references with both a tag and digest are currently not supported"},
		{"quay.io/example/foo@sha256:" + hex64[:40], "invalid checksum digest length"},
		{"quay.io/example/foo@md5:" + hex64[:32], "unsupported digest algorithm"},
		{"quay.io/example/foo@sha256:" + strings.ToUpper(hex64), "invalid checksum digest format"},
		{"quay.io/example/foo@sha256:abc", "invalid reference format"},
		{"./foo-bundle", "invalid reference format"},
		{"", "invalid reference format"},
		{hex64, "invalid repository name (" + hex64 + "), cannot specify 64-byte hexadecimal strings"},
		{"quay.io/" + strings.Repeat("a", 260) + ":v1", "repository name must not be more than 255 characters"},
	}
	for _, tt := range tests {
		ref, err := ParseCanonical(tt.ref)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseCanonical(%q) error = %v", tt.ref, err)
		case tt.wantErr == "" && ref.String() != tt.ref:
			t.Errorf("ParseCanonical(%q) = %q", tt.ref, ref)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("ParseCanonical(%q) error = %v, want %q", tt.ref, err, tt.wantErr)
		}
	}
}
