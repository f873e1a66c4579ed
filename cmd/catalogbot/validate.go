package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbcreport"
)

func newValidateCmd(a *app) *cobra.Command {
	format := checks.FormatText
	cmd := &cobra.Command{
		Use:   "validate DIR",
		Short: "Validate a File-Based Catalog directory as opm validate would",
		Long: `Validate the File-Based Catalog rooted at DIR with the same verdict as
opm validate, reporting every independent problem with its file and line.

Output formats (-o):
  text   one line per finding, then a summary (default)
  json   a JSON document with the verdict, counts and findings
  sarif  SARIF 2.1.0 for code scanning; artifact URIs are DIR/<file>
         relative to the working directory, so run it from the
         repository root
  opm    the exact message opm validate -o json would report, or nothing
         when the catalog is valid

Exit status: 0 valid, 1 invalid, 2 usage or I/O error.`,
		Example: `  catalogbot validate catalog
  catalogbot validate catalog -o sarif > catalogbot.sarif`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "validate takes exactly one catalog directory, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runValidate(cmd.Context(), args[0], format)
		},
	}
	cmd.Flags().VarP(fbcreport.Formats.Value(&format), "output", "o", "output format: text, json, sarif or opm")
	return cmd
}

func (a *app) runValidate(ctx context.Context, dir string, format checks.Format) error {
	// Stat first: os.DirFS does not fail on a missing directory, and a
	// catalog that is not there must not pass as an empty, valid one.
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%q is not a directory", dir)
	}
	start := time.Now()
	res, err := a.validate(ctx, os.DirFS(dir), fbc.Options{})
	if err != nil {
		return fmt.Errorf("validate %s: %w", dir, err)
	}
	a.log.Debug("validated", "dir", dir, "valid", res.Valid(), "findings", len(res.Findings),
		"files", res.Stats.Files, "bytes", res.Stats.Bytes, "took", time.Since(start))

	opts := fbcreport.Options{Version: a.version}
	if format == checks.FormatSARIF {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		opts.BaseURI = fbcreport.BaseURI(wd, dir)
	}
	if err := fbcreport.Write(a.stdout, format, res, opts); err != nil {
		return fmt.Errorf("write %s output: %w", format, err)
	}
	if !res.Valid() {
		return errInvalid
	}
	return nil
}
