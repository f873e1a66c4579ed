package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/render"
)

func newRenderCmd(a *app) *cobra.Command {
	var (
		output     string
		level      string
		migrateAll bool
		opts       render.Options
	)
	cmd := &cobra.Command{
		Use:   "render REF...",
		Short: "Render catalogs and bundles to File-Based Catalog blobs as opm render would",
		Long: `Render each REF to File-Based Catalog blobs and print them merged, with the
output of opm render, byte for byte.

A REF is a bundle directory (one with manifests/ and metadata/), any other
directory (loaded as a catalog, without validation), an image reference in
canonical form (registry/repository:tag or @digest; a short name such as
foo:v1 is refused, as opm refuses it), or oci:DIR[:TAG] for an image in an
OCI layout directory. An image is a catalog image when it has the
operators.operatorframework.io.index.configs.v1 label and a bundle image
when it has operators.operatorframework.io.bundle.package.v1.

Registry credentials come from the docker config.json and its credential
helpers. Loopback and private addresses are reached over plain HTTP, and so
is every registry named with --insecure-registry.

Migration levels (--migrate-level), each running those before it:
  none                            do nothing
  bundle-object-to-csv-metadata   replace olm.bundle.object properties with
                                  one olm.csv.metadata, for bundles that
                                  have an image

Exit status: 0 rendered, 1 a reference could not be rendered, 2 usage error.`,
		Example: `  catalogbot render ./bundle --alpha-image-ref-template 'quay.io/example/{{.Package}}-bundle:v{{.Version}}'
  catalogbot render quay.io/example/catalog:v1 -o yaml > catalog.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd.CommandPath(), "render takes at least one reference")
			}
			return checkInsecureFlags(cmd.CommandPath(), opts.InsecureRegistries)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "json" && output != "yaml" {
				return usageErrorf(cmd.CommandPath(), "invalid --output value %q, expected (json|yaml)%s", output, checks.DidYouMean(output, []string{"json", "yaml"}))
			}
			opts.MigrateLevel = level
			if migrateAll {
				opts.MigrateLevel = render.MigrateAll
			}
			r, err := render.New(opts)
			if err != nil {
				return usageErrorf(cmd.CommandPath(), "%v", err)
			}
			return a.runRender(cmd.Context(), r, args, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: json or yaml")
	cmd.Flags().StringVar(&level, "migrate-level", "", "name of the last migration to run (default: none)")
	cmd.Flags().BoolVar(&migrateAll, "migrate", false, "run all migrations (same as opm's deprecated --migrate)")
	cmd.MarkFlagsMutuallyExclusive("migrate", "migrate-level")
	cmd.Flags().StringVar(&opts.ImageRefTemplate, "alpha-image-ref-template", "",
		"image reference for bundles rendered from a directory: a Go template over {{.Package}}, {{.Name}} and {{.Version}}")
	cmd.Flags().StringArrayVar(&opts.InsecureRegistries, "insecure-registry", nil, insecureUsage)
	return cmd
}

func (a *app) runRender(ctx context.Context, r *render.Renderer, refs []string, output string) error {
	start := time.Now()
	cfg, err := r.Render(ctx, refs...)
	if err != nil {
		// A cancelled run reached no verdict on the reference.
		var re *render.RefError
		if !errors.As(err, &re) || errors.Is(err, context.Canceled) {
			return err
		}
		a.log.Debug("render failed", "ref", re.Ref, "error", re.Err)
		fmt.Fprintf(a.stderr, "catalogbot: %s\n", describeRefError(re))
		return errInvalid
	}
	a.log.Debug("rendered", "refs", len(refs), "packages", len(cfg.Packages), "channels", len(cfg.Channels),
		"bundles", len(cfg.Bundles), "others", len(cfg.Others), "took", time.Since(start))

	w := bufio.NewWriterSize(a.stdout, 64<<10)
	if output == "yaml" {
		err = render.WriteYAML(w, cfg)
	} else {
		err = render.WriteJSON(w, cfg)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("write %s output: %w", output, err)
	}
	return nil
}

// describeRefError names the reference and what it was taken for, then
// gives opm's message for the failure. What a reference was taken for is
// often the clue: a bundle directory missing metadata/ is read as a catalog.
func describeRefError(e *render.RefError) string {
	kind := string(e.Kind)
	if e.Kind == render.KindImage && looksLikePath(e.Ref) {
		kind = "no such file or directory, so read as an image"
	}
	what := fmt.Sprintf("%q (%s)", e.Ref, kind)
	if class, msg, ok := registry.Explain(e.Err); ok {
		// The library's text is in the debug log.
		return fmt.Sprintf("render reference %s: %s: %s", what, class, msg)
	}
	if e.Migrate {
		return fmt.Sprintf("migrate %s: %v", what, e.Err)
	}
	return fmt.Sprintf("render reference %s: %v", what, e.Err)
}

// looksLikePath tells a mistyped path from an image reference, which never
// starts with a dot or a slash.
func looksLikePath(ref string) bool {
	return strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") || ref == "." || ref == ".."
}
