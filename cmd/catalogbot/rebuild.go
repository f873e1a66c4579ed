package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// rebuildFlags are the command line of rebuild.
type rebuildFlags struct {
	config    string
	image     string
	base      string
	opmImage  string
	platforms []string
	cacheDir  string
	insecure  []string
	sign      signFlags
	timeout   time.Duration
}

func newRebuildCmd(a *app) *cobra.Command {
	f := rebuildFlags{base: build.BaseOPM, opmImage: build.DefaultOPMImage}
	cmd := &cobra.Command{
		Use:   "rebuild CATALOG_YAML [--image REF]",
		Short: "Assemble, validate and publish a catalog.yaml catalog; report what moved",
		Long: `Rebuild the catalog of the catalog.yaml reference list CATALOG_YAML (the
argument, as in assemble; --config is its deprecated spelling), the job to
run on a schedule (a Kubernetes CronJob, a GitHub Actions schedule): assemble every
reference into a temporary directory, validate the result, build the
catalog image and push it to --image, a registry reference or
oci:LAYOUT_DIR[:TAG]. --image defaults to catalog.yaml's repo:tag when it
sets both.

Every reference's tag is resolved to a digest and recorded in the image's
io.catalogbot.references annotation. Before pushing, the image published
at the target is read and its annotations compared: each reference whose
tag now names another digest, and a base image that moved, are reported as
drift. The build is reproducible, so when nothing moved the digest is the
one published and nothing is pushed: the result is "unchanged".

An invalid catalog is never published: its findings are printed and the
exit status is 1.

--sign-key FILE or --sign-keyless sign the pushed image and attest its
provenance, and --tlog-upload and --rekor-url say where they are logged,
as publish does (see catalogbot publish --help).

Output: one "drift: ..." line per input that moved, then the digest and
"published" or "unchanged"; on stderr a log line with the image, the
digest and the resolved base (name@digest).

Credentials are found as publish finds them: see catalogbot publish --help.

--image (a fully qualified reference or oci:LAYOUT_DIR[:TAG]), --base and
--platform are checked before any registry is contacted.

The whole run has a deadline, --timeout (15m): a registry that accepts
connections and never answers ends it there, with exit status 3. Give the
scheduler's own bound (a CronJob's activeDeadlineSeconds) some room above
it, so that the run ends by itself and says why.

The exit status tells a scheduler whether to retry:
` + exitCodesHelp(rebuildExitCodes, 76),
		Example: `  catalogbot rebuild catalog.yaml
  catalogbot rebuild catalog.yaml --image quay.io/example/catalog:latest --cache-dir /cache
  catalogbot rebuild catalog.yaml --image oci:out:v1 --base scratch`,
		Args: func(cmd *cobra.Command, args []string) error {
			// catalog.yaml is an argument, as in assemble; --config is
			// the name it had first.
			deprecatedFlag(a, cmd, "config", "give catalog.yaml as the argument: catalogbot rebuild CATALOG_YAML")
			switch {
			case len(args) > 1:
				return usageErrorf(cmd.CommandPath(), "rebuild takes one catalog.yaml, got %d arguments", len(args))
			case len(args) == 1 && f.config != "":
				return usageErrorf(cmd.CommandPath(), "rebuild takes one catalog.yaml, got %q and --config %q", args[0], f.config)
			case len(args) == 1:
				f.config = args[0]
			case f.config == "":
				return usageErrorf(cmd.CommandPath(), "rebuild needs a catalog.yaml (rebuild CATALOG_YAML)")
			}
			if err := f.sign.check(cmd.CommandPath()); err != nil {
				return err
			}
			return checkBuildFlags(cmd.CommandPath(), f.image, f.base, f.opmImage, f.platforms, f.insecure)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runRebuild(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "")
	_ = fl.MarkHidden("config")
	fl.StringVar(&f.image, "image", "", "where to publish: an image `REF`erence or oci:LAYOUT_DIR[:TAG] (default: catalog.yaml's repo:tag)")
	fl.StringVar(&f.base, "base", f.base, "base image: opm, scratch or an image reference")
	fl.StringVar(&f.opmImage, "opm-image", f.opmImage, "the image --base opm stands for; pin it by digest for builds that must not move")
	fl.StringArrayVar(&f.platforms, "platform", nil, "a platform (os/arch[/variant]) to build (repeatable; default: all of the base's)")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "keep rendered references by image digest in this `DIR` across runs")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, insecureUsage)
	f.sign.register(fl)
	fl.DurationVar(&f.timeout, "timeout", publish.DefaultDeadline, "the deadline of the whole run, assembly and push included")
	return cmd
}

func (a *app) runRebuild(ctx context.Context, cmdPath string, f rebuildFlags) error {
	epoch, err := sourceDateEpoch()
	if err != nil {
		return usageErrorf(cmdPath, "%v", err)
	}
	file, err := a.readCatalogYAML(f.config)
	if err != nil {
		return err
	}
	target := f.image
	if target == "" {
		if file.Repo == "" || file.Tag == "" {
			return usageErrorf(cmdPath, "rebuild needs --image: %s does not set both repo and tag", f.config)
		}
		target = file.Repo + ":" + file.Tag
	}

	start := time.Now()
	opts := publish.Options{
		Image: target,
		Build: build.Options{
			Base:      f.base,
			OPMImage:  f.opmImage,
			Platforms: f.platforms,
			Epoch:     epoch,
		},
		CacheDir:           f.cacheDir,
		InsecureRegistries: f.insecure,
		Keychain:           registry.DefaultKeychain(),
		UserAgent:          a.userAgent(),
		Validate:           a.validate,
		Progress:           assemble.LogProgress(a.stderr),
		Deadline:           f.timeout,
	}
	if err := a.signOptions(ctx, f.sign, f.sign.mode(), nil, nil, f.config, "", &opts); err != nil {
		return err
	}
	res, err := publish.Publish(ctx, publish.Source{List: file}, opts)
	if err != nil {
		return a.publishError(ctx, err, true)
	}
	return a.reportPublish(res, "the catalog assembled from "+f.config, target, start)
}
