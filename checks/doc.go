// Package checks is the bottom layer of catalogbot: what every check, the
// review core and the front ends share.
//
// Findings: a Finding is one problem, placed by file and line and by
// package, channel and bundle, with a rule id from the catalogue a check
// publishes as Rules and a Severity; only errors fail a check (HasErrors,
// ConclusionOf).
//
// The check contract: a Check[T] reads a T and returns a Result with its
// Conclusion, in the words of GitHub check runs. Run runs checks
// concurrently, isolates panics, ends them at the context's deadline and
// returns a Report in check-name order. A check that could not judge stays
// pending and lists what it waits for (Wait, AddWait, WaitList).
//
// Reporters: WriteText for people, WriteJSON for scripts, WriteSARIF for
// code scanning, and for GitHub Actions workflow annotations
// (WriteGitHubAnnotations), a job summary (WriteGitHubSummary) and step
// outputs (WriteGitHubOutputs). Format names an output format and Formats
// the set one command offers, with the one parser of -o values.
//
// Text that reaches a report passes through here: Visible and its
// siblings spell out control and bidirectional characters so a catalog
// cannot hide text in a report; Code and MarkdownText quote for Markdown;
// Plural and Count word numbers; Truncate keeps text within a limit.
//
// Its sub-packages are the leaves the engines build on (registry and its
// egress rule, reference, platform, yamlnode, catalogyaml, change), the
// engines (fbc, images, release), the validation reporter (fbcreport), and
// test helpers (checkstest).
package checks
