package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
)

func newGraphCmd(a *app) *cobra.Command {
	var opts graph.Options
	cmd := &cobra.Command{
		Use:   "graph DIR",
		Short: "Draw the upgrade graphs of a catalog's channels as Mermaid",
		Long: `Print the upgrade graph of every channel of the File-Based Catalog rooted at
DIR as one Mermaid flowchart, each channel in a subgraph: bundles labelled
by version, edges for replaces, skips and skipRange as opm reads them,
deprecated bundles styled and heads in bold. It is the drawing a pull
request's status comment shows, of whole channels.

Exit status: 0 drawn, 2 usage or I/O error, or a catalog that does not
load (catalogbot validate says why).`,
		Example: `  catalogbot graph catalog --package etcd
  catalogbot graph catalog --package etcd --channel stable > stable.mmd`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "graph takes exactly one catalog directory, got %d arguments", len(args))
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
			cat, err := fbc.LoadPlaced(cmd.Context(), os.DirFS(dir))
			if err != nil {
				return err
			}
			if len(cat.Unread) > 0 {
				at := cat.Unread[0]
				// The file's name is the catalog's, and may hold
				// anything a terminal obeys.
				return fmt.Errorf("%s:%d: does not load; catalogbot validate %s says why",
					checks.VisibleLine(dir+"/"+at.File), at.Line, checks.VisibleLine(dir))
			}
			opts.MaxNodes = -1
			return graph.Mermaid(a.stdout, &cat.Config, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Package, "package", "", "draw only the channels of this package")
	cmd.Flags().StringVar(&opts.Channel, "channel", "", "draw only the channels of this name")
	return cmd
}
