package render

import (
	"context"
	"errors"
	"testing"
)

// TestRegistryOnly: references that come from a change must not make the
// renderer read the machine's files, even ones that exist.
func TestRegistryOnly(t *testing.T) {
	r, err := New(Options{RegistryOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, ref := range []string{dir, "oci:" + dir, "/etc/passwd", "not a reference"} {
		_, err := r.RenderOne(context.Background(), ref)
		if !errors.Is(err, ErrNotAllowed) {
			t.Errorf("RenderOne(%q) = %v, want ErrNotAllowed", ref, err)
		}
	}
}
