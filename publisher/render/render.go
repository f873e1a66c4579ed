// Package render turns catalog and bundle references into File-Based Catalog
// blobs, with the output of `opm render`, byte for byte.
//
// A reference is, as for opm:
//   - a bundle directory (one holding both manifests/ and metadata/), which
//     becomes one olm.bundle blob;
//   - any other directory, loaded as a File-Based Catalog without validation;
//   - otherwise an image reference in canonical form (registry/repo:tag or
//     @digest; "foo:v1" is refused as opm refuses it). Its config labels say
//     what it is: operators.operatorframework.io.index.configs.v1=<dir> makes
//     it a catalog image, whose <dir> is loaded as a catalog; a
//     operators.operatorframework.io.bundle.package.v1 label makes it a
//     bundle image, rendered like a bundle directory with the reference as
//     its image.
//
// As an extension, "oci:DIR[:TAG]" names an image in an OCI image layout
// directory, so images can be rendered without a registry.
//
// Several references are rendered in order and merged. Each reference's
// blobs get opm's finishing touches before merging: olm.bundle.object and
// olm.csv.metadata properties move to the end of each bundle's properties,
// relatedImages are sorted by image, and the selected migrations run.
//
// Unlike opm, images are never stored whole: a catalog image's configs
// directory is streamed out of its layers into a temporary directory, and
// symbolic links in images are never followed outside what was extracted.
// A bundle image named by digest is rendered once per Renderer and kept
// (cache.go), for every later render of the same reference.
package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/template"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// Options configure a Renderer. The zero value renders as `opm render` with
// no flags.
type Options struct {
	// MigrateLevel is the last migration to run: "" or MigrateNone for
	// none, MigrateBundleObjectToMeta, or MigrateAll (opm's --migrate).
	MigrateLevel string

	// ImageRefTemplate gives bundles rendered from a directory an image
	// reference: a text/template over {{.Package}}, {{.Name}} (the CSV
	// name) and {{.Version}}, like opm's --alpha-image-ref-template.
	ImageRefTemplate string

	// InsecureRegistries are registries (host or host:port) reached over
	// plain HTTP. Loopback and private addresses always are.
	InsecureRegistries []string

	// Keychain resolves registry credentials; nil means
	// registry.DefaultKeychain, the one every command uses.
	Keychain authn.Keychain

	// Transport carries registry requests; nil means timeout.Default(),
	// which bounds how long a silent registry can hold a render (over
	// Egress's transport when that is set).
	Transport http.RoundTripper

	// Egress, when set, is the rule every connection of the default
	// Transport passes: references from a pull request, their token
	// realms and redirects may not reach internal addresses the operator
	// did not allow. Nil contacts whatever a reference names, as the
	// commands on their user's own input (render, assemble, publish) do.
	Egress *egress.Rule

	// TempDir is where images are unpacked; "" means os.TempDir().
	TempDir string

	// RegistryOnly renders registry image references alone, refusing
	// local paths and OCI layouts. References that come from a pull
	// request are data: they must not make the checker read files of the
	// machine it runs on.
	RegistryOnly bool

	// MaxBytes, when above 0, is the most file content one render
	// writes out of an image; an image with more fails with a
	// *TooLargeError. A reference from a pull request is data, and its
	// image, a layer of zeros compressed a thousandfold, would otherwise
	// fill the disk and then the memory that reads it back.
	MaxBytes int64

	// CacheBytes bounds the bundle images the Renderer keeps rendered,
	// by reference pinned by digest, for every later render of the same
	// reference (see cache.go); 0 means DefaultCacheBytes and a negative
	// value keeps none. Renderers made from it by WithMaxBytes share it.
	CacheBytes int64
}

// Renderer renders references. It is safe for concurrent use.
type Renderer struct {
	opts Options
	// ruled is set when every connection passes Options.Egress.
	ruled    bool
	steps    int
	template *template.Template
	insecure map[string]bool
	cache    *bundleCache
}

// New checks the options and returns a Renderer. An unknown migration level
// or a template that does not parse is an error, reported before anything
// is rendered.
func New(opts Options) (*Renderer, error) {
	steps, err := migrationSteps(opts.MigrateLevel)
	if err != nil {
		return nil, err
	}
	r := &Renderer{opts: opts, steps: steps, insecure: map[string]bool{}}
	if opts.ImageRefTemplate != "" {
		r.template, err = template.New("image-ref-template").Parse(opts.ImageRefTemplate)
		if err != nil {
			return nil, fmt.Errorf("invalid image reference template: %v", err)
		}
	}
	switch {
	case opts.CacheBytes == 0:
		r.cache = newBundleCache(DefaultCacheBytes)
	case opts.CacheBytes > 0:
		r.cache = newBundleCache(opts.CacheBytes)
	}
	for _, h := range opts.InsecureRegistries {
		r.insecure[h] = true
	}
	if r.opts.Keychain == nil {
		r.opts.Keychain = registry.DefaultKeychain()
	}
	if r.opts.Transport == nil {
		r.opts.Transport = timeout.Default()
		if opts.Egress != nil {
			d := timeout.Timeout()
			r.opts.Transport = timeout.New(d).WithBase(opts.Egress.Transport(egress.Timeouts{Connect: d, TLS: d, Header: d, Idle: d}))
			r.ruled = true
		}
	}
	return r, nil
}

// WithMaxBytes returns a Renderer like r whose renders write at most n
// bytes out of an image (Options.MaxBytes); r is left as it is.
func (r *Renderer) WithMaxBytes(n int64) *Renderer {
	c := *r
	c.opts.MaxBytes = n
	return &c
}

// ForPullRequests reports whether r may render a pull request's references:
// registry images only, every connection through an egress rule.
func (r *Renderer) ForPullRequests() bool { return r.opts.RegistryOnly && r.ruled }

// MigrateLevel is the migration level the renderer runs, as given.
func (r *Renderer) MigrateLevel() string { return r.opts.MigrateLevel }

// Kind says what a reference turned out to be.
type Kind string

const (
	KindBundleDir    Kind = "bundle directory"
	KindCatalogDir   Kind = "catalog directory"
	KindFile         Kind = "file"
	KindImage        Kind = "image" // an image whose type is not known yet
	KindBundleImage  Kind = "bundle image"
	KindCatalogImage Kind = "catalog image"
)

// ErrNotAllowed marks references opm refuses by kind: plain files and
// sqlite index images.
var ErrNotAllowed = errors.New("not allowed")

// RefError is a failure to render one reference. Its message is opm's.
type RefError struct {
	Ref  string
	Kind Kind
	// Migrate is set when rendering succeeded and a migration failed.
	Migrate bool
	Err     error
}

func (e *RefError) Error() string {
	if e.Migrate {
		return fmt.Sprintf("migrate: %v", e.Err)
	}
	return fmt.Sprintf("render reference %q: %v", e.Ref, e.Err)
}

func (e *RefError) Unwrap() error { return e.Err }

// Render renders each reference in order and merges the results. It stops
// at the first reference that fails, with a *RefError.
func (r *Renderer) Render(ctx context.Context, refs ...string) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	for _, ref := range refs {
		cfg, err := r.RenderOne(ctx, ref)
		if err != nil {
			return nil, err
		}
		out.Append(cfg)
	}
	return out, nil
}

// RenderOne renders one reference, finished (properties reordered, related
// images sorted, migrated) as Render merges it.
func (r *Renderer) RenderOne(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	out, err := r.RenderRef(ctx, ref)
	if err != nil {
		return nil, err
	}
	return out.Config, nil
}

// Rendered is one reference rendered as RenderOne renders it, with what the
// reference turned out to be and the CSV of each bundle.
type Rendered struct {
	Config *declcfg.DeclarativeConfig
	Kind   Kind
	// CSVs holds the ClusterServiceVersion of each of Config.Bundles as
	// JSON, "" for a bundle without one (and, without a migration, for the
	// bundles of a catalog: CatalogCSV reads theirs). opm keeps it beside the bundle
	// (and templates read the package's description and icon from it),
	// even after a migration has dropped the bundle's objects.
	CSVs []string
}

// RenderRef renders one reference as RenderOne does and says what it was.
func (r *Renderer) RenderRef(ctx context.Context, ref string) (*Rendered, error) {
	res, kind, err := r.renderReference(ctx, ref)
	if err != nil {
		return nil, &RefError{Ref: ref, Kind: kind, Err: err}
	}
	cfg := res.cfg
	csvs := make([]string, len(cfg.Bundles))
	for i := range cfg.Bundles {
		b := &cfg.Bundles[i]
		b.Properties = moveObjectsToEnd(b.Properties)
		// sort.Slice, not a stable sort, as opm: the order of equal images
		// under different names then matches opm's.
		sort.Slice(b.RelatedImages, func(x, y int) bool {
			return b.RelatedImages[x].Image < b.RelatedImages[y].Image
		})
	}
	// Bundles read from a catalog carry their CSV in their objects; it is
	// only decoded when a migration needs it, since a catalog image may
	// hold thousands of bundles (CatalogCSV reads it on demand).
	for i := range cfg.Bundles {
		switch {
		case res.csvJSON != nil:
			csvs[i] = res.csvJSON[i]
		case r.steps > 0:
			csvs[i] = catalogCSVJSON(&cfg.Bundles[i])
		}
	}
	if r.steps > 0 {
		for i := range cfg.Bundles {
			if err := migrateCSVMetadata(&cfg.Bundles[i], csvs[i]); err != nil {
				return nil, &RefError{Ref: ref, Kind: kind, Migrate: true, Err: err}
			}
		}
	}
	return &Rendered{Config: cfg, Kind: kind, CSVs: csvs}, nil
}

// CatalogCSV is the ClusterServiceVersion of a bundle read from a catalog,
// as JSON: the one among its olm.bundle.object properties, or "" when it
// has none (a migrated bundle keeps only olm.csv.metadata).
func CatalogCSV(b *declcfg.Bundle) string { return catalogCSVJSON(b) }

// result is one rendered reference. csvJSON, when set, holds the CSV of
// each bundle as the bundle parser saw it; otherwise it comes from the
// bundles' olm.bundle.object properties.
type result struct {
	cfg     *declcfg.DeclarativeConfig
	csvJSON []string
}

func (r *Renderer) renderReference(ctx context.Context, ref string) (*result, Kind, error) {
	if r.opts.RegistryOnly {
		if _, err := reference.ParseCanonical(ref); err != nil || strings.HasPrefix(ref, ociPrefix) {
			return nil, KindImage, fmt.Errorf("ref %q is not a registry image reference: %w", ref, ErrNotAllowed)
		}
		return r.renderImage(ctx, ref)
	}
	// A path that exists wins, as in opm, even one that starts with oci:.
	info, err := os.Stat(ref)
	if err != nil {
		return r.renderImage(ctx, ref)
	}
	if !info.IsDir() {
		return nil, KindFile, fmt.Errorf("ref %q is not a directory: %w", ref, ErrNotAllowed)
	}
	entries, err := os.ReadDir(ref)
	if err != nil {
		return nil, KindCatalogDir, err
	}
	if isBundleDir(entries) {
		res, err := r.renderBundleDir(ref)
		return res, KindBundleDir, err
	}
	cfg, err := fbc.LoadConfig(ctx, os.DirFS(ref))
	if err != nil {
		return nil, KindCatalogDir, err
	}
	return &result{cfg: cfg}, KindCatalogDir, nil
}

func isBundleDir(entries []os.DirEntry) bool {
	var manifests, metadata bool
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		switch e.Name() {
		case "manifests":
			manifests = true
		case "metadata":
			metadata = true
		}
	}
	return manifests && metadata
}

type templateData struct {
	Package string
	Name    string
	Version string
}

func (r *Renderer) renderBundleDir(dir string) (*result, error) {
	b, err := parseBundle(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	if r.template != nil {
		version, err := b.packageVersion()
		if err == nil {
			var sb strings.Builder
			err = r.template.Execute(&sb, templateData{Package: b.pkg, Name: b.name, Version: version})
			b.image = sb.String()
		}
		if err != nil {
			return nil, fmt.Errorf("failed templating image reference from bundle for %q: %v", dir, err)
		}
	}
	return bundleResult(b)
}

func bundleResult(b *registryBundle) (*result, error) {
	blob, csv, err := b.toDeclcfg()
	if err != nil {
		return nil, err
	}
	return &result{
		cfg:     &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{*blob}},
		csvJSON: []string{csv},
	}, nil
}

// moveObjectsToEnd moves the olm.bundle.object and olm.csv.metadata
// properties after all others, keeping the order within each group, as opm
// render does for every bundle it prints.
func moveObjectsToEnd(props []property.Property) []property.Property {
	var others, objs []property.Property
	for _, p := range props {
		switch p.Type {
		case property.TypeBundleObject, property.TypeCSVMetadata:
			objs = append(objs, p)
		default:
			others = append(others, p)
		}
	}
	return append(others, objs...)
}
