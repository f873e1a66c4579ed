package images

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/platform"
)

// CatalogLabel is the label that makes an image a File-Based Catalog image;
// its value is the directory in the image that holds the catalog.
const CatalogLabel = "operators.operatorframework.io.index.configs.v1"

// Policy is what the repository requires of its image references, beyond
// their existence. Every rule can be switched on or off on its own. The
// repository's policy file sets these; the zero value requires nothing.
type Policy struct {
	// Pin requires references of a kind to name their image by digest.
	// Tags move; a catalog that pins its images installs the same bits
	// tomorrow.
	Pin map[Kind]bool

	// AllowRegistries, when not empty, lists the registries (and
	// optionally repository prefixes) images may come from, such as
	// "quay.io/example" or "registry.example.com:5000". A prefix matches
	// whole path segments: "quay.io/example" allows
	// "quay.io/example/foo" but not "quay.io/examples/foo". References
	// outside the list are never contacted.
	AllowRegistries []string

	// BundleRegistries, when not empty, lists the registries (and
	// optionally repository prefixes, as AllowRegistries) that bundle
	// images must come from; other images may come from anywhere the
	// allowlist admits. This is operator-pipelines' allowed bundle
	// registries: a bundle is what the pipeline built and pushed itself,
	// while related images are the operator's own business.
	BundleRegistries []string `json:",omitempty"`

	// SingleManifestBundles requires bundle images to be a single image
	// manifest, not an index: OLM unpacks the bundle and expects one.
	SingleManifestBundles bool

	// CatalogLabel requires catalog.yaml reference images to carry the
	// CatalogLabel label, without which opm cannot render them.
	CatalogLabel bool

	// Platforms lists the platforms ("linux/amd64", "linux/arm64") a
	// catalog image must provide: the catalog.yaml references and the
	// base image. Empty means no requirement.
	Platforms []string

	// Truthfulness is how a bundle blob that differs from what its image
	// renders to is reported, where images are verified at all:
	// TruthError (the default), TruthWarning or TruthOff. The
	// comparison itself is the review's (package checks/truth); the
	// verifier does not read this.
	Truthfulness string `json:",omitempty"`
}

// The values of Policy.Truthfulness.
const (
	TruthError   = "error"
	TruthWarning = "warning"
	TruthOff     = "off"
)

// DefaultPolicy checks what any catalog needs in order to work: bundle
// images that OLM can unpack and reference images that opm can render. It
// does not require digests or restrict registries; those are a repository's
// choice.
func DefaultPolicy() Policy {
	return Policy{SingleManifestBundles: true, CatalogLabel: true, Truthfulness: TruthError}
}

// PinAll returns a Pin map that requires digests for every kind.
func PinAll() map[Kind]bool {
	return map[Kind]bool{KindBundle: true, KindRelated: true, KindReference: true, KindBase: true}
}

// compiled is a Policy checked and parsed once.
type compiled struct {
	Policy
	allow     []allowEntry
	bundles   []allowEntry
	platforms []v1.Platform
}

type allowEntry struct {
	registry string // as name.Registry spells it: docker.io is index.docker.io
	prefix   string // repository path prefix, "" for the whole registry
}

func compilePolicy(p Policy) (*compiled, error) {
	c := &compiled{Policy: p}
	var err error
	if c.allow, err = compileAllow(p.AllowRegistries); err != nil {
		return nil, err
	}
	if c.bundles, err = compileAllow(p.BundleRegistries); err != nil {
		return nil, err
	}
	for _, s := range p.Platforms {
		pl, err := platform.Parse(s)
		if err != nil {
			return nil, err
		}
		c.platforms = append(c.platforms, pl)
	}
	return c, nil
}

// compileAllow parses a list of registries with optional repository
// prefixes.
func compileAllow(list []string) ([]allowEntry, error) {
	var out []allowEntry
	for _, a := range list {
		host, prefix, _ := strings.Cut(strings.TrimSuffix(a, "/"), "/")
		reg, err := name.NewRegistry(host)
		if err != nil || host == "" {
			return nil, fmt.Errorf("allowed registry %q: want a registry host, optionally followed by a repository prefix", a)
		}
		if prefix != "" {
			if _, err := name.NewRepository(host + "/" + prefix); err != nil {
				return nil, fmt.Errorf("allowed registry %q: %q is not a repository prefix", a, prefix)
			}
		}
		out = append(out, allowEntry{registry: reg.RegistryStr(), prefix: prefix})
	}
	return out, nil
}

// allowed reports whether the allowlist admits the repository.
func (c *compiled) allowed(repo name.Repository) bool {
	return admits(c.allow, repo)
}

// bundleRefusal says why a bundle image's repository is outside the
// bundle registries, "" when it is inside or the policy names none.
func (c *compiled) bundleRefusal(repo name.Repository) string {
	if admits(c.bundles, repo) {
		return ""
	}
	return fmt.Sprintf("bundle image repository %s is outside the allowed bundle registries (%s)", repo.Name(), strings.Join(c.BundleRegistries, ", "))
}

// admits reports whether list, empty for anything, holds the repository.
func admits(list []allowEntry, repo name.Repository) bool {
	if len(list) == 0 {
		return true
	}
	for _, a := range list {
		if repo.RegistryStr() != a.registry {
			continue
		}
		path := repo.RepositoryStr()
		if a.prefix == "" || path == a.prefix || strings.HasPrefix(path, a.prefix+"/") {
			return true
		}
	}
	return false
}

// refusal says why the allowlist keeps repo from being contacted, or ""
// when it admits it. The verifier and Policy.Admits both say it this way.
func (c *compiled) refusal(repo name.Repository) string {
	if c.allowed(repo) {
		return ""
	}
	return fmt.Sprintf("repository %s is outside the allowed registries (%s); it was not contacted", repo.Name(), strings.Join(c.AllowRegistries, ", "))
}

// Admits says whether the allowlist lets a check contact the registry of
// image, and when it does not, why. The verifier asks it of every
// reference, and so must anything else that reaches a registry for a
// reference the policy governs (rendering a reference list entry, say):
// one rule decides for existence, content, platforms and rendering alike.
// A reference that does not parse, or a policy whose allowlist does not,
// is not admitted: a rule that cannot be read does not let anything
// through.
func (p Policy) Admits(image string) (ok bool, why string) {
	c, err := compilePolicy(Policy{AllowRegistries: p.AllowRegistries})
	if err != nil {
		return false, err.Error()
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		return false, "not a valid image reference"
	}
	if why := c.refusal(ref.Context()); why != "" {
		return false, why
	}
	return true, ""
}

// needs says which content checks a reference with these kinds of location
// needs; each one costs GET requests.
type needs struct {
	kindOfManifest bool // index or single manifest
	labels         bool
	platforms      bool
}

func (c *compiled) needs(k map[Kind]bool) needs {
	catalog := k[KindReference] || k[KindBase]
	return needs{
		kindOfManifest: c.SingleManifestBundles && k[KindBundle],
		labels:         c.CatalogLabel && k[KindReference],
		platforms:      len(c.platforms) > 0 && catalog,
	}
}

// pinRequired reports whether any of the kinds requires a digest.
func (c *compiled) pinRequired(k map[Kind]bool) bool {
	for kind := range k {
		if c.Pin[kind] {
			return true
		}
	}
	return false
}

// missingPlatforms lists the required platforms that none of have provides.
// A required platform without a variant accepts any variant.
func (c *compiled) missingPlatforms(have []v1.Platform) []string {
	var missing []string
	for _, want := range c.platforms {
		found := false
		for _, h := range have {
			if h.OS == want.OS && h.Architecture == want.Architecture && (want.Variant == "" || h.Variant == want.Variant) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want.String())
		}
	}
	return missing
}
