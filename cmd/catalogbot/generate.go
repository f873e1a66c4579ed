package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/publisher/dockerfile"
)

func newGenerateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Generate files for building a File-Based Catalog",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "unknown generator %q: want dockerfile%s", args[0], checks.DidYouMean(args[0], []string{"dockerfile"}))
			}
			return usageErrorf(cmd.CommandPath(), "generate needs a generator: dockerfile")
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	cmd.AddCommand(newGenerateDockerfileCmd(a))
	return cmd
}

func newGenerateDockerfileCmd(a *app) *cobra.Command {
	var (
		base, builder string
		labels        []string
	)
	cmd := &cobra.Command{
		Use:   "dockerfile DIR",
		Short: "Write the Dockerfile that builds a catalog image, as opm generate dockerfile would",
		Long: `Write DIR.Dockerfile next to DIR: the Dockerfile opm generate dockerfile
writes, byte for byte, which builds an image serving the catalog in DIR
under /configs. An existing Dockerfile is never overwritten.

The builder stage runs opm to pre-populate the serve cache, so the builder
image cannot be scratch. With -i scratch the image carries only the catalog
and the cache, for clusters that extract catalogs instead of serving them.

Extra labels (-l key=value, repeatable or comma-separated) are added sorted
by key; a later value for the same key wins.

Exit status: 0 written, 1 the Dockerfile exists or DIR is not a directory,
2 usage error.`,
		Example: `  catalogbot generate dockerfile catalog
  catalogbot generate dockerfile catalog -i scratch -l org.opencontainers.image.source=https://github.com/example/catalog`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "generate dockerfile takes exactly one catalog directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			extra, err := dockerfile.ParseLabels(labels)
			if err != nil {
				return usageErrorf(cmd.CommandPath(), "%v", err)
			}
			// Argument errors are usage errors; checking them first also
			// means nothing is written for them.
			if _, err := dockerfile.Generate(args[0], base, builder, extra); err != nil {
				return usageErrorf(cmd.CommandPath(), "%v", err)
			}
			path, err := dockerfile.Write(args[0], base, builder, extra)
			if err != nil {
				fmt.Fprintf(a.stderr, "catalogbot: %v\n", err)
				return errInvalid
			}
			a.log.Debug("wrote Dockerfile", "path", path)
			return nil
		},
	}
	cmd.Flags().StringVarP(&base, "base-image", "i", dockerfile.DefaultImage, "image the catalog image is built on (opm's name for --base)")
	// --base is the name every other command uses for the base image.
	cmd.Flags().StringVar(&base, "base", dockerfile.DefaultImage, "image the catalog image is built on, as in publish")
	cmd.Flags().StringVarP(&builder, "builder-image", "b", dockerfile.DefaultImage, "image that runs opm to build the serve cache")
	cmd.Flags().StringSliceVarP(&labels, "extra-labels", "l", nil, "extra `key=value` labels; may be repeated")
	return cmd
}
