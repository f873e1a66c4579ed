package propose_test

import (
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// testOptions are the options of a run against reg, as the tests run it:
// anonymous, with an egress rule that admits reg alone, a renderer that
// reads registries only, and now for a clock. Callers set the repository
// and the branch.
func testOptions(t *testing.T, reg *registrytest.Registry, now time.Time) propose.Options {
	t.Helper()
	rule, err := egress.New([]string{reg.Host}, nil)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := authn.NewMultiKeychain()
	r, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		t.Fatal(err)
	}
	return propose.Options{
		Registry: propose.Registry{Keychain: anonymous, Egress: rule},
		Images:   &images.Options{Keychain: anonymous, Egress: rule},
		Renderer: r,
		Now:      func() time.Time { return now },
	}
}
