package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
)

func newOwnersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "owners",
		Short: "Explain OWNERS files and compute the approval state of a change",
		// Without this, cobra prints help for a mistyped subcommand and
		// exits 0, which would pass a CI step that checked nothing.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newOwnersExplainCmd(a), newOwnersCheckCmd(a))
	return cmd
}

// ownersFormats are the output formats of the owners commands.
var ownersFormats = checks.Formats{checks.FormatText, checks.FormatJSON}

func newOwnersExplainCmd(a *app) *cobra.Command {
	repo, rev := ".", ""
	format := checks.FormatText
	src := sourcesFlags{roots: []string{"catalog"}}
	cmd := &cobra.Command{
		Use:   "explain [--repo DIR] [--rev REV] PATH...",
		Short: "Say who may approve changes to each path, and why",
		Long: `Explain, for each PATH, who may approve a change to it: the approvers
collected from its directory up to the root, the OWNERS file closest to it
that names approvers, why the walk up the tree stopped (the root, or an
OWNERS file with no_parent_owners), and every OWNERS file consulted.

PATH is relative to the repository root and need not exist. A directory
(an existing one, or a PATH ending in /) is explained as its OWNERS file.

Without --rev the files are read from the directory --repo as they are on
disk; with --rev from that commit of the git repository at --repo.

Where approvers come from is read from the repository's policy
(.catalogbot.yaml in the same tree), as check reads it: its owners.sources,
its catalogs and its conventions (operator-pipelines' maintainers).
--source and --catalog-root, when given, take the place of the policy's.
With --source ci.yaml, the reviewers of operators/<package>/ci.yaml approve
operators/<package>/ and <root>/<package>/ under every catalog root; the
explanation names the ci.yaml and its reviewers. Give --source owners as
well to read both.

Output formats (-o):
  text  a block of lines per path, then any problems with the OWNERS files
  json  {"paths": [{"path", "approvers", "approverOwnersFile", "reason",
        ...}], "findings": [...]}

Exit status: 0 explained, 1 an OWNERS or OWNERS_ALIASES file does not
parse (the paths it governs cannot be approved), 2 usage or I/O error.`,
		Example: `  catalogbot owners explain operators/etcd/catalog.yaml
  catalogbot owners explain --repo . --rev origin/main -o json operators/etcd/
  catalogbot owners explain --source owners --source ci.yaml --catalog-root catalogs/v4.18 catalogs/v4.18/etcd/catalog.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd.CommandPath(), "owners explain needs at least one PATH")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := src.loadOptions(cmd.CommandPath())
			if err != nil {
				return err
			}
			fromPolicy := !cmd.Flags().Changed("source") && !cmd.Flags().Changed("catalog-root")
			return a.runOwnersExplain(cmd.CommandPath(), repo, rev, args, format, opts, fromPolicy)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&repo, "repo", repo, "the repository: a directory, or with --rev a git repository")
	fl.StringVar(&rev, "rev", "", "read the tree of this commit (branch, tag, commit id) instead of the files on disk")
	fl.VarP(ownersFormats.Value(&format), "output", "o", "output format: text or json")
	src.register(cmd)
	return cmd
}

// sourcesFlags are where approvers come from, as the policy's
// owners.sources and catalog.roots say.
type sourcesFlags struct {
	sources, roots []string
}

func (f *sourcesFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sources, "source", nil, "where approvers come from: owners (OWNERS files) or ci.yaml (operators/<package>/ci.yaml reviewers); repeatable, default owners")
	fl.StringArrayVar(&f.roots, "catalog-root", f.roots, "a directory holding a File-Based Catalog, one package per directory below it (repeatable)")
}

func (f *sourcesFlags) loadOptions(cmdPath string) (owners.LoadOptions, error) {
	for _, s := range f.sources {
		if s != owners.SourceOwners && s != owners.SourceCIYAML {
			return owners.LoadOptions{}, usageErrorf(cmdPath, "invalid --source %q: want %s or %s%s", s, owners.SourceOwners, owners.SourceCIYAML,
				checks.DidYouMean(s, []string{owners.SourceOwners, owners.SourceCIYAML}))
		}
	}
	roots := make([]string, len(f.roots))
	for i, r := range f.roots {
		// As the policy writes roots: slash-separated, no trailing slash.
		roots[i] = path.Clean(strings.ReplaceAll(r, `\`, "/"))
	}
	return owners.LoadOptions{Sources: f.sources, CatalogRoots: roots}, nil
}

// policyLoadOptions reads where approvers come from out of the tree's
// policy, resolved as the review core resolves it: the sources, every
// catalog root, the maintainers. An invalid policy explains nothing, as it
// checks nothing.
func (a *app) policyLoadOptions(dir string, fsys fs.FS) (owners.LoadOptions, error) {
	pol, err := a.loadRepoPolicy(dir, fsys, "nothing explained")
	if err != nil {
		return owners.LoadOptions{}, err
	}
	if pol, _, err = pol.Resolved(fsys); err != nil {
		fmt.Fprintln(a.stderr, policyError(dir, err))
		return owners.LoadOptions{}, errInvalid
	}
	return owners.LoadOptions{Sources: pol.Owners.Sources, CatalogRoots: pol.Catalog.Roots, Maintainers: pol.Owners.Maintainers, Operators: pol.Operators}, nil
}

// loadRepoPolicy reads the policy of the repository dir from its tree,
// printing every problem of an invalid one with its file and line and what
// that stopped (errInvalid).
func (a *app) loadRepoPolicy(dir string, tree fs.FS, stopped string) (*policy.Policy, error) {
	pol, findings, err := policy.Load(tree)
	if err != nil {
		return nil, err
	}
	if len(findings) > 0 {
		for _, fd := range findings {
			fmt.Fprintf(a.stderr, "%s:%d: %s [%s]\n", filepath.Join(dir, fd.File), fd.Line, fd.Message, fd.Rule)
		}
		fmt.Fprintf(a.stderr, "catalogbot: the policy of %s is invalid; %s\n", dir, stopped)
		return nil, errInvalid
	}
	return pol, nil
}

// explained is one path of owners explain -o json.
type explained struct {
	*owners.Resolution
	Why string `json:"why"`
}

func (a *app) runOwnersExplain(cmdPath, dir, rev string, args []string, format checks.Format, opts owners.LoadOptions, fromPolicy bool) error {
	type target struct {
		path  string // as given, for the output
		clean string
		dir   bool
	}
	var targets []target
	for _, arg := range args {
		if arg == "." || arg == "./" || arg == "/" {
			targets = append(targets, target{path: arg, clean: ".", dir: true})
			continue
		}
		clean, err := owners.CleanPath(arg)
		if err != nil {
			return usageErrorf(cmdPath, "%v", err)
		}
		targets = append(targets, target{path: arg, clean: clean, dir: strings.HasSuffix(arg, "/")})
	}

	fsys, err := openTree(dir, rev)
	if err != nil {
		return err
	}
	if fromPolicy {
		if opts, err = a.policyLoadOptions(dir, fsys); err != nil {
			return err
		}
	}
	start := time.Now()
	repo, err := owners.Load(fsys, opts)
	if err != nil {
		return err
	}
	a.log.Debug("loaded OWNERS", "repo", dir, "rev", rev, "files", len(repo.Files()), "findings", len(repo.Findings()), "took", time.Since(start))

	var out []explained
	for _, t := range targets {
		if !t.dir {
			if info, err := fs.Stat(fsys, t.clean); err == nil && info.IsDir() {
				t.dir = true
			}
		}
		var res *owners.Resolution
		if t.dir {
			res = repo.ResolveDir(t.clean)
		} else {
			res = repo.Resolve(t.clean)
		}
		res.Path = t.path
		out = append(out, explained{Resolution: res, Why: res.Why()})
	}

	findings := repo.Findings()
	if format == checks.FormatJSON {
		doc := struct {
			Paths    []explained      `json:"paths"`
			Findings []checks.Finding `json:"findings"`
		}{out, findings}
		if doc.Findings == nil {
			doc.Findings = []checks.Finding{}
		}
		if err := checks.WriteJSON(a.stdout, doc); err != nil {
			return err
		}
	} else {
		var b strings.Builder
		for i, e := range out {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(e.Explain())
		}
		if len(findings) > 0 {
			b.WriteString("\n")
		}
		// Paths are the repository's: what a terminal would obey
		// rather than show is spelled out, as in every text output.
		if _, err := fmt.Fprint(a.stdout, checks.Visible(b.String())); err != nil {
			return err
		}
		if err := checks.WriteText(a.stdout, findings, ""); err != nil {
			return err
		}
	}
	if checks.HasErrors(findings) {
		return errInvalid
	}
	return nil
}

// openTree returns the tree to read OWNERS from: the directory itself, or
// the tree of commit rev of the git repository there. A bare repository
// has no files but its commits': without rev its HEAD is read.
func openTree(dir, rev string) (fs.FS, error) {
	rev = treeRev(dir, rev)
	if rev == "" {
		// Stat first: os.DirFS does not fail on a missing directory, and
		// a tree that is not there must not pass as one without owners.
		info, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("%q is not a directory", dir)
		}
		return os.DirFS(dir), nil
	}
	repo, err := change.Open(dir)
	if err != nil {
		return nil, err
	}
	return change.TreeFS(repo, rev)
}

// treeRev is the commit openTree reads of dir: rev, or HEAD for a bare
// repository when rev is empty; "" reads the directory as it is.
func treeRev(dir, rev string) string {
	if rev == "" && change.Bare(dir) {
		return "HEAD"
	}
	return rev
}

// ownersCheckFlags are the command line of owners check.
type ownersCheckFlags struct {
	repo, base, head, author string
	number                   int
	approve                  []string
	noSelfApproval, sticky   bool
	bots                     []string
	referenceList            string
	sourcesFlags
	format checks.Format
	// set records which flags were given: those take the place of the
	// policy's values.
	set map[string]bool
}

func newOwnersCheckCmd(a *app) *cobra.Command {
	f := ownersCheckFlags{repo: ".", format: checks.FormatText, sourcesFlags: sourcesFlags{roots: []string{"catalog"}}}
	cmd := &cobra.Command{
		Use:   "check --base REV --head REV --author LOGIN [--approve LOGIN[@REV]]...",
		Short: "Compute the approval state of a change between two commits",
		Long: `Compute whether the change from --base to --head in the git repository
--repo is approved, as the pull request check would: the owners check of
catalogbot check, on the policy (.catalogbot.yaml) of --base, with the same
verdict. --source, --catalog-root, --reference-list, --no-self-approval and
--sticky-approvals, when given, take the place of the policy's values.

The changed files are those between the merge base of the two commits and
--head, with renames detected; a renamed file needs the approvers of both
its old and its new path. OWNERS and OWNERS_ALIASES are read from --base
only: an OWNERS edit inside the change grants nothing until it merges.

Each --approve LOGIN[@REV] is one approval, in the order given. It covers
the commit REV (a commit id, branch or tag), or --head when REV is left
out; unless --sticky-approvals is set, only approvals of --head count. The
author approves the files they own unless --no-self-approval is set.

Entries of the catalog.yaml reference list (the policy's, catalog.yaml at
the root, or the file given with --reference-list) are owned one by one,
as <catalog name>/<entry>/index.yaml beside the list.

Catalog content is owned by package as well: every blob under a catalog
root (the policy's catalogs) that the change adds, removes or changes
needs the approvers of its package's directory, <root>/<package>/,
wherever the blob sits. Under the directories layout (conventions:
operator-pipelines) a package is owned by its name in every catalog: it
needs its operator's approvers too, and the maintainers when a directory
of another name holds it for the first time; a catalog the change adds or
removes needs the maintainers (root approvers).

With ci.yaml among the sources (the policy's owners.sources, or --source
ci.yaml), the reviewers of operators/<package>/ci.yaml, read from --base,
approve operators/<package>/ and <root>/<package>/ under every catalog
root. Give --source owners as well to read both; either source's
approvers approve.

Output formats (-o):
  text  the verdict, each required OWNERS file with its paths and who
        approved them, what did not count and why, whom to ask
  json  {"approved": true|false, "reason", "files", "required",
        "unapproved", "suggested", "approvers", "notCounted", "findings",
        "packages", ...}

Exit status: 0 approved, 1 not approved or the policy invalid, 2 usage or
I/O error.`,
		Example: `  catalogbot owners check --base origin/main --head HEAD --author alice
  catalogbot owners check --repo . --base main --head pr-42 --author alice --approve bob --approve carol@3f2c1e0 -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "owners check takes no arguments, got %q", args)
			}
			for _, req := range []struct{ name, value string }{{"--base", f.base}, {"--head", f.head}, {"--author", f.author}} {
				if req.value == "" {
					return usageErrorf(cmd.CommandPath(), "owners check needs %s", req.name)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.set = map[string]bool{}
			for _, name := range []string{"source", "catalog-root"} {
				f.set[name] = cmd.Flags().Changed(name)
			}
			return a.runOwnersCheck(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", f.repo, "the git repository (a work tree or a bare repository)")
	fl.StringVar(&f.base, "base", "", "the base commit: where OWNERS is read from, and what the change is compared with")
	fl.StringVar(&f.head, "head", "", "the head commit of the change")
	fl.StringVar(&f.author, "author", "", "the login of the change's author")
	fl.IntVar(&f.number, "number", 0, "the pull request number; it seeds the order of suggested approvers")
	fl.StringArrayVar(&f.approve, "approve", nil, "an approval, LOGIN or LOGIN@REV (repeatable)")
	fl.BoolVar(&f.noSelfApproval, "no-self-approval", false, "do not count the author as an approver of their own change")
	fl.BoolVar(&f.sticky, "sticky-approvals", false, "let approvals of earlier commits count")
	fl.StringArrayVar(&f.bots, "bot", nil, "a login whose approvals never count, besides every [bot] login (repeatable)")
	fl.StringVar(&f.referenceList, "reference-list", "", "the catalog.yaml reference list, relative to the root, in place of the policy's (default: the policy's, or catalog.yaml when it exists)")
	f.sourcesFlags.register(cmd)
	fl.VarP(ownersFormats.Value(&f.format), "output", "o", "output format: text or json")
	return cmd
}

// approvalEpoch dates the approvals of the command line; only their order
// matters.
var approvalEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// parseApprovals turns --approve LOGIN[@REV] flags into approvals, in the
// order given. An approval without REV is of headSHA.
func parseApprovals(cmdPath, repoDir, headSHA string, specs []string) ([]owners.Approval, error) {
	var gitRepo *git.Repository
	var approvals []owners.Approval
	for i, spec := range specs {
		login, rev, _ := strings.Cut(strings.TrimPrefix(spec, "@"), "@")
		if owners.NormLogin(login) == "" {
			return nil, usageErrorf(cmdPath, "invalid --approve %q: want LOGIN or LOGIN@REV", spec)
		}
		sha := headSHA
		if rev != "" {
			if gitRepo == nil {
				var err error
				if gitRepo, err = change.Open(repoDir); err != nil {
					return nil, err
				}
			}
			var err error
			if sha, err = change.Resolve(gitRepo, rev); err != nil {
				return nil, usageErrorf(cmdPath, "invalid --approve %q: %v", spec, err)
			}
		}
		approvals = append(approvals, owners.Approval{User: login, SHA: sha, Time: approvalEpoch.Add(time.Duration(i) * time.Second), Via: "command line"})
	}
	return approvals, nil
}

func (a *app) runOwnersCheck(ctx context.Context, cmdPath string, f ownersCheckFlags) error {
	c, baseFS, headFS, err := change.FromGit(f.repo, f.base, f.head)
	if err != nil {
		return err
	}
	c.Author = f.author
	c.Number = f.number

	approvals, err := parseApprovals(cmdPath, f.repo, c.HeadSHA, f.approve)
	if err != nil {
		return err
	}
	opts, err := f.loadOptions(cmdPath)
	if err != nil {
		return err
	}
	// The policy of --base decides, as it does for check; the flags a
	// user gave take the place of its values.
	ov := &review.Overrides{NoSelfApproval: f.noSelfApproval, StickyApprovals: f.sticky}
	if f.set["source"] {
		ov.Sources = opts.Sources
	}
	if f.set["catalog-root"] {
		ov.Roots = opts.CatalogRoots
	}
	ov.ReferenceList = f.referenceList
	start := time.Now()
	out, err := review.EvaluateOwners(ctx, &review.PR{Change: c, Base: baseFS, Head: headFS, Approvals: approvals, Bots: f.bots, Overrides: ov})
	if err != nil {
		return err
	}
	if !out.Valid() {
		for _, fd := range out.PolicyFindings {
			fmt.Fprintf(a.stderr, "%s:%d: %s [%s]\n", fd.File, fd.Line, fd.Message, fd.Rule)
		}
		fmt.Fprintf(a.stderr, "catalogbot: the policy at %s is invalid; no approval judged\n", f.base)
		return errInvalid
	}
	st := out.Owners
	a.log.Debug("evaluated approvals", "base", c.BaseSHA, "head", c.HeadSHA, "files", len(c.Files),
		"approved", st.Approved, "took", time.Since(start))

	if f.format == checks.FormatJSON {
		doc := struct {
			*owners.State
			BaseSHA string        `json:"baseSHA"`
			Changed []change.File `json:"changed"`
		}{st, c.BaseSHA, c.Files}
		if doc.Changed == nil {
			doc.Changed = []change.File{}
		}
		if err := checks.WriteJSON(a.stdout, doc); err != nil {
			return err
		}
	} else {
		if _, err := fmt.Fprint(a.stdout, checks.Visible(st.Explain())); err != nil {
			return err
		}
		if len(st.Findings) > 0 {
			fmt.Fprintln(a.stdout)
			if err := checks.WriteText(a.stdout, st.Findings, ""); err != nil {
				return err
			}
		}
	}
	if !st.Approved {
		return errInvalid
	}
	return nil
}
