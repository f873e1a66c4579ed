package images

import (
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry"
)

// Waits lists the registries that could not be asked in results (rate
// limited, or timed out, failing or unreachable), each with how many
// references wait on it, sorted by registry: what a check that could not
// judge waits for. Empty when every registry answered.
func Waits(results []Result) []checks.Wait {
	var waits []checks.Wait
	for _, r := range results {
		if r.Class != registry.ClassRateLimited && r.Class != registry.ClassTransport {
			continue
		}
		host := ""
		if ref, err := name.ParseReference(r.Image); err == nil {
			host = ref.Context().RegistryStr()
		}
		waits = checks.AddWait(waits, checks.Wait{Registry: host, Class: string(r.Class), Count: 1})
	}
	return waits
}
