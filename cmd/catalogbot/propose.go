package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/review"
)

// proposeFlags are the command line of propose.
type proposeFlags struct {
	repo, rev, branch, author string
	dryRun                    bool
	format                    checks.Format
	// The registry flags are check's, and mean the same.
	insecure, allowPrivate []string
	registryProxy          string
	registryCredentials    bool
}

// proposeFormats are the output formats of propose.
var proposeFormats = checks.Formats{checks.FormatText, checks.FormatJSON}

func newProposeCmd(a *app) *cobra.Command {
	f := proposeFlags{repo: ".", rev: "HEAD", format: checks.FormatText}
	cmd := &cobra.Command{
		Use:   "propose --branch NAME [--repo DIR] [--rev REV] [--dry-run]",
		Short: "Propose the new releases of the policy's watched bundle repositories on a branch",
		Long: `Propose the bundles released in the repositories that the policy's propose
list watches (docs/proposals.md). From the commit --rev of the git
repository --repo, for each watched repository: list its tags, keep those
that parse as semantic versions (a leading v allowed; pre-releases only
with prereleases: true) and are newer than the head of every channel named,
resolve each to its digest, render the bundle image pinned by digest as
opm render does, and place it: the olm.bundle blob in a new file in the
package's directory, and an entry in each channel that replaces the head
(graph: replaces), or that also skips every version from the head's up
(graph: skipRange). Several new versions are chained in version order.

Each package becomes one commit on the branch --branch, created from --rev
in the repository's object store; the work tree is not touched. Each
commit is judged first by the checks of catalogbot check, from --rev to
the commit, with --author as the pull request's author: a proposal that
fails any check but owners (which waits for the package's approvers, as
for any pull request), or that a check could not judge, is not written,
and the output gives the findings. --dry-run renders and prints the plan,
writes nothing and runs no check.

Registries are reached as check reaches them: anonymously unless
--registry-credentials, never at internal addresses unless
--allow-private-registry allows one, over plain HTTP only for
--insecure-registry hosts.

Output (-o): text, the commit message and pull request body of each
package; json ([{"package", "version", "image", "digest", "tag",
"catalogs", "channels", "branch", "commit", "message", "body", "refused",
"findings"}]).

Exit status: 0 when every proposal was written (or there was nothing to
propose), 1 when the check refused one or a package could not be looked at
(its registry, its channels or a template; said on stderr), 2 on a usage
or I/O error.`,
		Example: `  catalogbot propose --branch propose/releases
  catalogbot propose --repo . --rev origin/main --dry-run -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.branch == "" && !f.dryRun {
				return usageErrorf(cmd.CommandPath(), "propose needs --branch, or --dry-run")
			}
			return a.runPropose(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", f.repo, "the git repository (a work tree or a bare repository)")
	fl.StringVar(&f.rev, "rev", f.rev, "the commit to propose on: where the policy is read and the branch starts")
	fl.StringVar(&f.branch, "branch", "", "the branch to create with one commit per package")
	fl.StringVar(&f.author, "author", "", "the login the check judges the proposal as (default: the policy's first owners.bots, else catalogbot)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan; write nothing and run no check")
	addRegistryFlags(fl, "propose and its check", &f.insecure, &f.allowPrivate, &f.registryProxy, &f.registryCredentials)
	fl.VarP(proposeFormats.Value(&f.format), "output", "o", "output format: text or json")
	return cmd
}

func (a *app) runPropose(ctx context.Context, cmdPath string, f proposeFlags) error {
	// The registries are reached with check's options, built by check's
	// own helper, so that the check that judges a proposal and the
	// listing that found it pass the same egress rule.
	var pr review.PR
	cf := checkFlags{images: true, render: true, insecure: f.insecure, allowPrivate: f.allowPrivate,
		registryProxy: f.registryProxy, registryCredentials: f.registryCredentials}
	if err := a.checkRegistries(cmdPath, cf, &pr); err != nil {
		return err
	}
	res, err := propose.Run(ctx, propose.Options{
		Repo: f.repo, Rev: f.rev, Branch: f.branch, DryRun: f.dryRun, Author: f.author,
		Registry: propose.Registry{Keychain: pr.ImageOptions.Keychain, Insecure: f.insecure, Egress: pr.ImageOptions.Egress},
		Images:   pr.ImageOptions,
		Renderer: pr.Renderer,
	})
	if err != nil {
		return err
	}
	if f.format == checks.FormatJSON {
		rows := res.Added
		if rows == nil {
			rows = []propose.Added{}
		}
		if err := checks.WriteJSON(a.stdout, rows); err != nil {
			return err
		}
	} else if err := writeProposals(a, res, f.dryRun); err != nil {
		return err
	}
	for _, p := range res.Problems {
		fmt.Fprintf(a.stderr, "propose: %s\n", p)
	}
	if len(res.Problems) > 0 {
		return errInvalid
	}
	for _, r := range res.Added {
		if r.Refused != "" {
			return errInvalid
		}
	}
	return nil
}

// writeProposals prints each package's proposal: its commit message and
// pull request body, then what became of it.
func writeProposals(a *app, res *propose.Result, dryRun bool) error {
	var b strings.Builder
	for i, r := range res.Added {
		if i > 0 && res.Added[i-1].Package == r.Package {
			continue
		}
		fmt.Fprintf(&b, "%s\n\n%s\n", r.Message, r.Body)
		switch {
		case r.Refused != "":
			fmt.Fprintf(&b, "Refused: %s.\n", r.Refused)
			var sb strings.Builder
			if err := checks.WriteText(&sb, r.Findings, ""); err != nil {
				return err
			}
			b.WriteString(sb.String())
		case dryRun:
			b.WriteString("Dry run: not written, not checked.\n")
		default:
			fmt.Fprintf(&b, "Committed %s on %s.\n", change.ShortSHA(r.Commit), r.Branch)
		}
		b.WriteString("\n")
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	if len(res.Added) == 0 && len(res.Problems) == 0 {
		b.WriteString("Nothing new to propose.\n")
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}
