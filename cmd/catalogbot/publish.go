package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbcreport"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// publishFlags are the command line of publish.
type publishFlags struct {
	catalog   string
	image     string
	base      string
	opmImage  string
	platforms []string
	insecure  []string
	refs      map[string]string
}

func newPublishCmd(a *app) *cobra.Command {
	f := publishFlags{base: build.BaseOPM, opmImage: build.DefaultOPMImage}
	cmd := &cobra.Command{
		Use:   "publish --catalog DIR --image REF",
		Short: "Build the catalog image and push it, without a container daemon",
		Long: `Validate the File-Based Catalog in DIR, build its catalog image and push it
to REF, a registry reference, or to oci:LAYOUT_DIR[:TAG], an OCI image
layout directory (created if missing; the tag defaults to latest).

The image is the base plus one /configs layer holding the catalog and the
label operators.operatorframework.io.index.configs.v1=/configs. Bases
(--base):
  opm      the opm image (--opm-image), with ENTRYPOINT ["/bin/opm"] and
           CMD ["serve","/configs","--cache-dir=/tmp/cache"], for OLM v0
  scratch  nothing but the catalog and the label, for OLM v1 catalogd
  IMAGE    any other image reference
A multi-platform base gives one image per platform (all of them, or those
named with --platform) and an index over them.

The build is reproducible: file times, owners, modes and order are fixed,
and so is the image's created time (the Unix epoch, or SOURCE_DATE_EPOCH),
so the same catalog on the same base digest gives the same digest. The
image is annotated with the base it was built on and with the reference
digests given with --reference-digest.

Blobs and the manifest are pushed before the tag moves. When the tag
already points at the digest, nothing is pushed and the result is
"unchanged". An invalid catalog is never published.

Output: the digest and "published" or "unchanged".

Exit status: 0 published or unchanged, 1 the catalog is invalid (its
findings are printed), 2 usage, registry or I/O error.`,
		Example: `  catalogbot publish --catalog catalog --image quay.io/example/catalog:latest
  catalogbot publish --catalog catalog --image oci:out:v1 --base scratch
  catalogbot publish --catalog catalog --image localhost:5000/catalog:v1 --platform linux/amd64 --platform linux/arm64`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "publish takes no arguments, got %q; name the catalog with --catalog", args[0])
			}
			if f.catalog == "" || f.image == "" {
				return usageErrorf(cmd.CommandPath(), "publish needs --catalog and --image")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPublish(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.catalog, "catalog", "", "the catalog `DIR` to publish")
	fl.StringVar(&f.image, "image", "", "where to publish: an image `REF`erence or oci:LAYOUT_DIR[:TAG]")
	fl.StringVar(&f.base, "base", f.base, "base image: opm, scratch or an image reference")
	fl.StringVar(&f.opmImage, "opm-image", f.opmImage, "the image --base opm stands for; pin it by digest for builds that must not move")
	fl.StringArrayVar(&f.platforms, "platform", nil, "a platform (os/arch[/variant]) to build (repeatable; default: all of the base's)")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "reach this registry HOST[:PORT] over plain HTTP (repeatable)")
	fl.StringToStringVar(&f.refs, "reference-digest", nil,
		"record REF=DIGEST in the image's io.catalogbot.references annotation, to tell later when REF has moved (repeatable)")
	return cmd
}

func (a *app) runPublish(ctx context.Context, cmdPath string, f publishFlags) error {
	epoch, err := sourceDateEpoch()
	if err != nil {
		return usageErrorf(cmdPath, "%v", err)
	}
	info, err := os.Stat(f.catalog)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%q is not a directory", f.catalog)
	}

	start := time.Now()
	res, err := a.validate(ctx, os.DirFS(f.catalog), fbc.Options{})
	if err != nil {
		return fmt.Errorf("validate %s: %w", f.catalog, err)
	}
	if !res.Valid() {
		if err := fbcreport.Write(a.stdout, fbcreport.Text, res, fbcreport.Options{Version: a.version}); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "catalogbot: %s is invalid; not published\n", f.catalog)
		return errInvalid
	}
	a.log.Debug("validated", "dir", f.catalog, "took", time.Since(start))

	ropts := []remote.Option{
		remote.WithAuthFromKeychain(registry.DefaultKeychain()),
		remote.WithUserAgent("catalogbot/" + a.version),
	}
	start = time.Now()
	img, err := build.Build(ctx, f.catalog, build.Options{
		Base:       f.base,
		OPMImage:   f.opmImage,
		Platforms:  f.platforms,
		Epoch:      epoch,
		Insecure:   f.insecure,
		References: f.refs,
		Remote:     ropts,
	})
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	a.log.Debug("built", "digest", img.Digest, "base", img.BaseName, "base-digest", img.BaseDigest, "took", time.Since(start))

	start = time.Now()
	pushed, err := build.Push(ctx, img, f.image, build.PushOptions{Insecure: f.insecure, Remote: ropts})
	if err != nil {
		return err
	}
	status := "published"
	if pushed.Unchanged {
		status = "unchanged"
	}
	a.log.Info(status, "image", f.image, "digest", pushed.Digest, "took", time.Since(start))
	fmt.Fprintf(a.stdout, "%s %s\n", pushed.Digest, status)
	return nil
}

// sourceDateEpoch is the time SOURCE_DATE_EPOCH sets, the convention of
// reproducible builds, or the zero time (the Unix epoch) when unset.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("invalid SOURCE_DATE_EPOCH %q: want seconds since the Unix epoch", s)
	}
	return time.Unix(n, 0), nil
}
