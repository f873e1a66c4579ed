package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/policy"
)

func newPolicyCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with the repository policy file, " + policy.FileName,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "unknown policy subcommand %q", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf(cmd.CommandPath(), "policy needs a subcommand: validate")
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
	return cmd
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
