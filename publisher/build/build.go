// Package build makes a catalog image from a File-Based Catalog directory
// without a container daemon, and publishes it to a registry or an OCI
// image layout.
//
// The image is a base plus one /configs layer and the configs label, what
// `opm generate dockerfile` and a docker build would give, except that
// every input that is not the catalog or the base is fixed: file times,
// owners, modes, entry order, the config's created time and history. The
// same catalog on the same base digest therefore always gives the same
// image digest, so a publish that changes nothing pushes nothing and a
// digest can be rebuilt and checked by anyone.
//
// Where an image goes is a Target, read by ParseTarget: the one grammar of
// publish targets, for the policy and the command line alike.
package build

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/platform"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// ConfigsLabel tells opm serve, catalogd and opm render where the catalog
// is inside the image.
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// The two bases that are not image references.
const (
	// BaseOPM is the opm image, for OLM v0: the catalog is served with
	// `opm serve`.
	BaseOPM = "opm"
	// BaseScratch is no base at all, for OLM v1: catalogd reads the
	// files and needs only the label.
	BaseScratch = "scratch"
)

// DefaultOPMImage is the base BaseOPM stands for. The build records the
// digest it resolved to (AnnBaseDigest), so an image can be rebuilt
// from the same base; pin a digest with Options.OPMImage for builds that
// must not move when opm releases.
const DefaultOPMImage = "quay.io/operator-framework/opm:latest"

// The opm base's entrypoint and command, as opm generate dockerfile writes
// them. The cache they name is built into the image (see CacheDir), or the
// command turns its integrity check off.
var (
	opmEntrypoint = []string{"/bin/opm"}
	opmCmd        = []string{"serve", ConfigsDir, "--cache-dir=" + CacheDir}
)

// Annotations on every built manifest and index. They record what the
// image was built from, so that a later run can tell whether the base or a
// referenced image has moved since (drift) without pulling anything.
const (
	// AnnBaseName is the base reference as given.
	AnnBaseName = "io.catalogbot.base.name"
	// AnnBaseDigest is the digest that reference resolved to: an index's
	// digest for a multi-platform base, which is what a HEAD of the
	// reference returns.
	AnnBaseDigest = "io.catalogbot.base.digest"
	// AnnReferences is a JSON object of reference to digest, passed in by
	// the caller (Options.References).
	AnnReferences = "io.catalogbot.references"
	// AnnCatalogdSize and AnnCatalogdDigest are the size in bytes and
	// the sha256 of the catalog as catalogd serves it at /api/v1/all
	// (Options.Catalogd), so that the next publication can say how much
	// every client's download grew without pulling this image.
	AnnCatalogdSize   = "io.catalogbot.catalogd.size"
	AnnCatalogdDigest = "io.catalogbot.catalogd.digest"
	// The OCI standard annotations; base.digest is the manifest this
	// image was built on, the platform's own for a multi-platform base.
	annOCIBaseName   = "org.opencontainers.image.base.name"
	annOCIBaseDigest = "org.opencontainers.image.base.digest"
)

// Options are the inputs of a build other than the catalog.
type Options struct {
	// Base is BaseOPM (the default), BaseScratch or an image reference.
	Base string
	// OPMImage is the image BaseOPM stands for; DefaultOPMImage if empty.
	OPMImage string
	// BaseDigest, when set, pins the base (the image Base or OPMImage
	// names) to this digest: the base is read at it, while the
	// annotations record the name as given. Rebuilding a published
	// image on the base it was built on uses it.
	BaseDigest string
	// Platforms (os/arch[/variant]) to build. For an index base they
	// select its manifests (default: all); for scratch each gets a
	// manifest (default: linux/amd64); a single-image base must match.
	// More than one platform gives an index.
	Platforms []string
	// References are recorded as AnnReferences.
	References map[string]string
	// Catalogd, when set, is recorded as AnnCatalogdSize and
	// AnnCatalogdDigest. Images published before these annotations
	// existed are rebuilt without them, to their own digest.
	Catalogd *fbc.ServedView
	// Epoch is every time in the image: file mtimes, created, history.
	// The zero value means the Unix epoch.
	Epoch time.Time
	// Insecure registries (host[:port]) are reached over plain HTTP.
	Insecure []string
	// Remote are the options for fetching the base: keychain, transport.
	Remote []remote.Option
	// NoServeCache leaves out the opm serve cache of an opm base image
	// (see CacheDir): no base layer is read and no opm is run, and the
	// command turns opm's cache integrity check off, so opm builds the
	// cache when it starts. For builds that must not run the base's opm.
	NoServeCache bool
}

// Result is a built image: Image for one platform, Index for several.
type Result struct {
	Image v1.Image
	Index v1.ImageIndex
	// Digest of Image or Index.
	Digest v1.Hash
	// BaseName and BaseDigest are the base used; both empty for scratch.
	BaseName   string
	BaseDigest string
	// Notes say, one line per platform image of an opm base, how it
	// will start: with a serve cache built by the base's own opm, or
	// with the cache integrity check off, and why. Callers print them.
	Notes []string
}

// Artifact is Image or Index, for writers that take either.
func (r *Result) Artifact() remote.Taggable {
	if r.Index != nil {
		return r.Index
	}
	return r.Image
}

// Build builds the catalog image for the catalog directory dir. The base
// is fetched (manifests and configs only; base layers are pulled when
// pushed, and not at all when the target already has them), except that
// for BaseOPM the layers of each platform image this host can run are
// read to take out opm and build the serve cache (see CacheDir).
func Build(ctx context.Context, dir string, o Options) (*Result, error) {
	epoch := o.Epoch
	if epoch.IsZero() {
		epoch = time.Unix(0, 0)
	}
	epoch = epoch.UTC()
	platforms, err := parsePlatforms(o.Platforms)
	if err != nil {
		return nil, err
	}
	layer, err := newConfigsLayer(dir, epoch)
	if err != nil {
		return nil, err
	}
	b := &builder{layer: layer, epoch: epoch, anns: map[string]string{}, noCache: o.NoServeCache, caches: map[string]cacheResult{}}
	if len(o.References) > 0 {
		// encoding/json writes map keys sorted, so this is stable.
		data, err := json.Marshal(o.References)
		if err != nil {
			return nil, err
		}
		b.anns[AnnReferences] = string(data)
	}
	if v := o.Catalogd; v != nil {
		b.anns[AnnCatalogdSize], b.anns[AnnCatalogdDigest] = strconv.FormatInt(v.Size, 10), v.Digest
	}

	res := &Result{}
	switch base := cmp.Or(o.Base, BaseOPM); base {
	case BaseScratch:
		if len(platforms) == 0 {
			platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}}
		}
		var images []platformImage
		for _, p := range platforms {
			img, err := b.onto(ctx, nil, p, "")
			if err != nil {
				return nil, err
			}
			images = append(images, platformImage{img, p})
		}
		err = b.finish(res, images)
	default:
		ref := base
		if base == BaseOPM {
			b.opm = true
			ref = cmp.Or(o.OPMImage, DefaultOPMImage)
		}
		err = b.fromImage(ctx, res, ref, platforms, o)
	}
	if err != nil {
		return nil, err
	}
	res.Notes = b.notes
	if res.Index != nil {
		res.Digest, err = res.Index.Digest()
	} else {
		res.Digest, err = res.Image.Digest()
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

type builder struct {
	layer   *memLayer
	epoch   time.Time
	opm     bool                   // set opm's entrypoint and command, add the cache
	noCache bool                   // Options.NoServeCache
	anns    map[string]string      // the annotations of every manifest
	caches  map[string]cacheResult // by the SHA-256 of the base's opm, and its user
	notes   []string
}

type platformImage struct {
	img      v1.Image
	platform v1.Platform
}

// fromImage builds on the image or index ref names.
func (b *builder) fromImage(ctx context.Context, res *Result, ref string, platforms []v1.Platform, o Options) error {
	var nopts []name.Option
	if slices.Contains(o.Insecure, registryOf(ref)) {
		nopts = append(nopts, name.Insecure)
	}
	r, err := name.ParseReference(ref, nopts...)
	if err != nil {
		return fmt.Errorf("base image %q: %w", ref, err)
	}
	if o.BaseDigest != "" {
		if r, err = name.NewDigest(r.Context().String()+"@"+o.BaseDigest, nopts...); err != nil {
			return fmt.Errorf("base image %q pinned to %q: %w", ref, o.BaseDigest, err)
		}
	}
	desc, err := remote.Get(r, append(BoundedRemote(o.Remote, r.Context().RegistryStr()), remote.WithContext(ctx))...)
	if err != nil {
		return fmt.Errorf("base image %s: %w", ref, err)
	}
	res.BaseName, res.BaseDigest = ref, desc.Digest.String()
	b.anns[AnnBaseName], b.anns[AnnBaseDigest] = ref, desc.Digest.String()
	b.anns[annOCIBaseName] = ref

	if !desc.MediaType.IsIndex() {
		base, err := desc.Image()
		if err != nil {
			return fmt.Errorf("base image %s: %w", ref, err)
		}
		cfg, err := base.ConfigFile()
		if err != nil {
			return fmt.Errorf("base image %s: %w", ref, err)
		}
		p := v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}
		for _, want := range platforms {
			if !p.Satisfies(want) {
				return fmt.Errorf("base image %s is for %s only, not %s", ref, p, want)
			}
		}
		img, err := b.onto(ctx, base, p, desc.Digest.String())
		if err != nil {
			return err
		}
		return b.finish(res, []platformImage{{img, p}})
	}

	idx, err := desc.ImageIndex()
	if err != nil {
		return fmt.Errorf("base image %s: %w", ref, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("base image %s: %w", ref, err)
	}
	var images []platformImage
	found := make([]bool, len(platforms))
	for _, d := range m.Manifests {
		// Attestation manifests carry unknown/unknown; nested indexes
		// are not images to build on.
		if d.Platform == nil || d.Platform.OS == "unknown" || !d.MediaType.IsImage() {
			continue
		}
		if len(platforms) > 0 {
			i := slices.IndexFunc(platforms, func(p v1.Platform) bool { return d.Platform.Satisfies(p) })
			if i < 0 || found[i] {
				continue
			}
			found[i] = true
		}
		base, err := idx.Image(d.Digest)
		if err != nil {
			return fmt.Errorf("base image %s (%s): %w", ref, d.Platform, err)
		}
		img, err := b.onto(ctx, base, *d.Platform, d.Digest.String())
		if err != nil {
			return err
		}
		images = append(images, platformImage{img, *d.Platform})
	}
	for i, ok := range found {
		if !ok {
			return fmt.Errorf("base image %s has no manifest for %s", ref, platforms[i])
		}
	}
	if len(images) == 0 {
		return fmt.Errorf("base image %s has no platform images", ref)
	}
	return b.finish(res, images)
}

// finish makes the result: the image itself for one platform, else an
// index over the images in the order given (the base's, or --platform's).
func (b *builder) finish(res *Result, images []platformImage) error {
	if len(images) == 1 {
		res.Image = images[0].img
		return nil
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	adds := make([]mutate.IndexAddendum, len(images))
	for i, pi := range images {
		p := pi.platform
		adds[i] = mutate.IndexAddendum{Add: pi.img, Descriptor: v1.Descriptor{Platform: &p}}
	}
	idx = mutate.AppendManifests(idx, adds...)
	anns := b.indexAnnotations()
	if len(anns) > 0 {
		idx = mutate.Annotations(idx, anns).(v1.ImageIndex)
	}
	res.Index = idx
	return nil
}

func (b *builder) indexAnnotations() map[string]string {
	anns := map[string]string{}
	for k, v := range b.anns {
		anns[k] = v
	}
	// An index has no single manifest it was built on.
	delete(anns, annOCIBaseDigest)
	return anns
}

// onto builds the catalog image for platform p on base (nil for scratch),
// whose manifest digest is baseDigest.
//
// The image is rebuilt from empty in OCI media types rather than mutated
// in place: a Docker schema 2 manifest has no annotations, and one media
// type family throughout is what every registry accepts. Base layers keep
// their bytes and digests; only their descriptors' media type changes.
func (b *builder) onto(ctx context.Context, base v1.Image, p v1.Platform, baseDigest string) (v1.Image, error) {
	cfg := &v1.ConfigFile{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, OSVersion: p.OSVersion}
	var adds []mutate.Addendum
	if base != nil {
		c, err := base.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("base config (%s): %w", p, err)
		}
		cfg = c.DeepCopy()
		layers, err := base.Layers()
		if err != nil {
			return nil, fmt.Errorf("base layers (%s): %w", p, err)
		}
		for _, l := range layers {
			mt, err := l.MediaType()
			if err != nil {
				return nil, err
			}
			adds = append(adds, mutate.Addendum{Layer: l, MediaType: ociLayerType(mt)})
		}
	}
	cfg.RootFS.Type = "layers"
	add := func(l v1.Layer, createdBy string) {
		adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer})
		diffID, _ := l.DiffID()
		cfg.RootFS.DiffIDs = append(cfg.RootFS.DiffIDs, diffID)
		cfg.History = append(cfg.History, v1.History{
			Created:   v1.Time{Time: b.epoch},
			CreatedBy: createdBy + " # catalogbot",
		})
	}
	add(b.layer, "ADD catalog "+ConfigsDir)
	cmd := slices.Clone(opmCmd)
	if b.opm {
		cache, why, err := b.cacheFor(ctx, base, p)
		if err != nil {
			return nil, err
		}
		if cache != nil {
			add(cache, "RUN "+opmPath+" serve "+ConfigsDir+" --cache-dir="+CacheDir+" --cache-only")
			b.notes = append(b.notes, fmt.Sprintf("%s: opm serve cache built with the base's own opm", p))
		} else {
			cmd = append(cmd, noIntegrity)
			b.notes = append(b.notes, fmt.Sprintf("%s: no opm serve cache (%s); the image runs opm serve with %s, so opm builds the cache when it starts", p, why, noIntegrity))
		}
	}
	cfg.Created = v1.Time{Time: b.epoch}
	// A base's config may still carry the deprecated DockerVersion; it
	// must not reach the catalog image, whose config is ours alone.
	//lint:ignore SA1019 cleared, not used
	cfg.Container, cfg.DockerVersion = "", ""
	if cfg.Config.Labels == nil {
		cfg.Config.Labels = map[string]string{}
	}
	cfg.Config.Labels[ConfigsLabel] = ConfigsDir
	if b.opm {
		cfg.Config.Entrypoint = slices.Clone(opmEntrypoint)
		cfg.Config.Cmd = cmd
	}

	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	anns := map[string]string{}
	for k, v := range b.anns {
		anns[k] = v
	}
	if baseDigest != "" {
		anns[annOCIBaseDigest] = baseDigest
	}
	if len(anns) == 0 {
		return img, nil
	}
	return mutate.Annotations(img, anns).(v1.Image), nil
}

// cacheFor is the serve cache layer for platform p of an opm base, or nil
// and why there is none.
func (b *builder) cacheFor(ctx context.Context, base v1.Image, p v1.Platform) (v1.Layer, string, error) {
	switch {
	case b.noCache:
		return nil, "the cache step is turned off", nil
	case base == nil:
		return nil, "no base", nil
	}
	return b.serveCache(ctx, base, p)
}

// ociLayerType is the OCI media type for the same layer bytes.
func ociLayerType(mt types.MediaType) types.MediaType {
	switch mt {
	case types.DockerLayer:
		return types.OCILayer
	case types.DockerForeignLayer:
		return types.OCIRestrictedLayer
	case types.DockerUncompressedLayer:
		return types.OCIUncompressedLayer
	}
	return mt
}

func parsePlatforms(specs []string) ([]v1.Platform, error) {
	return platform.ParseList(specs)
}

// registryOf is the registry host of an image reference, as it is written
// (docker.io for none), for matching --insecure-registry.
func registryOf(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(first, ".:") && first != "localhost" {
		return name.DefaultRegistry
	}
	return first
}

// BoundedRemote puts the timeout package's transport under the caller's options, so
// a registry that never answers fails the build within its timeouts, and
// the push credentials go to registry alone, not to a token realm or
// redirect its answers name elsewhere; a transport among opts still takes
// precedence.
func BoundedRemote(opts []remote.Option, registry string) []remote.Option {
	return append([]remote.Option{remote.WithTransport(egress.Credentials(timeout.Default(), registry))}, opts...)
}
