package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/olmv1"
)

func newV1ReportCmd(a *app) *cobra.Command {
	output := "text"
	cmd := &cobra.Command{
		Use:   "v1-report DIR",
		Short: "Report which packages of a catalog OLM v1 installs, and where its upgrades differ from OLM v0",
		Long: `Report, for every package of the File-Based Catalog rooted at DIR, whether
OLM v1 (operator-controller) installs the bundle it picks by default (the
highest semver among the package's channel entries), the V rules that bundle
breaks if not, and how many upgrades OLM v1 takes differently from OLM v0,
then the counts for the whole catalog. docs/rules.md describes the rules.

Exit status: 0 reported, whatever the report says; 2 usage or I/O error, or
a catalog that does not load (each file and line that does not is named).`,
		Example: `  catalogbot v1-report catalogs/v4.18
  catalogbot v1-report catalogs/v4.18 -o markdown >> "$GITHUB_STEP_SUMMARY"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "v1-report takes exactly one catalog directory, got %d arguments", len(args))
			}
			if !slices.Contains(olmv1.Formats, output) {
				return usageErrorf(cmd.CommandPath(), "invalid --output value %q: want %s", output, strings.Join(olmv1.Formats, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			info, err := os.Stat(dir)
			if err != nil {
				return err
			}
			if !info.IsDir() {
				return fmt.Errorf("%q is not a directory", dir)
			}
			cat, err := fbc.LoadPlacedWhole(cmd.Context(), os.DirFS(dir))
			if err != nil {
				return err
			}
			if len(cat.Unread) > 0 {
				return unreadError(cmd, dir, cat.Unread)
			}
			return olmv1.Write(a.stdout, olmv1.Check(cat, olmv1.Options{}), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", output, "output format: "+strings.Join(olmv1.Formats, ", "))
	return cmd
}

// unreadError names every file and line of dir that does not load, with
// the loader's reason: the report would otherwise leave their packages
// out without a word.
func unreadError(cmd *cobra.Command, dir string, unread []fbc.Place) error {
	var lines []string
	if res, err := fbc.Validate(cmd.Context(), os.DirFS(dir), fbc.Options{}); err == nil {
		for _, f := range res.Findings {
			if strings.HasPrefix(f.Rule, "L") && f.Severity == checks.SeverityError {
				lines = append(lines, fmt.Sprintf("%s/%s:%d: %s (%s)", dir, f.File, f.Line, checks.VisibleLine(f.Message), f.Rule))
			}
		}
	}
	if len(lines) == 0 {
		for _, at := range unread {
			lines = append(lines, fmt.Sprintf("%s/%s:%d: does not load", dir, at.File, at.Line))
		}
	}
	return fmt.Errorf("%s\n%s", checks.Count(len(unread), "file or blob of the catalog does not load", "files or blobs of the catalog do not load"), strings.Join(lines, "\n"))
}
