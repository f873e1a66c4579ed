package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// TestReferencesEgressAndDeadline: entries on an internal host are refused
// by the rule without a connection, and entries on a registry that never
// answers cost one per-reference deadline (the policy's), the later ones
// failing at once with a finding that names the registry.
func TestReferencesEgressAndDeadline(t *testing.T) {
	tarpit := egresstest.NewTarpit(t)
	internal := egresstest.Serve(t, http.NotFoundHandler())
	res := egresstest.Resolver{"slow.test": {"127.0.0.1"}, "internal.test": {"127.0.0.1"}}
	rule, err := egress.New([]string{"slow.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir(),
		Egress: rule, InsecureRegistries: []string{"slow.test:" + tarpit.Port, "internal.test:" + internal.Port}})
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for i := range 12 {
		entries = append(entries, fmt.Sprintf("slow%d", i), fmt.Sprintf("slow.test:%s/index%d:v1", tarpit.Port, i))
	}
	entries = append(entries, "inside", "internal.test:"+internal.Port+"/index:v1")
	b := map[string]string{"catalog.yaml": refList()}
	h := map[string]string{"catalog.yaml": refList(entries...)}
	pol := policy.Default()
	pol.Limits.ReferenceTimeout = 300 * time.Millisecond
	in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: pol, Renderer: renderer}

	got := References{}.Run(context.Background(), in)
	if got.Conclusion != checks.Failure || len(got.Findings) != 13 {
		t.Fatalf("references = %s with %d findings, want failure with 13: %+v", got.Conclusion, len(got.Findings), got.Findings)
	}
	waited, failedFast := 0, 0
	for _, f := range got.Findings {
		switch {
		case strings.Contains(f.Message, "inside"):
			if !strings.Contains(f.Message, "internal.test resolves to a loopback address") || strings.Contains(f.Message, "404") {
				t.Errorf("internal entry: %s", f.Message)
			}
		case strings.Contains(f.Message, "limits.referenceTimeout") && strings.Contains(f.Message, "slow.test"):
			waited++
		case strings.Contains(f.Message, "earlier in this check") && strings.Contains(f.Message, "slow.test"):
			failedFast++
		default:
			t.Errorf("finding %s", f.Message)
		}
	}
	if waited == 0 || waited > maxRenders || waited+failedFast != 12 {
		t.Errorf("%d entries waited out the deadline and %d failed at once; want at most %d and the rest", waited, failedFast, maxRenders)
	}
	if internal.Conns() != 0 {
		t.Errorf("%d connections to the internal registry, want 0", internal.Conns())
	}
}

// TestBreakerSharedByThePass: once the images check has waited out a
// registry, the references check of the same pass does not wait on it
// again.
func TestBreakerSharedByThePass(t *testing.T) {
	tarpit := egresstest.NewTarpit(t)
	res := egresstest.Resolver{"slow.test": {"127.0.0.1"}}
	rule, err := egress.New([]string{"slow.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	host := "slow.test:" + tarpit.Port
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir(),
		Egress: rule, InsecureRegistries: []string{host}})
	if err != nil {
		t.Fatal(err)
	}
	b := map[string]string{"catalog.yaml": refList()}
	h := map[string]string{"catalog.yaml": refList("foo", host+"/foo-index:v1")}
	pol := policy.Default()
	pol.Limits.ReferenceTimeout = 300 * time.Millisecond
	in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: pol, Renderer: renderer,
		ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Egress: rule, Insecure: []string{host}},
		Breaker:      &registry.Breaker{}}

	img := Images{}.Run(context.Background(), in)
	if len(img.Findings) != 1 || !strings.Contains(img.Findings[0].Message, "limits.referenceTimeout") {
		t.Fatalf("images = %+v, want the reference to wait out its deadline", img.Findings)
	}
	// The breaker's finding is given before any request is made.
	refs := References{}.Run(context.Background(), in)
	if len(refs.Findings) != 1 || !strings.Contains(refs.Findings[0].Message, "earlier in this check") {
		t.Errorf("references = %+v, want the entry to fail at once", refs.Findings)
	}
}
