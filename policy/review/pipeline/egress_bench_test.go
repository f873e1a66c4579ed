package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
)

// BenchmarkTarpit is the whole check of a pull request that adds 1, 16 or
// 160 related images on a registry that accepts connections and never
// answers, with limits.referenceTimeout at 2 s. The breaker makes the cost
// one deadline whatever the count; without it, 16 images cost 4 rounds of
// the registry's concurrency and 160 cost 40.
func BenchmarkTarpit(b *testing.B) {
	tarpit := registrytest.NewTarpit(b)
	rule, err := egress.New([]string{"slow.test"}, egresstest.Resolver{"slow.test": {"127.0.0.1"}})
	if err != nil {
		b.Fatal(err)
	}
	host := "slow.test:" + tarpit.Port
	pol := policy.Default()
	pol.Limits.ReferenceTimeout = 2 * time.Second
	for _, n := range []int{1, 16, 160} {
		b.Run(fmt.Sprintf("images=%d", n), func(b *testing.B) {
			var related strings.Builder
			related.WriteString("relatedImages:\n")
			for i := range n {
				fmt.Fprintf(&related, "  - name: img%d\n    image: %s/img%d@sha256:%064d\n", i, host, i, i)
			}
			base := map[string]string{"catalog/foo/catalog.yaml": fooCatalog}
			head := map[string]string{"catalog/foo/catalog.yaml": fooCatalog + related.String()}
			for b.Loop() {
				in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol,
					ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Egress: rule, Insecure: []string{host}}}
				rep := Run(context.Background(), in)
				for _, r := range rep.Results {
					if r.Name == ImagesName && len(r.Findings) != n {
						b.Fatalf("images: %d findings, want %d: %s", len(r.Findings), n, r.Summary)
					}
				}
			}
		})
	}
}
