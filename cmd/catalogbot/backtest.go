package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/policy/review/replay"
)

// backtestFlags are the command line of backtest.
type backtestFlags struct {
	repo, head, since string
	last              int
	policies          []string
	format            checks.Format
	// The registry flags are check's, with images and rendering off.
	registry checkFlags
	// fetchMissing lets reads of a partial clone fetch what it left out.
	fetchMissing bool
}

func newBacktestCmd(a *app) *cobra.Command {
	f := backtestFlags{repo: ".", format: checks.FormatText}
	cmd := &cobra.Command{
		Use:   "backtest [--repo DIR] [--last N | --since REV] [--policy FILE]... [-o text|json]",
		Short: "Replay a repository's history through the pull request checks",
		Long: `Replay the first-parent history of --repo through the checks of a pull
request: each commit that touched a catalog root is reviewed as a pull
request from its first parent, as the App and check review one, with no
author and no approvals. For each commit it prints every check's verdict,
what would block the merge and whose approval it needed; a summary counts
the verdicts and lists the commits whose content checks (all but owners)
failed.

The policy is each base commit's own, or --policy FILE. Given two
--policy files, it lists the commits whose verdict flips between them.

Offline by default: --images and --render turn the registry checks on.
A commit whose git objects are missing (a partial or shallow clone) is
reported unreadable, never invalid. Progress and an ETA go to stderr
when it is a terminal.

Output (-o): text, or json (documented in docs/backtest.md).

Exit status: 0 no content check failed and no verdict flipped, 1 some
did, 2 usage or I/O error.`,
		Example: `  catalogbot backtest --repo . --last 50 --policy .catalogbot.yaml
  catalogbot backtest --since v1.2.0 --policy old.yaml --policy new.yaml -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "backtest takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runBacktest(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", f.repo, "the git repository (a work tree or a bare repository)")
	fl.StringVar(&f.head, "head", "HEAD", "where the first-parent walk starts")
	fl.IntVar(&f.last, "last", 0, fmt.Sprintf("replay at most the last N commits that touched a catalog root (default %d without --since)", replay.DefaultLast))
	fl.StringVar(&f.since, "since", "", "replay the commits after REV on the first-parent history")
	fl.StringArrayVar(&f.policies, "policy", nil, "review under this policy file instead of each base commit's; twice to compare two")
	fl.VarP(ownersFormats.Value(&f.format), "output", "o", "output format: text or json")
	fl.BoolVar(&f.registry.images, "images", false, "verify the image references each commit adds or changes against their registries")
	fl.BoolVar(&f.registry.render, "render", false, "render the reference list entries each commit adds or changes")
	fl.StringArrayVar(&f.registry.insecure, "insecure-registry", nil, "reach this registry HOST[:PORT] over plain HTTP or unverified TLS (repeatable)")
	fl.StringArrayVar(&f.registry.allowPrivate, "allow-private-registry", nil, "let the checks reach this registry HOST[:PORT] although it resolves to an internal address (repeatable)")
	fl.BoolVar(&f.registry.registryCredentials, "registry-credentials", false, "read private images with the docker config.json keychain (default: anonymous)")
	fl.BoolVar(&f.fetchMissing, "fetch-missing", true, "in a partial clone, fetch the git objects a review reads and the clone left out from its promisor remote, with git (bounded; the remote's address passes the rule of --allow-private-registry)")
	addCacheDirFlag(fl, &f.registry.cacheDir)
	return cmd
}

func (a *app) runBacktest(ctx context.Context, cmdPath string, f backtestFlags) error {
	if f.last < 0 {
		return usageErrorf(cmdPath, "--last must not be negative")
	}
	if err := a.fetchMissing(f.fetchMissing, f.registry.allowPrivate); err != nil {
		return usageErrorf(cmdPath, "invalid --allow-private-registry: %v", err)
	}
	if len(f.policies) > 2 {
		return usageErrorf(cmdPath, "--policy is given at most twice, to compare two policies")
	}
	o := replay.Options{Head: f.head, Last: f.last, Since: f.since}
	for _, p := range f.policies {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		o.Policies = append(o.Policies, replay.Policy{Name: p, Data: data})
	}
	// The same registry setup as check's, so that --images and --render
	// reach registries exactly as a pull request check does.
	var pr review.PR
	err := a.checkRegistries(cmdPath, f.registry, &pr)
	if err != nil {
		return err
	}
	o.ImageOptions, o.Renderer = pr.ImageOptions, pr.Renderer
	if o.Index, err = openIndex(f.registry.cacheDir); err != nil {
		return err
	}
	if isTerminal(a.stderr) {
		o.Progress = progressLine(a.stderr)
	}
	rep, err := replay.Run(ctx, f.repo, o)
	var pe *replay.PolicyError
	if errors.As(err, &pe) {
		return usageErrorf(cmdPath, "%v", err)
	}
	if err != nil {
		return err
	}
	if f.format == checks.FormatJSON {
		err = checks.WriteJSON(a.stdout, rep)
	} else {
		err = rep.WriteText(a.stdout)
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		return errInvalid
	}
	return nil
}

// isTerminal says whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressLine redraws one line on w with how far the backtest has got,
// and clears it when done.
func progressLine(w io.Writer) func(replay.Progress) {
	return func(p replay.Progress) {
		if p.Done == p.Total {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		eta := "--"
		if p.Done > 0 {
			eta = p.ETA().Round(time.Second).String()
		}
		fmt.Fprintf(w, "\r\033[Kbacktest: %d/%d commits, %s elapsed, ETA %s", p.Done, p.Total, p.Elapsed.Round(time.Second), eta)
	}
}
