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
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// TestReferencesEgressAndDeadline: entries on an internal host are refused
// by the rule without a connection, and entries on a registry that never
// answers cost one per-reference deadline (the policy's), the later ones
// failing at once with a finding that names the registry.
func TestReferencesEgressAndDeadline(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
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
	// The refusal is a judgement and fails the check; the tarpit's
	// entries could not be judged and wait, all twelve on one registry.
	if got.Conclusion != checks.Failure || len(got.Findings) != 1 {
		t.Fatalf("references = %s with %d findings, want failure with 1: %+v", got.Conclusion, len(got.Findings), got.Findings)
	}
	if m := got.Findings[0].Message; !strings.Contains(m, "internal.test resolves to a loopback address") || strings.Contains(m, "404") {
		t.Errorf("internal entry: %s", m)
	}
	if len(got.Waits) != 1 || got.Waits[0].Registry != "slow.test:"+tarpit.Port || got.Waits[0].Count != 12 {
		t.Errorf("waits = %+v, want the 12 entries of slow.test waiting", got.Waits)
	}
	// Only the first renders, at most maxRenders at once, met the
	// tarpit; the breaker sent the others back without a connection.
	// Each render may try https and then http.
	if n := tarpit.Conns(); n == 0 || n > 2*maxRenders {
		t.Errorf("%d connections to the tarpit, want 1 to %d", n, 2*maxRenders)
	}
	if internal.Conns() != 0 {
		t.Errorf("%d connections to the internal registry, want 0", internal.Conns())
	}
}

// TestBreakerSharedByThePass: once the images check has waited out a
// registry, the references check of the same pass does not wait on it
// again.
func TestBreakerSharedByThePass(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
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
	// The breaker sends the entry back before any request is made: it
	// waits on the registry that timed out, and the tarpit sees no new
	// connection.
	// The verifier may ping https and http at once, so a dial of its own
	// can land after it returned: count from when the count settles.
	before := settled(tarpit.Conns)
	refs := References{}.Run(context.Background(), in)
	if refs.Conclusion != checks.Pending || len(refs.Waits) != 1 || refs.Waits[0].Registry != host {
		t.Errorf("references = %s %+v, want pending on %s", refs.Conclusion, refs.Waits, host)
	}
	if n := tarpit.Conns(); n != before {
		t.Errorf("the references check opened %d connections to the tarpit, want 0", n-before)
	}
}

// settled returns count's value once it has stopped changing for a while
// (at most two seconds).
func settled(count func() int) int {
	n := count()
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		m := count()
		if m == n {
			return m
		}
		n = m
	}
	return n
}
