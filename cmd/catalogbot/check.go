package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
)

// checkFlags are the command line of check.
type checkFlags struct {
	repo, base, head, author string
	number                   int
	approve                  []string
	format                   checks.Format
	// images turns the images check on; allImages checks every reference
	// rather than those the change adds or changes.
	images, allImages bool
	// render renders the reference list when the change touches it.
	render   bool
	insecure []string
	// allowPrivate lists the registry hosts the egress rule lets the
	// checks reach although they resolve to internal addresses.
	allowPrivate []string
	// fetchMissing lets reads of a partial clone fetch what it left out.
	fetchMissing bool
	// registryProxy is the forward proxy the checks go through; a proxy
	// from the environment is refused for them.
	registryProxy string
	// registryCredentials uses the docker config.json keychain to read
	// private images; by default registries are asked anonymously.
	registryCredentials bool
	// set records which flags were given, so that values from a GitHub
	// Actions event only fill in what the command line left out.
	set map[string]bool
	// group is set by a merge_group event: the change is a merge queue's
	// group, judged on its content (review.EvaluateGroup).
	group bool
	// cacheDir is where the package index is kept (openIndex).
	cacheDir string
}

// checkFormats are the output formats of check.
var checkFormats = checks.Formats{checks.FormatText, checks.FormatJSON, checks.FormatSARIF, checks.FormatGitHub, checks.FormatMarkdown}

func newCheckCmd(a *app) *cobra.Command {
	f := checkFlags{repo: ".", images: true, render: true}
	var extra string
	cmd := &cobra.Command{
		Use:   "check --base REV --head REV [--author LOGIN] [--approve LOGIN[@REV]]...",
		Short: "Run every check of a pull request on a change between two commits",
		Long: `Run the checks of a pull request on the change from --base to --head in
the git repository --repo, and say whether it could merge. The policy
(.catalogbot.yaml) and OWNERS are read from --base only.

Checks:
  owners      every changed path approved by its owners: --author, and
              each --approve LOGIN[@REV], default REV --head
  fbc         the catalog is valid where the change can affect it; errors
              already on --base are warnings
  references  the catalog.yaml entries the change adds or changes render,
              from registries only, and the catalog the whole list
              assembles is valid; an entry's owners approve only the
              packages it held or that are its own; --render=false skips
  images      the images the change adds or changes exist and meet the
              policy; --all-images checks every one, --images=false none;
              registries are asked anonymously unless
              --registry-credentials
  templates   only when the policy maps templates (catalog.templates):
              each template and output the change touches agree
  release     the release guard: no bundle, channel entry or channel taken
              away from a base channel, no installed version stranded,
              unless the channel is prunable or a root approver approves

Registries, token realms and redirects named by the change are not
contacted when they resolve to loopback, private, link-local, unique-local
or unspecified addresses; --allow-private-registry HOST[:PORT] allows one
(repeatable). The checks reach registries directly, or through the
forward proxy named with --registry-proxy; a proxy named only by the
environment (HTTPS_PROXY) is refused, since it would resolve each target
again where the rule cannot see. Each reference has the policy's limits.referenceTimeout, and
a registry that runs out of it is not asked again in the same check.

The decision is the policy's, less what only the forge knows (merging
enabled, other tools' checks, a clean merge), which are taken as given.

Output (-o): text; json ({"baseSHA", "headSHA", "results": [{"name",
"conclusion", "summary", "findings", "waits"}], "policy", "hold",
"decision": {"merge", "method", "sha", "reasons", "blocks": [{"code",
"text"}], "recheck"}, "graphs":
[{"root", "package", "channel", "mermaid", "newChannel", "heads", "added",
"addedEdges", "removed", "removedEdges"}], "moreGraphs"}); sarif
(SARIF 2.1.0); github (annotations, the job summary in
$GITHUB_STEP_SUMMARY, and the outputs valid, approved, mergeable,
merge-enabled and merge-method in $GITHUB_OUTPUT).

The upgrade graphs of the channels a change alters are drawn in Mermaid in
the job summary and, as data, under "graphs" in -o json; the text output
sums each channel up and gives the catalogbot graph command that draws it.

A check that could not judge (a registry rate limited, timed out or could
not be reached, or a file it needed whose git object is missing from the
repository, as in a partial clone) concludes pending, with what it waits
for in "waits"; the change is not mergeable, and in -o github the output
valid is left unset.

Inside GitHub Actions (GITHUB_ACTIONS=true) the pull request event in
$GITHUB_EVENT_PATH supplies the defaults of --base, --head, --author,
--number and (from $GITHUB_WORKSPACE) --repo; its draft flag and hold label
count. With GITHUB_TOKEN, reviews and /approve, /hold comments count too,
each bound to the head it was given on. A merge_group event supplies
--base and --head from the merge queue's group (its base and its commit),
which is judged on its content alone: each of its pull requests had its
approvals judged at its own head before the queue took it.

` + exitCodesHelp(checkExitCodes, 76),
		Example: `  catalogbot check --base origin/main --head HEAD --author alice
  catalogbot check --repo . --base main --head pr-42 --author alice --approve bob -o json
  catalogbot check -o github   # in a pull_request workflow`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "check takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if extra != "" {
				if err := parseExtraArgs(cmd, extra); err != nil {
					return err
				}
			}
			f.set = map[string]bool{}
			for _, name := range []string{"repo", "base", "head", "author", "number", "output"} {
				f.set[name] = cmd.Flags().Changed(name)
			}
			if !f.set["output"] {
				f.format = checks.FormatText
				if os.Getenv("GITHUB_ACTIONS") == "true" {
					f.format = checks.FormatGitHub
				}
			}
			return a.runCheck(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", f.repo, "the git repository (a work tree or a bare repository)")
	fl.StringVar(&f.base, "base", "", "the base commit: where the policy and OWNERS are read from")
	fl.StringVar(&f.head, "head", "", "the head commit of the change")
	fl.StringVar(&f.author, "author", "", "the login of the change's author")
	fl.IntVar(&f.number, "number", 0, "the pull request number, whose reviews and comments are read with GITHUB_TOKEN in -o github")
	fl.StringArrayVar(&f.approve, "approve", nil, "an approval, LOGIN or LOGIN@REV (repeatable)")
	fl.BoolVar(&f.images, "images", f.images, "verify the image references the change adds or changes against their registries")
	fl.BoolVar(&f.allImages, "all-images", false, "verify every image reference of the catalog, not only the changed ones")
	fl.BoolVar(&f.render, "render", f.render, "render the reference list (its entries' packages, the catalog it assembles)")
	addRegistryFlags(fl, "the checks", &f.insecure, &f.allowPrivate, &f.registryProxy, &f.registryCredentials)
	fl.BoolVar(&f.fetchMissing, "fetch-missing", true, "in a partial clone, fetch the git objects a check reads and the clone left out from its promisor remote, with git (bounded; the remote's address passes the rule of --allow-private-registry)")
	addCacheDirFlag(fl, &f.cacheDir)
	fl.VarP(checkFormats.Value(&f.format), "output", "o", "output format: text, json, sarif, github or markdown, the job summary the Action writes (default: github inside GitHub Actions, text elsewhere)")
	// The GitHub Action hands its free-form "args" input over as one
	// argument (a container action's arguments are never split); this
	// flag splits it into the flags it holds.
	fl.StringVar(&extra, "extra-args", "", "more flags of check in one string, split into words as a shell would (for the GitHub Action)")
	if err := fl.MarkHidden("extra-args"); err != nil {
		panic(err)
	}
	return cmd
}

// addRegistryFlags defines how a command that reads registries for a
// change reaches them, the same for check and propose; who names what
// reaches them in the help.
func addRegistryFlags(fl *pflag.FlagSet, who string, insecure, allowPrivate *[]string, proxy *string, credentials *bool) {
	fl.StringArrayVar(insecure, "insecure-registry", nil, "reach this registry HOST[:PORT] over plain HTTP or unverified TLS (repeatable)")
	fl.StringArrayVar(allowPrivate, "allow-private-registry", nil, "let "+who+" reach this registry HOST[:PORT] although it resolves to a loopback, private or link-local address (repeatable)")
	fl.StringVar(proxy, "registry-proxy", "", "reach registries through this forward proxy `URL` (http://HOST[:PORT]); a proxy from the environment (HTTPS_PROXY) is not used")
	fl.BoolVar(credentials, "registry-credentials", false, "read private images with the docker config.json keychain (default: anonymous)")
}

// parseExtraArgs parses the flags held in the string extra as if they had
// been given on the command line after the others.
func parseExtraArgs(cmd *cobra.Command, extra string) error {
	words, err := ghapi.SplitWords(extra)
	if err != nil {
		return usageErrorf(cmd.CommandPath(), "invalid --extra-args: %v", err)
	}
	for _, w := range words {
		if w == "--extra-args" || strings.HasPrefix(w, "--extra-args=") {
			return usageErrorf(cmd.CommandPath(), "invalid --extra-args: it cannot hold --extra-args")
		}
	}
	if err := cmd.Flags().Parse(words); err != nil {
		return usageErrorf(cmd.CommandPath(), "invalid --extra-args: %v", err)
	}
	if rest := cmd.Flags().Args(); len(rest) > 0 {
		return usageErrorf(cmd.CommandPath(), "invalid --extra-args: check takes no arguments, got %q", rest)
	}
	return nil
}

func (a *app) runCheck(ctx context.Context, cmdPath string, f checkFlags) error {
	if err := a.fetchMissing(f.fetchMissing, f.allowPrivate); err != nil {
		return usageErrorf(cmdPath, "invalid --allow-private-registry: %v", err)
	}
	// Inside Actions the event supplies the change whatever the format,
	// so that -o sarif or -o json in a workflow check the same commits.
	var gh *ghapi.Actions
	if f.format == checks.FormatGitHub || os.Getenv("GITHUB_ACTIONS") == "true" {
		var err error
		if gh, err = ghapi.ReadActions(os.Getenv); err != nil {
			return err
		}
		if err := fillFromEvent(gh, &f); err != nil {
			return err
		}
	}
	for _, req := range []struct{ name, value string }{{"--base", f.base}, {"--head", f.head}} {
		if req.value == "" {
			if gh != nil {
				return usageErrorf(cmdPath, "check needs %s, or a pull request event in $GITHUB_EVENT_PATH", req.name)
			}
			return usageErrorf(cmdPath, "check needs %s", req.name)
		}
	}

	c, baseFS, headFS, err := change.FromGit(f.repo, f.base, f.head)
	if err != nil {
		return err
	}
	c.Author, c.Number = f.author, f.number
	if f.group && len(f.approve) > 0 {
		return usageErrorf(cmdPath, "--approve has nothing to approve in a merge group: its pull requests were approved each at its own head")
	}
	approvals, err := parseApprovals(cmdPath, f.repo, c.HeadSHA, f.approve)
	if err != nil {
		return err
	}
	// The verdict is on the tree the base will hold after the merge, as
	// the App's; git merge-tree writes its result's objects likewise. A
	// merge group's commit holds its base already: it is judged as it is.
	merged, how, err := mergeOnto(f.repo, f.base, c.BaseSHA, c.HeadSHA, headFS)
	if err != nil {
		return err
	}
	index, err := openIndex(f.cacheDir)
	if err != nil {
		return err
	}
	pr := &review.PR{Change: c, Base: baseFS, Head: merged, Merge: how, Approvals: approvals, AllImages: f.allImages, Index: index}
	if gh != nil && !f.group {
		if gh.PR != nil {
			pr.Draft, pr.Labels = gh.PR.Draft, gh.PR.Labels
		}
		ok, why := gh.CanReadEvents(c.Number)
		pr.NoEventsWhy = why
		if ok {
			if pr.Events, err = gh.Events(ctx, c.Number, c.HeadSHA); err != nil {
				return err
			}
			pr.EventsRead = true
		}
	}
	if err := a.checkRegistries(cmdPath, f, pr); err != nil {
		return err
	}
	evaluate := review.Evaluate
	if f.group {
		evaluate = func(ctx context.Context, pr *review.PR) (*review.Outcome, error) {
			return review.EvaluateGroup(ctx, &review.Group{Change: pr.Change, Base: pr.Base, Head: pr.Head,
				ImageOptions: pr.ImageOptions, AllImages: pr.AllImages, Renderer: pr.Renderer, Index: pr.Index})
		}
	}
	out, err := evaluate(ctx, pr)
	if err != nil {
		return err
	}
	d := out.Decide(review.Forge{Local: true})
	if err := a.writeCheck(f.format, out, d, gh, f.repo); err != nil {
		return err
	}
	if !d.Merge {
		return errInvalid
	}
	return nil
}

// mergeOnto merges head onto base in the repository at dir: the tree to
// judge, and how (review.Onto).
func mergeOnto(dir, baseRev, base, head string, headFS fs.FS) (fs.FS, *review.Merge, error) {
	repo, err := change.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	t, m, err := change.MergeTree(repo, base, head)
	if err != nil {
		return nil, nil, fmt.Errorf("merge %s onto %s: %w", change.ShortSHA(head), baseRev, err)
	}
	judged, how := review.Onto(baseRev, t, headFS, m)
	return judged, how, nil
}

// fillFromEvent fills in the flags the command line left out from the
// pull request or merge group event.
func fillFromEvent(gh *ghapi.Actions, f *checkFlags) error {
	if gh.Workspace != "" && !f.set["repo"] {
		f.repo = gh.Workspace
	}
	if g := gh.Group; g != nil {
		// The queue's commit is the future base branch; its base is
		// the tip it was built on.
		f.group = true
		if !f.set["base"] {
			f.base = g.BaseSHA
		}
		if !f.set["head"] {
			f.head = g.HeadSHA
		}
		return nil
	}
	if gh.PR == nil {
		if gh.EventPath == "" || f.base != "" && f.head != "" {
			// Explicit commits need no pull request: a push or a
			// schedule can check them too, without approvals.
			return nil
		}
		return gh.NoPRError()
	}
	fill := func(flag string, dst *string, v string) {
		if !f.set[flag] {
			*dst = v
		}
	}
	fill("base", &f.base, gh.PR.BaseSHA)
	fill("head", &f.head, gh.PR.HeadSHA)
	fill("author", &f.author, gh.PR.Author)
	if !f.set["number"] {
		f.number = gh.PR.Number
	}
	return nil
}

// checkRegistries sets how the images and references checks reach
// registries. The change's content is data: references render from
// registries only, never from paths on this machine, and every
// connection passes the egress rule.
func (a *app) checkRegistries(cmdPath string, f checkFlags, pr *review.PR) error {
	keychain := authn.NewMultiKeychain() // nothing matches: anonymous
	if f.registryCredentials {
		keychain = registry.DefaultKeychain()
	}
	rule, err := egress.New(f.allowPrivate, a.resolver)
	if err != nil {
		return usageErrorf(cmdPath, "invalid --allow-private-registry: %v", err)
	}
	if f.registryProxy != "" {
		if err := rule.UseProxy(f.registryProxy); err != nil {
			return usageErrorf(cmdPath, "invalid --registry-proxy: %v", err)
		}
	}
	if f.images || f.allImages {
		// One run's checks share the bound on each host and its
		// breaker, as a service's jobs do.
		pr.ImageOptions = &images.Options{Insecure: f.insecure, Keychain: keychain, UserAgent: a.userAgent(), Log: a.log, Egress: rule,
			Hosts: registry.NewHosts(registry.HostsOptions{})}
	}
	if f.render {
		r, err := render.New(render.Options{RegistryOnly: true, InsecureRegistries: f.insecure, Keychain: keychain, Egress: rule})
		if err != nil {
			return usageErrorf(cmdPath, "%v", err)
		}
		pr.Renderer = r
	}
	return nil
}

func (a *app) writeCheck(format checks.Format, out *review.Outcome, d policy.Decision, gh *ghapi.Actions, repo string) error {
	switch format {
	case checks.FormatJSON:
		return checks.WriteJSON(a.stdout, out.Doc(d))
	case checks.FormatSARIF:
		// Findings name files relative to the repository root, which is
		// where code scanning resolves %SRCROOT%.
		return checks.WriteSARIF(a.stdout, "catalogbot", a.version, review.Rules(), out.Findings(), "")
	case checks.FormatGitHub:
		return gh.Report(a.stdout, out, d, repo)
	case checks.FormatMarkdown:
		// The summary a job summary shows, with the upgrade graphs,
		// for a preview or a comment of one's own.
		return out.JobSummary(a.stdout, d, "")
	}
	return out.WriteText(a.stdout, d, true)
}
