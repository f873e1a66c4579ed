package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy"
)

func newPolicyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with the repository policy file, " + policy.FileName,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf(cmd.CommandPath(), "policy needs a subcommand: validate or show")
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "validate FILE",
		Short: "Check a policy file against the schema",
		Long: `Check a repository policy file (` + policy.FileName + `) against its schema
and print every problem with its file and line: unknown keys, values of the
wrong type, values that are not allowed, duplicate keys and unquoted
yes/no/on/off where a string is expected. The schema is in docs/policy.md.

catalogbot reads the policy from a pull request's base commit, so a change to
the policy takes effect for the pull requests opened after it is merged.

Exit status: 0 valid, 1 invalid, 2 usage or I/O error.`,
		Example: `  catalogbot policy validate .catalogbot.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "policy validate takes exactly one file, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return a.runPolicyValidate(args[0])
		},
	})
	var show struct {
		repo, rev, policy string
		format            checks.Format
	}
	show.format = checks.FormatText
	showCmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective policy of a repository, with where each value came from",
		Long: `Print the policy a pull request against the repository would be judged by:
every value, and where it came from (the policy file and line, the files a
conventions line reads, or the default), then the catalogs the policy finds
in the tree with their publish targets, and notes: about files the conventions
read, and about what the policy cannot see (paths nobody can approve, roots
that make one catalog of packages defined twice).

The policy is read from the commit --rev names (the base of the next pull
request), or from the directory as it is when --rev is not given; a bare
repository has no files but its commits', so there HEAD is read. The first
line says what was read, or that there was no policy file, in which case
every value is the default. With -o json, every template mapping (template,
type, outputs) and every catalog's roots are listed too.

Exit status: 0 valid, 1 invalid, 2 usage or I/O error.`,
		Example: `  catalogbot policy show --repo . --rev origin/main
  catalogbot policy show -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runPolicyShow(show.repo, show.rev, show.policy, show.format)
		},
	}
	showCmd.Flags().StringVar(&show.repo, "repo", ".", "the repository")
	showCmd.Flags().StringVar(&show.rev, "rev", "", "the commit to read the policy from; empty reads the directory as it is")
	showCmd.Flags().VarP(ownersFormats.Value(&show.format), "output", "o", "output format: text or json")
	showCmd.Flags().StringVar(&show.policy, "policy", "", "a policy file to read in place of the repository's own, to try it before committing it")
	cmd.AddCommand(showCmd)
	return cmd
}

// shownPolicy is policy show's JSON output.
type shownPolicy struct {
	// Read says which policy file was read, and from where; NoPolicyFile
	// says there was none, so that every value is a default.
	Read         string           `json:"read"`
	NoPolicyFile bool             `json:"noPolicyFile,omitempty"`
	Valid        bool             `json:"valid"`
	Findings     []checks.Finding `json:"findings,omitempty"`
	Settings     []policy.Setting `json:"settings,omitempty"`
	// Templates and Catalogs are what the settings count or name by
	// pattern, listed one by one.
	Templates []shownTemplate  `json:"templates,omitempty"`
	Catalogs  []shownCatalog   `json:"catalogs,omitempty"`
	Notes     []checks.Finding `json:"notes,omitempty"`
}

// shownTemplate is one template with the outputs it renders to.
type shownTemplate struct {
	Template string   `json:"template"`
	Type     string   `json:"type,omitempty"`
	Outputs  []string `json:"outputs"`
}

// shownCatalog is one catalog the policy finds in the tree.
type shownCatalog struct {
	Name  string   `json:"name,omitempty"`
	Roots []string `json:"roots"`
	Image string   `json:"image,omitempty"`
}

func (a *app) runPolicyShow(dir, rev, file string, format checks.Format) error {
	where := "the directory " + dir
	switch {
	case rev != "":
		where = "commit " + rev + " of " + dir
	case treeRev(dir, rev) != "":
		where = "HEAD of the bare repository " + dir
	}
	tree, err := openTree(dir, rev)
	if err != nil {
		return err
	}
	out := shownPolicy{Read: policy.FileName + " of " + where}
	var pol *policy.Policy
	var findings []checks.Finding
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out.Read = file + ", with the files its conventions name read from " + where
		pol, findings = policy.LoadWith(tree, file, data)
	} else {
		if _, err := fs.Stat(tree, policy.FileName); errors.Is(err, fs.ErrNotExist) {
			out.Read, out.NoPolicyFile = "no "+policy.FileName+" in "+where+": every value is the default", true
		}
		if pol, findings, err = policy.Load(tree); err != nil {
			return err
		}
	}
	out.Valid, out.Findings = len(findings) == 0, findings
	if out.Valid {
		out.Settings = pol.Settings()
		out.Notes = append(slices.Clone(pol.Notes), pol.BlindSpots(tree)...)
		out.Templates = templatesOf(pol.Catalog.Templates)
		targets, err := pol.Targets(tree)
		if err != nil {
			out.Valid = false
			out.Findings = []checks.Finding{policy.TargetsFinding(err)}
		}
		for _, t := range targets {
			out.Catalogs = append(out.Catalogs, shownCatalog{Name: t.Name, Roots: t.Roots, Image: t.Image})
		}
	}
	if format == checks.FormatJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		writePolicy(a.stdout, out)
	}
	if !out.Valid {
		return errInvalid
	}
	return nil
}

// templatesOf lists the template mappings by template, in the policy's
// order, each with every output it renders to.
func templatesOf(mappings []policy.Template) []shownTemplate {
	var out []shownTemplate
	at := map[string]int{}
	for _, m := range mappings {
		i, ok := at[m.Template]
		if !ok {
			i = len(out)
			at[m.Template] = i
			out = append(out, shownTemplate{Template: m.Template, Type: m.Type, Outputs: []string{}})
		}
		if !slices.Contains(out[i].Outputs, m.Output) {
			out[i].Outputs = append(out[i].Outputs, m.Output)
		}
	}
	return out
}

// writePolicy prints policy show's text: what was read, a table of
// settings, the catalogs, and the notes.
func writePolicy(w io.Writer, p shownPolicy) {
	fmt.Fprintf(w, "policy: %s\n\n", checks.VisibleLine(p.Read))
	if !p.Valid {
		for _, f := range p.Findings {
			fmt.Fprintf(w, "%s\n", checks.Visible(formatFinding(f)))
		}
		fmt.Fprintf(w, "invalid policy: %s\n", checks.Plural(len(p.Findings), "problem"))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range p.Settings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, checks.Visible(s.Value), s.Origin)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s:\n", checks.Plural(len(p.Catalogs), "catalog"))
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range p.Catalogs {
		name := c.Name
		if name == "" {
			name = "(the catalog)"
		}
		image := c.Image
		if image == "" {
			image = "(not published)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", checks.VisibleLine(name), checks.VisibleLine(strings.Join(c.Roots, ", ")), checks.VisibleLine(image))
	}
	tw.Flush()
	if len(p.Notes) > 0 {
		fmt.Fprintf(w, "\n%s:\n", checks.Plural(len(p.Notes), "note"))
		for _, f := range p.Notes {
			fmt.Fprintf(w, "  %s\n", checks.Visible(formatFinding(f)))
		}
	}
}

// formatFinding says a finding as file:line: message.
func formatFinding(f checks.Finding) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d: %s (%s)", f.File, f.Line, f.Message, f.Rule)
	}
	return fmt.Sprintf("%s: %s (%s)", f.File, f.Message, f.Rule)
}

func (a *app) runPolicyValidate(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	_, findings := policy.Parse(file, data)
	for _, f := range findings {
		if f.Line > 0 {
			fmt.Fprintf(a.stdout, "%s:%d: %s (%s)\n", f.File, f.Line, f.Message, f.Rule)
		} else {
			fmt.Fprintf(a.stdout, "%s: %s (%s)\n", f.File, f.Message, f.Rule)
		}
	}
	if len(findings) > 0 {
		noun := "problems"
		if len(findings) == 1 {
			noun = "problem"
		}
		fmt.Fprintf(a.stdout, "%s: invalid policy: %d %s\n", file, len(findings), noun)
		return errInvalid
	}
	fmt.Fprintf(a.stdout, "%s: valid policy\n", file)
	return nil
}
