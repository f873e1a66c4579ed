package render

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
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

// TestEgressRule: a renderer for pull requests contacts no internal
// registry the rule does not allow, and renders from one it does.
func TestEgressRule(t *testing.T) {
	internal := egresstest.Serve(t, http.NotFoundHandler())
	host := registrytest.New(t).Host
	ref := host + "/example/bundle:v1"
	registrytest.Push(t, ref, rendertest.Image(t, rendertest.BundleLabels("foo", "stable"), rendertest.Layer(t,
		rendertest.DirEntries(t, filepath.Join("testdata", "foo-bundle"), "")...)))
	res := egresstest.Resolver{"registry.internal.test": {"127.0.0.1"}}

	strict, err := egress.New(nil, res)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{RegistryOnly: true, Egress: strict})
	if err != nil {
		t.Fatal(err)
	}
	if !r.ForPullRequests() {
		t.Error("a registry-only renderer with a rule is not fit for pull requests")
	}
	for _, ref := range []string{"registry.internal.test:" + internal.Port + "/example/bundle:v1", ref} {
		_, err := r.RenderOne(context.Background(), ref)
		var refused *egress.RefusedError
		if !errors.As(err, &refused) || refused.Kind != egress.KindLoopback {
			t.Errorf("RenderOne(%s) = %v, want refused as loopback", ref, err)
		}
	}
	if internal.Conns() != 0 {
		t.Errorf("%d connections to the internal registry, want 0", internal.Conns())
	}

	allowing, err := egress.New([]string{host}, res)
	if err != nil {
		t.Fatal(err)
	}
	r, err = New(Options{RegistryOnly: true, Egress: allowing})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RenderOne(context.Background(), ref); err != nil {
		t.Errorf("RenderOne(%s) from an allowed registry: %v", ref, err)
	}
	if r, _ := New(Options{RegistryOnly: true}); r.ForPullRequests() {
		t.Error("a renderer without a rule is fit for pull requests")
	}
}
