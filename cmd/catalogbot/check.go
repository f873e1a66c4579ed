package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/pipeline"
	"github.com/catalogbot/catalogbot/policy"
)

// checkFlags are the command line of check.
type checkFlags struct {
	repo, base, head, author string
	approve                  []string
	format                   ownersFormat
}

func newCheckCmd(a *app) *cobra.Command {
	f := checkFlags{repo: ".", format: "text"}
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
  fbc     the catalog under each catalog root of the policy is valid;
          errors already on --base are reported as warnings

The merge decision is the policy's, less what only the forge can judge:
whether merging is enabled, the checks of other tools, and whether the
branches merge cleanly are taken as given.

Output formats (-o):
  text  one line per check with its findings, then the decision
  json  {"baseSHA", "headSHA", "results": [{"name", "conclusion",
        "findings", "summary"}], "decision": {"Merge", "Reasons", ...}}

Exit status: 0 the change could merge, 1 it could not (or the policy is
invalid), 2 usage or I/O error.`,
		Example: `  catalogbot check --base origin/main --head HEAD --author alice
  catalogbot check --repo . --base main --head pr-42 --author alice --approve bob -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "check takes no arguments, got %q", args)
			}
			for _, req := range []struct{ name, value string }{{"--base", f.base}, {"--head", f.head}} {
				if req.value == "" {
					return usageErrorf(cmd.CommandPath(), "check needs %s", req.name)
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runCheck(cmd.Context(), cmd.CommandPath(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", f.repo, "the git repository (a work tree or a bare repository)")
	fl.StringVar(&f.base, "base", "", "the base commit: where the policy and OWNERS are read from")
	fl.StringVar(&f.head, "head", "", "the head commit of the change")
	fl.StringVar(&f.author, "author", "", "the login of the change's author")
	fl.StringArrayVar(&f.approve, "approve", nil, "an approval, LOGIN or LOGIN@REV (repeatable)")
	fl.VarP(&f.format, "output", "o", "output format: text or json")
	return cmd
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
	c, baseFS, headFS, err := change.FromGit(f.repo, f.base, f.head)
	if err != nil {
		return err
	}
	c.Author = f.author
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
		if err := a.writeCheck(f.format, doc); err != nil {
			return err
		}
		return errInvalid
	}

	doc.Report = pipeline.Run(ctx, &pipeline.Input{Change: c, Base: baseFS, Head: headFS, Policy: pol, Approvals: approvals})
	d := localDecision(pol, c, doc.Report)
	doc.Decision = &d
	if err := a.writeCheck(f.format, doc); err != nil {
		return err
	}
	if !d.Merge {
		return errInvalid
	}
	return nil
}

// localDecision is the policy's merge decision for a change checked on this
// machine. There is no forge to ask, so the head is the checked commit and
// mergeable, and the parts of the policy about the forge (merging enabled,
// other tools' required checks) are left out rather than always failing.
func localDecision(pol *policy.Policy, c *change.Change, rep checks.Report) policy.Decision {
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
			Approved:     pipeline.Approved(rep),
			HeadSHA:      c.HeadSHA,
			CheckedSHA:   c.HeadSHA,
			Mergeable:    &mergeable,
			TouchedPaths: touched,
		},
	)
}

func (a *app) writeCheck(format ownersFormat, doc checkDoc) error {
	if format == "json" {
		return checks.WriteJSON(a.stdout, doc)
	}
	if len(doc.Policy) > 0 {
		fmt.Fprintln(a.stdout, "the policy is invalid; no check ran:")
		return checks.WriteText(a.stdout, doc.Policy, "")
	}
	for _, res := range doc.Results {
		summary, _, _ := strings.Cut(strings.TrimSpace(res.Summary), "\n")
		fmt.Fprintf(a.stdout, "%s: %s: %s\n", res.Name, res.Conclusion, summary)
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
