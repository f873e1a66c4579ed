package pipeline

import (
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/policy"
)

// imageCap is what one pull request check may still contact of the
// registries: limits.images distinct image references for the whole pass.
// The images check, the references check and the templates check share it,
// so that splitting a pull request's images between a reference list, a
// template and the catalog buys no more registry work than the limit. An
// image is charged once however many checks contact it: the limit counts
// the images a pull request makes the service reach, not the requests.
type imageCap struct {
	max int
	mu  sync.Mutex
	// charged are the images counted so far, by canonical name.
	charged map[string]bool
}

func newImageCap(max int) *imageCap {
	return &imageCap{max: max, charged: map[string]bool{}}
}

// take charges refs in order and returns how many of them fit: refs[:n]
// may be contacted, refs[n] is the first left out. With all, either every
// ref fits and all are charged, or none is charged: a template is judged
// on all its bundles or not at all, so a partial grant would charge
// images nobody contacts.
func (c *imageCap) take(refs []string, all bool) int {
	if c == nil || c.max <= 0 {
		return len(refs)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	used := len(c.charged)
	var added []string
	fresh := map[string]bool{}
	for i, ref := range refs {
		key := imageKey(ref)
		if c.charged[key] || fresh[key] {
			continue
		}
		if used+len(added) >= c.max {
			if all {
				return i
			}
			c.commit(added)
			return i
		}
		fresh[key] = true
		added = append(added, key)
	}
	c.commit(added)
	return len(refs)
}

func (c *imageCap) commit(keys []string) {
	for _, k := range keys {
		c.charged[k] = true
	}
}

// imageKey is the name an image is charged under: the fully qualified
// name, so that "busybox" and "docker.io/library/busybox" are one image.
func imageKey(ref string) string {
	if r, err := name.ParseReference(ref); err == nil {
		return r.Name()
	}
	return ref
}

// imagesLimitError is why an image was left out: the pass has contacted
// limits.images images already.
func imagesLimitError(max int) *LimitError {
	return &LimitError{Key: "limits.images", rule: RuleLimitImages, msg: fmt.Sprintf(
		"not contacted: the check has reached limits.images (%d image references for one pull request check, across the images, references and templates checks); raise limits.images in %s",
		max, policy.FileName)}
}
