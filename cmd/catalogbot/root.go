package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
)

// app is what every command shares: where output goes, the logger and the
// library entry points, which tests replace.
type app struct {
	stdout, stderr io.Writer
	version        string
	log            *slog.Logger
	level          slog.Level
	validate       func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error)
	// resolver looks registry hosts up for the egress rule of pull
	// request checks; nil is the system's. Tests map names to loopback.
	resolver egress.Resolver
}

// userAgent is what every registry request of catalogbot says it comes
// from: the product and its version, so a registry's logs tell releases
// apart.
func (a *app) userAgent() string { return "catalogbot/" + a.version }

func newRootCmd(a *app) *cobra.Command {
	logLevel := "info"
	cmd := &cobra.Command{
		Use:   "catalogbot",
		Short: "Keep an OLM File-Based Catalog repository healthy",
		Long: `catalogbot maintains OLM File-Based Catalog (FBC) repositories the GitOps
way. For each pull request it checks, from the trusted base commit, who may
approve what (OWNERS or ci.yaml), validates every catalog exactly as opm
validate would but reports every problem at once with its file and line,
verifies the image references and guards released upgrade paths; then it
merges the pull request pinned to the commit it checked and publishes each
catalog's image, reproducibly and without a container daemon.

The same review core runs as a GitHub App (serve), as a GitHub Action step
(check, publish) and from the command line; rebuild is the scheduled job.`,
		Version: a.version,
		// Errors are printed once, by main, with the exit status that
		// goes with them; cobra's own printing would repeat them.
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageErrorf(cmd.CommandPath(), "invalid --log-level %q: want debug, info, warn or error%s", logLevel,
					checks.DidYouMean(logLevel, []string{"debug", "info", "warn", "error"}))
			}
			// Logs go to stderr so stdout carries only the requested
			// output, which scripts parse.
			a.level = level
			a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
			a.sweepTemp()
			return nil
		},
	}
	cmd.SetVersionTemplate(versionLine(a.version))
	cmd.SetOut(a.stdout)
	cmd.SetErr(a.stderr)
	cmd.PersistentFlags().StringVar(&logLevel, "log-level", logLevel, "log level: debug, info, warn or error")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{cmd: c.CommandPath(), err: err}
	})
	cmd.AddCommand(newValidateCmd(a))
	cmd.AddCommand(newGraphCmd(a))
	cmd.AddCommand(newCheckCmd(a))
	cmd.AddCommand(newBacktestCmd(a))
	cmd.AddCommand(newPolicyCmd(a))
	cmd.AddCommand(newRebuildCmd(a))
	cmd.AddCommand(newOwnersCmd(a))
	cmd.AddCommand(newPublishCmd(a))
	cmd.AddCommand(newVerifyCmd(a))
	cmd.AddCommand(newAssembleCmd(a))
	cmd.AddCommand(newRenderCmd(a))
	cmd.AddCommand(newRenderTemplateCmd(a))
	cmd.AddCommand(newGenerateCmd(a))
	cmd.AddCommand(newImagesCmd(a))
	cmd.AddCommand(newServeCmd(a))
	cmd.AddCommand(newVersionCmd(a))
	return cmd
}

// unknownSubcommand is the usage error of a command that has
// subcommands, called with another word: it names the subcommands the
// word is a typo of, as cobra does for the root's.
func unknownSubcommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		// Cobra's default, which it sets on the root alone.
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return usageErrorf(cmd.CommandPath(), "%s", msg)
}
