package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-github/v60/github"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/pipeline"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
)

// checkFlags are the command line of check.
type checkFlags struct {
	repo, base, head, author string
	number                   int
	approve                  []string
	format                   checkFormat
	// images turns the images check on; allImages checks every reference
	// rather than those the change adds or changes.
	images, allImages bool
	// render renders the reference list entries the change adds or changes.
	render   bool
	insecure []string
	// registryCredentials uses the docker config.json keychain to read
	// private images; by default registries are asked anonymously.
	registryCredentials bool
	// set records which flags were given, so that values from a GitHub
	// Actions event only fill in what the command line left out.
	set map[string]bool
}

// checkFormat is the output format of check, a pflag.Value.
type checkFormat string

const (
	formatText   checkFormat = "text"
	formatJSON   checkFormat = "json"
	formatSARIF  checkFormat = "sarif"
	formatGitHub checkFormat = "github"
)

func (f *checkFormat) String() string { return string(*f) }
func (f *checkFormat) Type() string   { return "format" }
func (f *checkFormat) Set(s string) error {
	switch checkFormat(s) {
	case formatText, formatJSON, formatSARIF, formatGitHub:
		*f = checkFormat(s)
		return nil
	}
	return fmt.Errorf("unknown output format %q (want text, json, sarif, github)", s)
}

func newCheckCmd(a *app) *cobra.Command {
	f := checkFlags{repo: ".", format: formatText, images: true, render: true}
	var extra string
	cmd := &cobra.Command{
		Use:   "check --base REV --head REV [--author LOGIN] [--approve LOGIN[@REV]]...",
		Short: "Run every check of a pull request on a change between two commits",
		Long: `Run the checks a pull request goes through on the change from --base to
--head in the git repository --repo, and say whether it could merge.

The policy (.catalogbot.yaml) and the OWNERS files are read from --base
only, so a change cannot relax the rules it is judged by. The checks are:

  owners  every changed path is approved by its owners; --author approves
          the files they own unless the policy says otherwise, and each
          --approve LOGIN[@REV] is one approval of REV (default --head)
  fbc         the catalog under each catalog root of the policy is valid
              where the change can affect it: the package directories it
              touches and those of the packages they hold; errors already
              on --base are reported as warnings
  references  the catalog.yaml reference list parses, and every entry the
              change adds or changes renders to a valid catalog (registry
              images only; --render=false skips rendering)
  images      the bundle, related and reference images the change adds or
              changes exist and meet the policy's image rules (--all-images:
              every image of the catalog; --images=false: no registry is
              asked). Registries are asked anonymously unless
              --registry-credentials lets the docker config.json keychain
              answer

The merge decision is the policy's, less what only the forge can judge:
whether merging is enabled, the checks of other tools, and whether the
branches merge cleanly are taken as given.

Output formats (-o):
  text    one line per check with its findings, then the decision
  json    {"baseSHA", "headSHA", "results": [{"name", "conclusion",
          "findings", "summary"}], "decision": {"Merge", "Reasons", ...}}
  sarif   the findings as a SARIF 2.1.0 log, for code scanning
  github  GitHub Actions: findings as annotations, the report as the job
          summary, and the step outputs valid, approved and mergeable

Inside GitHub Actions (GITHUB_ACTIONS=true) the format defaults to github,
and the change comes from the pull request event in $GITHUB_EVENT_PATH
whatever the format: --base, --head, --author and --number default to its
base and head commits, its author and its number (pull_request,
pull_request_target and pull_request_review events carry them), and --repo
to $GITHUB_WORKSPACE. A draft pull request, or one with the policy's hold
label, is not mergeable. With GITHUB_TOKEN set, the reviews and /approve
comments of the pull request ($GITHUB_REPOSITORY, read through
$GITHUB_API_URL) count as approvals besides --approve, and a /hold stops
the merge; without it only the author's approval is considered. The
summary is appended to $GITHUB_STEP_SUMMARY and the outputs to
$GITHUB_OUTPUT: valid (no check but owners failed), approved (the owners
check passed) and mergeable.

Exit status: 0 the change could merge, 1 it could not (or the policy is
invalid), 2 usage or I/O error.`,
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
			if !f.set["output"] && os.Getenv("GITHUB_ACTIONS") == "true" {
				f.format = formatGitHub
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
	fl.BoolVar(&f.render, "render", f.render, "render the reference list entries the change adds or changes")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, "reach this registry HOST[:PORT] over plain HTTP or unverified TLS (repeatable)")
	fl.BoolVar(&f.registryCredentials, "registry-credentials", false, "read private images with the docker config.json keychain (default: anonymous)")
	fl.VarP(&f.format, "output", "o", "output format: text, json, sarif or github (default github inside GitHub Actions)")
	// The GitHub Action hands its free-form "args" input over as one
	// argument (a container action's arguments are never split); this
	// flag splits it into the flags it holds.
	fl.StringVar(&extra, "extra-args", "", "more flags of check in one string, split into words as a shell would (for the GitHub Action)")
	if err := fl.MarkHidden("extra-args"); err != nil {
		panic(err)
	}
	return cmd
}

// parseExtraArgs parses the flags held in the string extra as if they had
// been given on the command line after the others.
func parseExtraArgs(cmd *cobra.Command, extra string) error {
	words, err := splitWords(extra)
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

// splitWords splits s into words at blanks and line breaks, as a POSIX
// shell does without expanding anything: 'single' quotes keep everything,
// "double" quotes keep all but \" and \\, and a backslash elsewhere keeps
// the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += 1 + end
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(s); i++ {
				if s[i] == '"' {
					closed = true
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
			if !closed {
				return nil, fmt.Errorf("unterminated \" in %q", s)
			}
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// checkDoc is the output of check -o json.
type checkDoc struct {
	BaseSHA string `json:"baseSHA"`
	HeadSHA string `json:"headSHA"`
	checks.Report
	// Policy lists the problems of an invalid policy, which stop the
	// checks from running at all.
	Policy   []checks.Finding `json:"policy,omitempty"`
	Decision *policy.Decision `json:"decision,omitempty"`
}

func (a *app) runCheck(ctx context.Context, cmdPath string, f checkFlags) error {
	// Inside Actions the event supplies the change whatever the format,
	// so that -o sarif or -o json in a workflow check the same commits.
	var gh *actionsRun
	if f.format == formatGitHub || os.Getenv("GITHUB_ACTIONS") == "true" {
		var err error
		if gh, err = readActionsEnv(os.Getenv, &f); err != nil {
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
	c.Author = f.author
	c.Number = f.number
	approvals, err := parseApprovals(cmdPath, f.repo, c.HeadSHA, f.approve)
	if err != nil {
		return err
	}
	doc := checkDoc{BaseSHA: c.BaseSHA, HeadSHA: c.HeadSHA, Report: checks.Report{Results: []checks.Result{}}}

	pol, findings, err := policy.Load(baseFS)
	if err != nil {
		return err
	}
	if len(findings) > 0 {
		// Checking against a policy that does not parse would apply rules
		// nobody wrote; the policy has to be fixed on the base first.
		doc.Policy = findings
		if err := a.writeCheck(f.format, doc, gh); err != nil {
			return err
		}
		return errInvalid
	}

	var pr localPR
	if gh != nil {
		gh.merge = &pol.Merge
		pr.Draft = gh.draft
		if pol.Merge.HoldLabel != "" && slices.Contains(gh.labels, pol.Merge.HoldLabel) {
			pr.Held, pr.HeldBy = true, "the "+pol.Merge.HoldLabel+" label"
		}
		if gh.token != "" && gh.repo != "" && c.Number > 0 {
			act, n, err := a.forgeActivity(ctx, gh, c, pol)
			if err != nil {
				return err
			}
			gh.events = n
			// The command line has the last word: its approvals are
			// dated after everything said on the pull request, so a
			// stale "/approve cancel" does not undo an explicit
			// --approve.
			var latest time.Time
			for _, ap := range act.Approvals {
				if ap.Time.After(latest) {
					latest = ap.Time
				}
			}
			for i := range approvals {
				approvals[i].Time = latest.Add(time.Duration(i+1) * time.Second)
			}
			approvals = append(act.Approvals, approvals...)
			if act.Hold && !pr.Held {
				pr.Held, pr.HeldBy = true, "a /hold from "+act.HoldBy
			}
		}
	}

	in := &pipeline.Input{Change: c, Base: baseFS, Head: headFS, Policy: pol, Approvals: approvals, AllImages: f.allImages}
	if err := a.checkRegistries(cmdPath, f, in); err != nil {
		return err
	}
	doc.Report = pipeline.Run(ctx, in)
	d := localDecision(pol, c, doc.Report, pr)
	doc.Decision = &d
	if gh != nil {
		gh.pr = pr
	}
	if err := a.writeCheck(f.format, doc, gh); err != nil {
		return err
	}
	if !d.Merge {
		return errInvalid
	}
	return nil
}

// localPR is what is known of the pull request besides its commits: only
// in GitHub Actions, from the event and the conversation.
type localPR struct {
	Draft, Held bool
	HeldBy      string // what holds it, for the summary
}

// checkRegistries sets how the images and references checks reach
// registries. The change's content is data: references render from
// registries only, never from paths on this machine.
func (a *app) checkRegistries(cmdPath string, f checkFlags, in *pipeline.Input) error {
	keychain := authn.NewMultiKeychain() // nothing matches: anonymous
	if f.registryCredentials {
		keychain = images.DefaultKeychain()
	}
	if f.images || f.allImages {
		in.ImageOptions = &images.Options{Insecure: f.insecure, Keychain: keychain, UserAgent: "catalogbot/" + a.version, Log: a.log}
	}
	if f.render {
		r, err := render.New(render.Options{RegistryOnly: true, InsecureRegistries: f.insecure, Keychain: keychain})
		if err != nil {
			return usageErrorf(cmdPath, "%v", err)
		}
		in.Renderer = r
	}
	return nil
}

// localDecision is the policy's merge decision for a change checked on this
// machine. There is no forge to ask, so the head is the checked commit and
// mergeable, and the parts of the policy about the forge (merging enabled,
// other tools' required checks) are left out rather than always failing.
func localDecision(pol *policy.Policy, c *change.Change, rep checks.Report, pr localPR) policy.Decision {
	local := *pol
	local.Merge.Enabled = true
	local.Merge.RequiredChecks = nil
	conclusions := make(map[string]policy.Conclusion, len(rep.Results))
	for name, con := range rep.Conclusions() {
		conclusions[name] = policy.Conclusion(con)
	}
	touched := make([]string, 0, len(c.Files))
	for _, file := range c.Files {
		touched = append(touched, file.Path)
	}
	mergeable := true
	return local.Decide(
		policy.Report{Conclusions: conclusions, HeadSHA: c.HeadSHA},
		policy.PRState{
			Draft:        pr.Draft,
			Held:         pr.Held,
			Approved:     pipeline.Approved(rep),
			HeadSHA:      c.HeadSHA,
			CheckedSHA:   c.HeadSHA,
			Mergeable:    &mergeable,
			TouchedPaths: touched,
		},
	)
}

func (a *app) writeCheck(format checkFormat, doc checkDoc, gh *actionsRun) error {
	switch format {
	case formatJSON:
		return checks.WriteJSON(a.stdout, doc)
	case formatSARIF:
		findings := doc.Policy
		for _, res := range doc.Results {
			findings = append(findings, res.Findings...)
		}
		// Findings name files relative to the repository root, which is
		// where code scanning resolves %SRCROOT%.
		return checks.WriteSARIF(a.stdout, "catalogbot", a.version, nil, findings, "")
	case formatGitHub:
		return a.writeGitHub(doc, gh)
	}
	return a.writeCheckLog(doc, true)
}

// writeCheckLog prints the conclusions and the decision as text; with
// findings also every finding.
func (a *app) writeCheckLog(doc checkDoc, findings bool) error {
	if len(doc.Policy) > 0 {
		fmt.Fprintln(a.stdout, "the policy is invalid; no check ran:")
		if !findings {
			return nil
		}
		return checks.WriteText(a.stdout, doc.Policy, "")
	}
	for _, res := range doc.Results {
		summary, rest, _ := strings.Cut(strings.TrimSpace(res.Summary), "\n")
		fmt.Fprintf(a.stdout, "%s: %s: %s\n", res.Name, res.Conclusion, summary)
		// The rest of the summary says what to do next (whom to ask,
		// what was validated); it is Markdown, read here as plain text.
		for _, line := range strings.Split(rest, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(a.stdout, "  %s\n", strings.ReplaceAll(line, "`", ""))
			}
		}
		if !findings {
			continue
		}
		if err := checks.WriteText(a.stdout, res.Findings, ""); err != nil {
			return err
		}
	}
	if doc.Decision == nil {
		return nil
	}
	if doc.Decision.Merge {
		_, err := fmt.Fprintf(a.stdout, "mergeable at %s\n", doc.HeadSHA)
		return err
	}
	fmt.Fprintln(a.stdout, "not mergeable:")
	for _, r := range doc.Decision.Reasons {
		fmt.Fprintf(a.stdout, "  - %s\n", r)
	}
	return nil
}

// actionsRun is the GitHub Actions environment of one check: where the
// results go and what the pull request event said.
type actionsRun struct {
	eventPath     string
	token, apiURL string
	repo          string // owner/name
	summaryFile   string
	outputFile    string
	// dir is the checked repository relative to the workspace, which
	// annotation paths are relative to.
	dir    string
	draft  bool
	labels []string

	// Filled in while checking.
	pr     localPR
	events int // reviews and comments read; -1 when none were asked for
	// merge is the base policy's merge settings, for the outputs that
	// let a workflow merge as the policy says; nil when the policy did
	// not load.
	merge *policy.Merge
}

// prEvent is the part of a pull_request (or pull_request_target,
// pull_request_review) event payload that check reads.
type prEvent struct {
	Number      int `json:"number"`
	PullRequest *struct {
		Number int  `json:"number"`
		Draft  bool `json:"draft"`
		Labels []struct {
			Name string `json:"name"`
		} `json:"labels"`
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
		Head struct {
			SHA string `json:"sha"`
		} `json:"head"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	} `json:"pull_request"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

// readActionsEnv reads the GitHub Actions environment and fills in the
// flags the command line left out from the event in $GITHUB_EVENT_PATH.
func readActionsEnv(getenv func(string) string, f *checkFlags) (*actionsRun, error) {
	gh := &actionsRun{
		eventPath:   getenv("GITHUB_EVENT_PATH"),
		token:       getenv("GITHUB_TOKEN"),
		apiURL:      getenv("GITHUB_API_URL"),
		repo:        getenv("GITHUB_REPOSITORY"),
		summaryFile: getenv("GITHUB_STEP_SUMMARY"),
		outputFile:  getenv("GITHUB_OUTPUT"),
		events:      -1,
	}
	if ws := getenv("GITHUB_WORKSPACE"); ws != "" {
		if !f.set["repo"] {
			f.repo = ws
		}
		gh.dir = relativeTo(ws, f.repo)
	}
	if gh.eventPath == "" {
		return gh, nil
	}
	data, err := os.ReadFile(gh.eventPath)
	if err != nil {
		return nil, fmt.Errorf("read the GitHub event file $GITHUB_EVENT_PATH: %w", err)
	}
	var ev prEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("the GitHub event file %s is not a JSON event: %v", gh.eventPath, err)
	}
	pr := ev.PullRequest
	if pr == nil {
		if f.base != "" && f.head != "" {
			// Explicit commits need no pull request: a push or a
			// schedule can check them too, without approvals.
			return gh, nil
		}
		name := getenv("GITHUB_EVENT_NAME")
		if name == "" {
			name = "this"
		}
		return nil, fmt.Errorf("the GitHub event file %s holds no pull request (%s event); run on pull_request or pass --base and --head", gh.eventPath, name)
	}
	if pr.Base.SHA == "" || pr.Head.SHA == "" {
		return nil, fmt.Errorf("the GitHub event file %s: the pull request has no base or head sha", gh.eventPath)
	}
	fill := func(flag string, dst *string, v string) {
		if !f.set[flag] {
			*dst = v
		}
	}
	fill("base", &f.base, pr.Base.SHA)
	fill("head", &f.head, pr.Head.SHA)
	fill("author", &f.author, pr.User.Login)
	if !f.set["number"] {
		f.number = cmp.Or(pr.Number, ev.Number)
	}
	if gh.repo == "" {
		gh.repo = ev.Repository.FullName
	}
	gh.draft = pr.Draft
	for _, l := range pr.Labels {
		gh.labels = append(gh.labels, l.Name)
	}
	return gh, nil
}

// relativeTo returns dir relative to the workspace ws, or "" when dir is
// the workspace or lies outside it (annotations then use the paths as
// they are).
func relativeTo(ws, dir string) string {
	absWS, err1 := filepath.Abs(ws)
	absDir, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(absWS, absDir)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return filepath.ToSlash(rel)
}

// forgeActivity reads the reviews and comments of the pull request with
// the Actions token and turns them into approvals and holds. Bots, the
// policy's and every [bot], are ignored.
func (a *app) forgeActivity(ctx context.Context, gh *actionsRun, c *change.Change, pol *policy.Policy) (owners.Activity, int, error) {
	owner, name, ok := strings.Cut(gh.repo, "/")
	if !ok || owner == "" || name == "" {
		return owners.Activity{}, 0, fmt.Errorf("GITHUB_REPOSITORY %q is not owner/name", gh.repo)
	}
	base, err := url.Parse(cmp.Or(gh.apiURL, ghapi.DefaultBaseURL))
	if err != nil || !base.IsAbs() {
		return owners.Activity{}, 0, fmt.Errorf("GITHUB_API_URL %q is not an absolute URL", gh.apiURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	// The transport retries server errors and waits out rate limits,
	// which a busy repository's shared Actions token does run into.
	client := github.NewClient(&http.Client{Transport: ghapi.NewTransport(ghapi.TransportOptions{}), Timeout: 2 * time.Minute}).WithAuthToken(gh.token)
	client.BaseURL = base
	start := time.Now()
	events, err := ghapi.Events(ctx, client, owner, name, c.Number, c.HeadSHA)
	if err != nil {
		return owners.Activity{}, 0, err
	}
	a.log.Debug("read the pull request's reviews and comments", "repo", gh.repo, "number", c.Number, "events", len(events), "took", time.Since(start))
	return owners.ReadEvents(events, pol.Owners.Bots), len(events), nil
}

// writeGitHub reports for GitHub Actions: annotations and the decision on
// stdout, the Markdown summary appended to $GITHUB_STEP_SUMMARY and the
// step outputs appended to $GITHUB_OUTPUT.
func (a *app) writeGitHub(doc checkDoc, gh *actionsRun) error {
	rep := doc.Report
	if len(doc.Policy) > 0 {
		rep = checks.Report{Results: []checks.Result{{
			Name:       "policy",
			Conclusion: checks.Failure,
			Findings:   doc.Policy,
			Summary:    "The repository policy (.catalogbot.yaml) on the base commit is invalid, so no check ran. Fix it on the base branch first.",
		}}}
	}
	var findings []checks.Finding
	for _, res := range rep.Results {
		findings = append(findings, res.Findings...)
	}
	if err := checks.WriteGitHubAnnotations(a.stdout, findings, checks.AnnotationOptions{Dir: gh.dir}); err != nil {
		return err
	}
	if err := a.writeCheckLog(doc, false); err != nil {
		return err
	}

	valid, approved, mergeable := len(doc.Policy) == 0, false, false
	for _, res := range rep.Results {
		if res.Name != pipeline.OwnersName && res.Conclusion == checks.Failure {
			valid = false
		}
	}
	if len(doc.Policy) == 0 {
		approved = pipeline.Approved(rep)
	}
	if doc.Decision != nil {
		mergeable = doc.Decision.Merge
	}

	if gh.summaryFile != "" {
		err := appendFile(gh.summaryFile, "$GITHUB_STEP_SUMMARY", func(w io.Writer) error {
			return checks.WriteGitHubSummary(w, checks.GitHubSummary{
				Title:  "catalogbot check",
				Intro:  summaryIntro(doc),
				Report: rep,
				Notes:  summaryNotes(doc, gh),
				Dir:    gh.dir,
			})
		})
		if err != nil {
			return err
		}
	}
	if gh.outputFile != "" {
		err := appendFile(gh.outputFile, "$GITHUB_OUTPUT", func(w io.Writer) error {
			outputs := []checks.GitHubOutput{
				{Name: "valid", Value: strconv.FormatBool(valid)},
				{Name: "approved", Value: strconv.FormatBool(approved)},
				{Name: "mergeable", Value: strconv.FormatBool(mergeable)},
			}
			// mergeable leaves out whether the policy lets catalogbot
			// merge: a workflow that merges reads these two.
			if gh.merge != nil {
				outputs = append(outputs,
					checks.GitHubOutput{Name: "merge-enabled", Value: strconv.FormatBool(gh.merge.Enabled)},
					checks.GitHubOutput{Name: "merge-method", Value: gh.merge.Method})
			}
			return checks.WriteGitHubOutputs(w, outputs)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// summaryIntro states the verdict and every reason against merging.
func summaryIntro(doc checkDoc) string {
	var b strings.Builder
	switch {
	case len(doc.Policy) > 0:
		b.WriteString("**Not checked**: the repository policy is invalid.")
	case doc.Decision != nil && doc.Decision.Merge:
		fmt.Fprintf(&b, "**Mergeable** at `%s`.", shortSHA(doc.HeadSHA))
	default:
		fmt.Fprintf(&b, "**Not mergeable** at `%s`:\n", shortSHA(doc.HeadSHA))
		if doc.Decision != nil {
			for _, r := range doc.Decision.Reasons {
				fmt.Fprintf(&b, "\n- %s", r)
			}
		}
	}
	fmt.Fprintf(&b, "\n\nBase `%s`, head `%s`.", shortSHA(doc.BaseSHA), shortSHA(doc.HeadSHA))
	return b.String()
}

// summaryNotes says where the approvals came from, so that a missing
// approval is not mistaken for a missing token or the other way round.
func summaryNotes(doc checkDoc, gh *actionsRun) string {
	if len(doc.Policy) > 0 {
		return ""
	}
	var notes []string
	switch {
	case gh.events >= 0:
		notes = append(notes, fmt.Sprintf("Approvals counted: the author's, and those given in the pull request's %s.", countOf(gh.events, "review or comment", "reviews and comments")))
	case gh.token == "":
		notes = append(notes, "No `GITHUB_TOKEN` was given, so only the author's approval (and any `--approve`) was considered; reviews and `/approve` comments were not read.")
	default:
		notes = append(notes, "No pull request number or repository is known, so only the author's approval (and any `--approve`) was considered.")
	}
	if gh.pr.Draft {
		notes = append(notes, "The pull request is a draft.")
	}
	if gh.pr.Held {
		notes = append(notes, "The pull request is held by "+gh.pr.HeldBy+".")
	}
	return strings.Join(notes, "\n\n")
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// appendFile appends what write writes to the file at path, which the
// runner created for the step, and names it (by its variable) on failure.
// The text is built in memory first, so a failure leaves no half entry.
func appendFile(path, name string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("%s (%s): %w", name, path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// The runner creates these files as its own user; a container
		// running as another (non-root) user cannot write them.
		return fmt.Errorf("open %s: %w (running as uid %d; the step's files belong to the runner's user)", name, err, os.Getuid())
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("write %s (%s): %w", name, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s (%s): %w", name, path, err)
	}
	return nil
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
