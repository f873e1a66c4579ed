package main

import (
	"fmt"
	"strings"
)

// exitCode is one exit status of a command and what it means to the script
// or workflow that gates on it.
type exitCode struct {
	code    int
	meaning string
}

// checkExitCodes are the exit statuses of check, which the GitHub Action
// returns as they are. The command's help, the Action's documentation
// (docs/action.md) and action.yml are generated from this table by make
// docs, and the docs test fails when one of them says otherwise, so the
// three cannot drift apart again.
var checkExitCodes = []exitCode{
	{exitOK, "the pull request could merge at the checked head"},
	{exitInvalid, "it could not merge yet: a check failed, an approval is missing, a hold or " +
		"a draft stands in the way, the policy is invalid, or a check could not judge " +
		"(a registry rate limited, timed out or could not be reached, a file it needed " +
		"is missing from a partial clone, or the check ran out of time; the output " +
		"valid is then left unset)"},
	{exitError, "no verdict: a usage error (an unknown flag, a missing --base or --head) or " +
		"an I/O error (a commit not in the repository, an unreadable event file)"},
	{exitInterrupted, "interrupted by SIGINT or SIGTERM"},
}

// rebuildExitCodes are the exit statuses of rebuild, the command a
// scheduler runs: they say whether a later run may succeed. The help,
// docs/publishing.md and the example CronJob's podFailurePolicy come from
// this table (make docs; the docs test holds them to it).
var rebuildExitCodes = []exitCode{
	{exitOK, "published, or unchanged: the target already holds the digest"},
	{exitInvalid, "catalog.yaml or the assembled catalog is invalid, a reference is missing or " +
		"breaks policy, or a registry refused the credentials (unauthorized): a person must fix " +
		"the input or the credentials; do not retry"},
	{exitError, "a usage or I/O error (a flag, the catalog.yaml path, the cache directory): " +
		"the job's configuration is wrong; do not retry"},
	{exitRetry, "a registry could not be reached, did not answer in time, was rate limited or " +
		"failed on its side, or the run passed its --timeout: retry later"},
	{exitInterrupted, "interrupted by SIGINT or SIGTERM (a drained node, an evicted pod): retry"},
}

// exitCodesHelp lays codes out for a command's help: one status a line,
// meanings wrapped at width columns under their first word.
func exitCodesHelp(codes []exitCode, width int) string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, c := range codes {
		prefix := fmt.Sprintf("  %-4d", c.code)
		b.WriteString(wrapWords(c.meaning, width, prefix, strings.Repeat(" ", len(prefix))))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// wrapWords fills text's words into lines of at most width columns (a
// longer word gets a line of its own), the first line starting with first
// and the others with rest; every line ends in a newline.
func wrapWords(text string, width int, first, rest string) string {
	var b strings.Builder
	line, empty := first, true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}
