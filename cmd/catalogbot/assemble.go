package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/publisher/assemble"
)

// assembleFlags are the command line of assemble.
type assembleFlags struct {
	out         string
	cacheDir    string
	concurrency int
	insecure    []string
}

func newAssembleCmd(a *app) *cobra.Command {
	f := assembleFlags{concurrency: assemble.DefaultConcurrency}
	cmd := &cobra.Command{
		Use:   "assemble CATALOG_YAML -o OUTDIR",
		Short: "Render every image of a catalog.yaml reference list into a catalog directory",
		Long: `Assemble a catalog from a catalog.yaml reference list: render each referenced
image as opm render -o yaml would, into OUTDIR/<catalog name>/<reference
name>/index.yaml, the layout of catalog repositories that publish from a
catalog.yaml.

References are rendered in parallel, at most --concurrency at once. The
result is all or nothing: it is built beside OUTDIR and renamed into place
only when every reference rendered, so on failure OUTDIR is left exactly as
it was, and the error names every failed reference with its class
(not_found, unauthorized, rate_limited, transport, policy or invalid).
OUTDIR is replaced as a whole; a directory holding anything assemble does
not write is never replaced.

With --cache-dir, each tag is resolved to a digest with a HEAD request and
a reference whose digest was rendered before is taken from the cache
without downloading a layer; a tag that moved is rendered again.

catalog.yaml is checked before any registry is contacted; its problems are
reported with file and line.

Registry credentials are found as publish finds them: see catalogbot
publish --help.

On a terminal, a registry request that has waited more than two seconds
is shown until it is answered or times out (30 s without an answer, a
transport failure).

Exit status: 0 assembled, 1 catalog.yaml is invalid or a reference could
not be rendered, its registry refusing access ("unauthorized") included,
2 usage or I/O error, 130 interrupted (OUTDIR is left as it was).`,
		Example: `  catalogbot assemble catalog.yaml -o build
  catalogbot assemble catalog.yaml -o build --cache-dir ~/.cache/catalogbot/assemble --concurrency 8`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "assemble takes one catalog.yaml, got %d arguments", len(args))
			}
			if f.out == "" {
				return usageErrorf(cmd.CommandPath(), "assemble needs an output directory (-o OUTDIR)")
			}
			if f.concurrency < 1 {
				return usageErrorf(cmd.CommandPath(), "invalid --concurrency %d: want 1 or more", f.concurrency)
			}
			return checkInsecureFlags(cmd.CommandPath(), f.insecure)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			defer a.showWaiting()()
			return a.runAssemble(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "output", "o", "", "the output `OUTDIR`, replaced as a whole on success")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "keep rendered references by image digest in this `DIR` across runs")
	fl.IntVar(&f.concurrency, "concurrency", f.concurrency, "how many references to render at once")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, insecureUsage)
	return cmd
}

func (a *app) runAssemble(ctx context.Context, path string, f assembleFlags) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	file, findings := catalogyaml.Parse(filepath.ToSlash(path), data)
	if len(findings) > 0 {
		for _, fd := range findings {
			fmt.Fprintf(a.stderr, "%s:%d: %s [%s]\n", fd.File, fd.Line, fd.Message, fd.Rule)
		}
		return errInvalid
	}

	// A live display only where someone watches it; logs and CI get one
	// line per reference.
	progress := assemble.LogProgress(a.stderr)
	if fl, ok := a.stderr.(*os.File); ok && assemble.IsTerminal(fl) {
		progress = assemble.LiveProgress(a.stderr)
	}
	asm, err := assemble.New(assemble.Options{
		Concurrency:        f.concurrency,
		CacheDir:           f.cacheDir,
		InsecureRegistries: f.insecure,
		Progress:           progress,
	})
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := asm.Assemble(ctx, file, f.out)
	var aerr *assemble.Error
	if errors.As(err, &aerr) && !errors.Is(ctx.Err(), context.Canceled) {
		a.logFailures(aerr)
		fmt.Fprintf(a.stderr, "catalogbot: %v\n", err)
		return errInvalid
	}
	if err != nil {
		return err
	}
	cached := 0
	for _, r := range res.References {
		if r.Cached {
			cached++
		}
	}
	fmt.Fprintf(a.stdout, "assembled %d references into %s (%d from the cache) in %s\n",
		len(res.References), res.Dir, cached, time.Since(start).Round(time.Millisecond))
	return nil
}

// logFailures logs each failed reference's own error at debug level: the
// message shown says what to do, the log keeps what the library said.
func (a *app) logFailures(e *assemble.Error) {
	for _, f := range e.Failures {
		a.log.Debug("reference failed", "name", f.Name, "image", f.Image, "class", f.Class, "error", f.Err)
	}
}
