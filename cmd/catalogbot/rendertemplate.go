package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
)

// templateWriters are render-template's output formats. A format is one
// entry here: its writer gets the rendered catalog whole.
var templateWriters = map[string]func(io.Writer, *declcfg.DeclarativeConfig) error{
	"json": render.WriteJSON,
	"yaml": render.WriteYAML,
	// The upgrade graph of every channel the template generates, whole,
	// as catalogbot graph draws a catalog.
	"mermaid": func(w io.Writer, cfg *declcfg.DeclarativeConfig) error {
		return graph.Mermaid(w, cfg, graph.Options{MaxNodes: -1})
	},
}

func templateFormats() string {
	names := make([]string, 0, len(templateWriters))
	for n := range templateWriters {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

func newRenderTemplateCmd(a *app) *cobra.Command {
	var (
		output      string
		level       string
		concurrency int
		opts        render.Options
	)
	cmd := &cobra.Command{
		Use:   "render-template [basic|semver] [FILE]",
		Short: "Expand a catalog template to File-Based Catalog blobs as opm alpha render-template would",
		Long: `Expand a catalog template to File-Based Catalog blobs, with the output of
opm alpha render-template, byte for byte.

The type is basic (schema olm.template.basic: FBC blobs whose bundles are
given by image alone) or semver (schema olm.semver: bundle images under
Candidate, Fast and Stable, from which the package, its channels, their
upgrade edges and the default channel are generated). Without a type, the
template's schema says which. FILE "-" or no FILE reads standard input.

Bundle images are rendered as catalogbot render renders them, several at
once, each once; they must be bundle images. Registry credentials come from
the docker config.json and its credential helpers. Loopback and private
addresses are reached over plain HTTP, and so is every registry named with
--insecure-registry.

Migration levels (--migrate-level), each running those before it:
  none                            do nothing
  bundle-object-to-csv-metadata   replace olm.bundle.object properties with
                                  one olm.csv.metadata

Problems in the template are printed as FILE:LINE: findings on standard
error.

Exit status: 0 rendered, 1 the template is invalid or a bundle does not
render, 2 usage error.`,
		Example: `  catalogbot render-template semver catalog-template.yaml -o yaml > catalog/foo/catalog.yaml
  catalogbot render-template basic-template.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 2 {
				return usageErrorf(cmd.CommandPath(), "render-template takes a type and a file, got %d arguments", len(args))
			}
			if len(args) == 2 && !slices.Contains(template.Types, args[0]) {
				return usageErrorf(cmd.CommandPath(), "invalid template type %q, must be one of: %s%s", args[0], strings.Join(template.Types, ", "), checks.DidYouMean(args[0], template.Types))
			}
			return checkInsecureFlags(cmd.CommandPath(), opts.InsecureRegistries)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := templateWriters[output]
			if !ok {
				return usageErrorf(cmd.CommandPath(), "invalid --output value %q, expected (%s)%s", output, templateFormats(), checks.DidYouMean(output, strings.Split(templateFormats(), "|")))
			}
			if concurrency < 1 {
				return usageErrorf(cmd.CommandPath(), "invalid --concurrency %d: want 1 or more", concurrency)
			}
			// As opm: one argument is a type when it names one (the
			// template then comes from standard input), else a file.
			typ, file := "", "-"
			switch {
			case len(args) == 2:
				typ, file = args[0], args[1]
			case len(args) == 1 && slices.Contains(template.Types, args[0]):
				typ = args[0]
			case len(args) == 1:
				file = args[0]
			}
			opts.MigrateLevel = level
			r, err := render.New(opts)
			if err != nil {
				return usageErrorf(cmd.CommandPath(), "%v", err)
			}
			return a.runRenderTemplate(cmd.Context(), cmd.InOrStdin(), file, template.Options{
				Type: typ, Renderer: r, Concurrency: concurrency,
			}, write)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "output format: "+templateFormats())
	cmd.Flags().StringVar(&level, "migrate-level", "", "name of the last migration to run (default: none)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 8, "bundle images rendered at once")
	cmd.Flags().StringArrayVar(&opts.InsecureRegistries, "insecure-registry", nil, insecureUsage)
	return cmd
}

func (a *app) runRenderTemplate(ctx context.Context, stdin io.Reader, file string, opts template.Options,
	write func(io.Writer, *declcfg.DeclarativeConfig) error) error {
	var data []byte
	var err error
	name := file
	if file == "-" {
		name = "stdin"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("unable to open %q: %w", name, err)
	}
	start := time.Now()
	res, err := template.Render(ctx, name, data, opts)
	if err != nil {
		return err
	}
	a.log.Debug("rendered template", "file", name, "type", res.Type, "pulled", res.Pulled,
		"reused", res.Reused, "took", time.Since(start))
	if res.Config == nil {
		if err := checks.WriteText(a.stderr, res.Findings, ""); err != nil {
			return err
		}
		return errInvalid
	}
	w := bufio.NewWriterSize(a.stdout, 64<<10)
	if err = write(w, res.Config); err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
