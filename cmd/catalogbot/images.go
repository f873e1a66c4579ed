package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/build"
)

func newImagesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Check the image references of a catalog against their registries",
		// Without this, cobra prints help for a mistyped subcommand and
		// exits 0, which would pass a CI step that checked nothing.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newImagesVerifyCmd(a))
	return cmd
}

// imagesFormats are the output formats of images verify.
var imagesFormats = checks.Formats{checks.FormatText, checks.FormatJSON}

// imagesVerifyFlags are the command line of images verify.
type imagesVerifyFlags struct {
	catalogYAML   string
	baseImage     string
	requireDigest bool
	allow         []string
	insecure      []string
	platforms     []string
	cacheDir      string
	format        checks.Format
	// referenceTimeout bounds each reference, retries included; a
	// registry that runs out of it is not asked again.
	referenceTimeout time.Duration
}

func newImagesVerifyCmd(a *app) *cobra.Command {
	f := imagesVerifyFlags{format: checks.FormatText}
	cmd := &cobra.Command{
		Use:   "verify [CATALOG_DIR]",
		Short: "Verify that every image a catalog references exists and follows policy",
		Long: `Verify the image references of a catalog: every olm.bundle image and
relatedImages entry of the File-Based Catalog in CATALOG_DIR, every image of
the reference list given with --catalog-yaml, and the --base (opm stands for
the default opm image, as in publish). References must be fully qualified
(a registry host with a dot or a port, or localhost), and --platform values
must be platforms Go knows, such as linux/amd64 or linux/arm64/v8; both are
checked before any registry is contacted.

Each image is checked once, however often it is written. Existence is
checked with HEAD requests, which do not count against pull limits; image
content is fetched only when a rule needs it: the catalog label of
catalog.yaml reference images, and the platforms given with --platform.

Policy: bundle images must be single manifests, not indexes, and catalog
reference images must carry the label
operators.operatorframework.io.index.configs.v1. --require-digest requires
every reference to be pinned by digest: a tag is a policy failure whether
or not its registry answers, and when it answers the message names the
digest to pin to (repo@sha256:...). --allow-registry limits where images may come
from; images elsewhere are reported without being contacted.

Each failing reference falls in one class: not_found, unauthorized (never
reported as missing), rate_limited, transport or policy.

Each reference has a deadline, --reference-timeout (30s, as the policy's
limits.referenceTimeout for pull requests), retries included. A registry
that runs out of it is not asked again in the run: its other references
fail at once as transport failures that name it.

Credentials come from the containers auth files ($REGISTRY_AUTH_FILE,
$XDG_RUNTIME_DIR/containers/auth.json, ~/.config/containers/auth.json) and
from docker's config.json with its credential helpers. They never appear
in the output or the logs.

Output formats (-o):
  text  one line per failing reference with its position and class, then
        a summary (default)
  json  {"references": [{"image", "locations", "result", "digest",
        "message"}]}

Exit status: 0 all references ok, 1 a reference failed or the
catalog.yaml has errors, 2 usage or I/O error, 130 interrupted.`,
		Example: `  catalogbot images verify catalog
  catalogbot images verify --catalog-yaml catalog.yaml --require-digest -o json
  catalogbot images verify --base quay.io/operator-framework/opm:v1.65.0 --platform linux/arm64
  catalogbot images verify catalog --allow-registry quay.io/example --insecure-registry localhost:5000`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf(cmd.CommandPath(), "images verify takes at most one catalog directory, got %d arguments", len(args))
			}
			deprecatedFlag(a, cmd, "base-image", "use --base")
			if len(args) == 0 && f.catalogYAML == "" && f.baseImage == "" {
				return usageErrorf(cmd.CommandPath(), "images verify needs a catalog directory, --catalog-yaml or --base")
			}
			return firstError(
				checkBaseFlag(cmd.CommandPath(), "--base", f.baseImage),
				checkPlatformFlags(cmd.CommandPath(), f.platforms))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			}
			return a.runImagesVerify(cmd.Context(), cmd.CommandPath(), dir, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalogYAML, "catalog-yaml", "", "a catalog.yaml reference list whose images to verify")
	fl.StringVar(&f.baseImage, "base", "", "the base the catalog is published on, to verify as well: opm (the default opm image), scratch (none) or an image `REF`erence")
	// The flag's name before publish and rebuild set the convention.
	fl.StringVar(&f.baseImage, "base-image", "", "")
	_ = fl.MarkHidden("base-image")
	fl.BoolVar(&f.requireDigest, "require-digest", false, "require every image reference to be pinned by digest")
	fl.StringArrayVar(&f.allow, "allow-registry", nil, "allow images only from this registry or repository prefix (repeatable)")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "reach this registry HOST[:PORT] over plain HTTP or unverified TLS (repeatable)")
	fl.StringArrayVar(&f.platforms, "platform", nil, "a platform (os/arch[/variant]) catalog and base images must provide (repeatable)")
	fl.DurationVar(&f.referenceTimeout, "reference-timeout", policy.DefaultReferenceTimeout,
		"the deadline of one reference, retries included; a registry that runs out of it is not asked again")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "keep what was learnt about digest references in this directory across runs")
	fl.VarP(imagesFormats.Value(&f.format), "output", "o", "output format: text or json")
	return cmd
}

func (a *app) runImagesVerify(ctx context.Context, cmdPath, dir string, f imagesVerifyFlags) error {
	policy := images.DefaultPolicy()
	if f.requireDigest {
		policy.Pin = images.PinAll()
	}
	policy.AllowRegistries = f.allow
	policy.Platforms = f.platforms
	v, err := images.New(images.Options{
		Policy:    policy,
		Insecure:  f.insecure,
		CacheDir:  f.cacheDir,
		UserAgent: a.userAgent(),
		Log:       a.log,
		// The same deadline and breaker as the images check of a
		// pull request: a registry that never answers costs one
		// deadline, not one per image.
		ReferenceTimeout:       f.referenceTimeout,
		ReferenceTimeoutSource: "--reference-timeout",
	})
	if err != nil {
		return usageErrorf(cmdPath, "%v", err)
	}

	var uses []images.Use
	var findings []checks.Finding
	if dir != "" {
		u, err := a.catalogImages(ctx, dir)
		if err != nil {
			return err
		}
		uses = append(uses, u...)
	}
	if f.catalogYAML != "" {
		data, err := os.ReadFile(f.catalogYAML)
		if err != nil {
			return err
		}
		file, fs := catalogyaml.Parse(filepath.ToSlash(f.catalogYAML), data)
		findings = append(findings, fs...)
		uses = append(uses, images.FromCatalogYAML(file)...)
	}
	switch f.baseImage {
	case "", build.BaseScratch:
		// No base: nothing to verify.
	case build.BaseOPM:
		uses = append(uses, images.Base(build.DefaultOPMImage))
	default:
		uses = append(uses, images.Base(f.baseImage))
	}

	start := time.Now()
	results, err := v.VerifyUses(ctx, uses)
	if err != nil {
		return fmt.Errorf("verify images: %w", err)
	}
	failed := len(findings) > 0
	for _, r := range results {
		failed = failed || !r.OK()
	}
	a.log.Debug("images verified", "references", len(results), "uses", len(uses), "took", time.Since(start))

	write := images.WriteText
	if f.format == checks.FormatJSON {
		write = images.WriteJSON
	}
	if err := write(a.stdout, results, findings); err != nil {
		return fmt.Errorf("write %s output: %w", f.format, err)
	}
	if failed {
		return errInvalid
	}
	return nil
}

// catalogImages lists the image references of the catalog in dir, from the
// validator, which reads each file with positions once.
func (a *app) catalogImages(ctx context.Context, dir string) ([]images.Use, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	res, err := a.validate(ctx, os.DirFS(dir), fbc.Options{Images: true})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if !res.Valid() {
		// Images of bundles that failed to load are not listed; say so
		// rather than pass them silently.
		a.log.Warn("the catalog is invalid; images of bundles that could not be read are not checked (see catalogbot validate)",
			"dir", dir, "findings", len(res.Findings))
	}
	return images.FromFBC(filepath.ToSlash(dir), res.Images), nil
}
