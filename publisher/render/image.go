package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/publisher/tmpdir"
)

// The labels that say what an image is.
const (
	// ConfigsLabel marks a catalog image; its value is the catalog's
	// directory inside the image.
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	// BundlePackageLabel marks a registry+v1 bundle image.
	BundlePackageLabel = "operators.operatorframework.io.bundle.package.v1"
	// databaseLabel marks a sqlite index image, which opm no longer reads.
	databaseLabel = "operators.operatorframework.io.index.database.v1"
)

// ociPrefix names an image in an OCI layout directory: oci:DIR[:TAG].
const ociPrefix = "oci:"

// LayoutPrefix is ociPrefix for callers that resolve references themselves.
const LayoutPrefix = ociPrefix

// platform is the one opm pulls from a multi-platform image.
var platform = v1.Platform{OS: "linux", Architecture: runtime.GOARCH}

func (r *Renderer) renderImage(ctx context.Context, ref string) (*result, Kind, error) {
	cacheable := cacheable(ref)
	if cacheable {
		if e, ok := r.cache.get(ref); ok {
			if r.opts.MaxBytes > 0 && e.size > r.opts.MaxBytes {
				return nil, KindBundleImage, fmt.Errorf("failed to unpack image %q: %w", ref, &TooLargeError{Limit: r.opts.MaxBytes})
			}
			return e.result(), KindBundleImage, nil
		}
	}
	img, err := r.openImage(ctx, ref)
	if err != nil {
		return nil, KindImage, fmt.Errorf("failed to pull image %q: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, KindImage, fmt.Errorf("failed to get labels for image %q: %w", ref, err)
	}
	labels := cfg.Config.Labels
	if dir, ok := labels[ConfigsLabel]; ok {
		res, err := r.renderCatalogImage(ctx, ref, img, dir)
		return res, KindCatalogImage, err
	}
	if _, ok := labels[BundlePackageLabel]; ok {
		res, size, err := r.renderBundleImage(ctx, ref, img)
		if err == nil && cacheable {
			r.cache.put(ref, res, size)
		}
		return res, KindBundleImage, err
	}
	if _, ok := labels[databaseLabel]; ok {
		return nil, KindImage, fmt.Errorf("render %q: sqlite-based index images are no longer supported, migrate to a file-based catalog: %w", ref, ErrNotAllowed)
	}
	return nil, KindImage, imageTypeError(ref, labels)
}

func imageTypeError(ref string, labels map[string]string) error {
	if len(labels) == 0 {
		return fmt.Errorf("render %q: image type could not be determined: image has no labels", ref)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("  %s=%s", k, labels[k])
	}
	return fmt.Errorf("render %q: image type could not be determined, found labels\n%s", ref, strings.Join(lines, "\n"))
}

// openImage resolves ref to an image: from an OCI layout for oci:, else
// from its registry. Nothing but the manifest is fetched yet.
func (r *Renderer) openImage(ctx context.Context, ref string) (v1.Image, error) {
	if dir, ok := strings.CutPrefix(ref, ociPrefix); ok {
		return openLayoutImage(dir)
	}
	canonical, err := reference.ParseCanonical(ref)
	if err != nil {
		return nil, err
	}
	var opts []name.Option
	if r.insecure[canonical.Domain] {
		opts = append(opts, name.Insecure)
	}
	nref, err := name.ParseReference(ref, opts...)
	if err != nil {
		return nil, err
	}
	ropts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(r.opts.Keychain),
		remote.WithPlatform(platform),
	}
	if r.opts.Transport != nil {
		// Credentials go to the image's registry alone, not to a token
		// realm or redirect its answers name elsewhere.
		// Nor does the operator's allowlist of internal hosts let them
		// lead there.
		reg := nref.Context().RegistryStr()
		ropts = append(ropts, remote.WithTransport(r.opts.Egress.Confine(egress.Credentials(r.opts.Transport, reg), reg)))
	}
	return remote.Image(nref, ropts...)
}

// openLayoutImage finds an image in an OCI layout: the manifest whose
// org.opencontainers.image.ref.name annotation is the tag, or the only
// manifest when no tag is given. An index found there resolves to the
// linux image for this architecture.
func openLayoutImage(spec string) (v1.Image, error) {
	idx, d, err := layoutDescriptor(spec)
	if err != nil {
		return nil, err
	}
	if !d.MediaType.IsIndex() {
		return idx.Image(d.Digest)
	}
	child, err := idx.ImageIndex(d.Digest)
	if err != nil {
		return nil, err
	}
	cm, err := child.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, c := range cm.Manifests {
		if c.Platform != nil && c.Platform.Satisfies(platform) {
			return child.Image(c.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s/%s in index %s", platform.OS, platform.Architecture, d.Digest)
}

// renderCatalogImage loads the catalog under the configs label's directory,
// extracting only that directory from the image.
func (r *Renderer) renderCatalogImage(ctx context.Context, ref string, img v1.Image, configsDir string) (*result, error) {
	tmp, err := tmpdir.Make(r.opts.TempDir, tmpdir.Prefix+"render-")
	if err != nil {
		return nil, fmt.Errorf("create tempdir: %v", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "configs")
	found, err := extractTree(ctx, img, configsDir, root, r.opts.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("failed to unpack image %q: %w", ref, err)
	}
	if !found {
		return nil, fmt.Errorf("render %q: catalog directory %q (label %s) is not a directory in the image", ref, configsDir, ConfigsLabel)
	}
	cfg, err := fbc.LoadConfig(ctx, os.DirFS(root))
	if err != nil {
		return nil, err
	}
	return &result{cfg: cfg}, nil
}

// renderBundleImage unpacks a bundle image, which is small, and renders it
// as a bundle directory whose image is the reference as given. size is
// the file content it unpacked to.
func (r *Renderer) renderBundleImage(ctx context.Context, ref string, img v1.Image) (res *result, size int64, err error) {
	tmp, err := tmpdir.Make(r.opts.TempDir, tmpdir.Prefix+"render-")
	if err != nil {
		return nil, 0, fmt.Errorf("create tempdir: %v", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "bundle")
	if _, err := extractTree(ctx, img, "", root, r.opts.MaxBytes); err != nil {
		return nil, 0, fmt.Errorf("failed to unpack image %q: %w", ref, err)
	}
	b, err := parseBundle(os.DirFS(root))
	if err != nil {
		return nil, 0, err
	}
	b.image = ref
	res, err = bundleResult(b)
	return res, treeSize(root), err
}

// LayoutDigest is the digest oci:DIR[:TAG]'s DIR[:TAG] part names now, as
// a HEAD request answers for a registry reference: the manifest or index
// the tag points at. It reads index.json only.
func LayoutDigest(spec string) (v1.Hash, error) {
	_, d, err := layoutDescriptor(spec)
	return d.Digest, err
}

// layoutDescriptor is the descriptor spec names in its layout's index.json.
func layoutDescriptor(spec string) (v1.ImageIndex, v1.Descriptor, error) {
	dir, tag := spec, ""
	if i := strings.LastIndexByte(spec, ':'); i >= 0 && !strings.ContainsRune(spec[i+1:], '/') {
		dir, tag = spec[:i], spec[i+1:]
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, err
	}
	var found []v1.Descriptor
	for _, d := range m.Manifests {
		if tag == "" || d.Annotations["org.opencontainers.image.ref.name"] == tag {
			found = append(found, d)
		}
	}
	switch {
	case len(found) == 0 && tag != "":
		return nil, v1.Descriptor{}, fmt.Errorf("no image tagged %q in OCI layout %s", tag, dir)
	case len(found) != 1:
		return nil, v1.Descriptor{}, fmt.Errorf("OCI layout %s holds %d images; name one with oci:%s:TAG", dir, len(found), dir)
	}
	return idx, found[0], nil
}
