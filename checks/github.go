package checks

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
)

// GitHub Actions reporting: findings as workflow commands (annotations), a
// Markdown job summary and step outputs. Everything here is a pure function
// over an io.Writer; where the text goes ($GITHUB_STEP_SUMMARY,
// $GITHUB_OUTPUT, stdout) is the caller's business.

// MaxAnnotations is the most annotations GitHub keeps for one job; any
// further ones are dropped without a word. The per-step display limit (ten
// errors and ten warnings) is lower still, but the rest of the annotation
// lines stay readable in the step log.
const MaxAnnotations = 50

// DefaultSummaryFindings is how many findings the job summary lists before
// saying how many more there are. A step summary may be at most 1 MiB;
// past a few hundred rows a table is unreadable anyway.
const DefaultSummaryFindings = 100

// summaryMessageRunes caps a message in the summary table so that one huge
// message (a YAML error quoting a whole document) cannot crowd out the rest.
const summaryMessageRunes = 400

// AnnotationOptions tune WriteGitHubAnnotations.
type AnnotationOptions struct {
	// Max is the most annotation lines written, the line summarising what
	// was left out included: that line is the 50th, not the 51st, or GitHub
	// would drop it with the others. 0 means MaxAnnotations.
	Max int
	// Dir is the checked repository relative to the workspace root
	// ("" or "." when it is the root). Findings' files are relative to
	// the repository, annotations' to the workspace.
	Dir string
}

// Annotation is a finding as an annotation, in the one shape both the
// Actions workflow commands and GitHub check runs are made from: the front
// ends only map Level and cap the list as their medium requires.
type Annotation struct {
	// Level is "error", "warning" or "notice".
	Level string
	// File and Line place it; either may be unknown ("" and 0).
	File string
	Line int
	// Title is the finding's rule.
	Title string
	// Message names the catalog object it is about, then says what is
	// wrong, as every other reporter words it.
	Message string
	// Finding is the finding it was made from.
	Finding Finding
}

// Annotations turns findings into annotations: errors first, then
// warnings, then notes, each group in the order given, and a finding
// repeated with the same severity, place and text once. A finding with no
// severity is an error, as everywhere else. File, Title and Message are
// spelled out as Visible does: GitHub shows them as they are. A file whose
// name needed that no longer names the file, so the annotation is listed
// rather than placed in the diff, which is what such a name deserves.
func Annotations(findings []Finding) []Annotation {
	seen := make(map[findingKey]bool, len(findings))
	out := make([]Annotation, 0, len(findings))
	for _, f := range findings {
		if k := keyOf(f); !seen[k] {
			seen[k] = true
			v := visibleFinding(f)
			out = append(out, Annotation{
				Level: annotationLevel(f.Severity), File: v.File, Line: f.Line,
				Title: v.Rule, Message: findingText(v), Finding: f,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b Annotation) int {
		return cmp.Compare(severityRank(a.Finding.Severity), severityRank(b.Finding.Severity))
	})
	return out
}

// WriteGitHubAnnotations writes findings as GitHub Actions workflow
// commands, one line each, in the order and with the repeats dropped as
// Annotations does:
//
//	::error file=F,line=L,title=RULE::pkg/channel: message
//
// When more remain than fit under Max, the last line is a notice counting,
// by severity, the findings left out.
//
// Data is escaped as the runner unescapes it (%, CR and LF; in properties
// also ':' and ','), so no text from a checked change can end a command
// early or start a new one.
func WriteGitHubAnnotations(w io.Writer, findings []Finding, o AnnotationOptions) error {
	limit := o.Max
	if limit <= 0 {
		limit = MaxAnnotations
	}
	list := Annotations(findings)
	shown := list
	if len(list) > limit {
		shown = list[:limit-1]
	}
	var b strings.Builder
	for _, a := range shown {
		b.WriteString(workflowCommand(a, o.Dir))
		b.WriteByte('\n')
	}
	if rest := list[len(shown):]; len(rest) > 0 {
		left := make([]Finding, len(rest))
		for i, a := range rest {
			left[i] = a.Finding
		}
		fmt.Fprintf(&b, "::notice title=%s::%s\n", escapeProperty("catalogbot"),
			escapeData(fmt.Sprintf("%s not annotated (%s); the job summary lists the findings.",
				Plural(len(rest), "more finding"), severityCounts(left))))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// workflowCommand renders one annotation as a workflow command.
func workflowCommand(a Annotation, dir string) string {
	var props []string
	if file := repoPath(dir, a.File); file != "" {
		props = append(props, "file="+escapeProperty(file))
		if a.Line > 0 {
			props = append(props, "line="+strconv.Itoa(a.Line))
		}
	}
	if a.Title != "" {
		props = append(props, "title="+escapeProperty(a.Title))
	}
	cmd := "::" + a.Level
	if len(props) > 0 {
		cmd += " " + strings.Join(props, ",")
	}
	return cmd + "::" + escapeData(a.Message)
}

func annotationLevel(s Severity) string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityNote:
		return "notice"
	default:
		// An unset severity reads as an error everywhere else too.
		return "error"
	}
}

// severityRank orders errors before warnings before notes.
func severityRank(s Severity) int {
	switch s {
	case SeverityWarning:
		return 1
	case SeverityNote:
		return 2
	default:
		return 0
	}
}

// findingText is the message with the catalog object it is about, as the
// SARIF reporter words it.
func findingText(f Finding) string {
	if loc := locator(f); loc != "" {
		return loc + ": " + f.Message
	}
	return f.Message
}

// repoPath places a repository-relative file under dir.
func repoPath(dir, file string) string {
	if file == "" {
		return ""
	}
	if dir == "" || dir == "." {
		return file
	}
	return path.Join(dir, file)
}

// findingKey is what makes two findings the same to a reader: severity,
// place and text. The rule is left out; two rules saying the same thing
// at the same place are one problem.
type findingKey struct {
	sev        int
	file, text string
	line       int
}

func keyOf(f Finding) findingKey {
	return findingKey{severityRank(f.Severity), f.File, findingText(f), f.Line}
}

// severityCounts says "3 errors, 1 warning" for the findings given.
func severityCounts(findings []Finding) string {
	var n [3]int
	for _, f := range findings {
		n[severityRank(f.Severity)]++
	}
	var parts []string
	for i, what := range []string{"error", "warning", "note"} {
		if n[i] > 0 {
			parts = append(parts, Plural(n[i], what))
		}
	}
	return strings.Join(parts, ", ")
}

// Plural counts n of what: "1 error", "3 errors". Nouns whose plural is
// not what+"s" go through Count.
func Plural(n int, what string) string {
	return Count(n, what, what+"s")
}

// Count counts n with the singular one or the plural many: "1 reply",
// "2 replies".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// escapeData escapes a command's message the way the Actions runner
// unescapes it.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a command property value: as data, and also the
// separators of the property list.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// GitHubSummary is the content of a Markdown job summary.
type GitHubSummary struct {
	// Title is the level-2 heading the summary starts with.
	Title string
	// Intro is Markdown placed under the title: the verdict.
	Intro string
	// Report is rendered with Report.Markdown, then its findings are
	// tabulated, errors first, repeats dropped as for annotations, and
	// the same finding in several places (files or catalogs) one row.
	Report Report
	// Notes is Markdown placed at the end.
	Notes string
	// MaxFindings caps the rows of the findings table; 0 means
	// DefaultSummaryFindings.
	MaxFindings int
	// Dir places the findings' files, as AnnotationOptions.Dir does.
	Dir string
}

// WriteGitHubSummary writes s as GitHub-flavoured Markdown, for appending to
// $GITHUB_STEP_SUMMARY. Several summaries may be appended to the same file,
// so it begins with its own heading and ends with a blank line.
func WriteGitHubSummary(w io.Writer, s GitHubSummary) error {
	limit := s.MaxFindings
	if limit <= 0 {
		limit = DefaultSummaryFindings
	}
	var b strings.Builder
	if s.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", oneLine(s.Title))
	}
	if intro := strings.TrimSpace(s.Intro); intro != "" {
		b.WriteString(intro)
		b.WriteString("\n\n")
	}
	b.WriteString(s.Report.Markdown())

	// Which check reported a finding is worth a column, so the findings
	// are ordered and de-duplicated with their check alongside.
	type row struct {
		check string
		f     Finding
	}
	var rows []row
	seen := map[findingKey]bool{}
	for _, res := range s.Report.Results {
		for _, f := range res.Findings {
			if k := keyOf(f); !seen[k] {
				seen[k] = true
				rows = append(rows, row{res.Name, f})
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Compare(severityRank(a.f.Severity), severityRank(b.f.Severity))
	})
	// The same finding in several places (one bundle removed from each
	// of thirteen catalogs) is one row that counts its places; the
	// annotations keep each place.
	type sameKey struct {
		check, rule, text string
		sev               int
	}
	var groups [][]row
	at := map[sameKey]int{}
	for _, r := range rows {
		k := sameKey{r.check, r.f.Rule, findingText(r.f), severityRank(r.f.Severity)}
		if i, ok := at[k]; ok {
			groups[i] = append(groups[i], r)
			continue
		}
		at[k] = len(groups)
		groups = append(groups, []row{r})
	}
	if len(groups) > 0 {
		b.WriteString("\n### Findings\n\n| Severity | Check | Location | Rule | Message |\n| --- | --- | --- | --- | --- |\n")
		for i, g := range groups {
			if i == limit {
				var rest []Finding
				for _, g := range groups[limit:] {
					for _, r := range g {
						rest = append(rest, r.f)
					}
				}
				fmt.Fprintf(&b, "\n... and %d more (%s).\n", len(rest), severityCounts(rest))
				break
			}
			r := g[0]
			loc := repoPath(s.Dir, r.f.File)
			if loc != "" && r.f.Line > 0 {
				loc += ":" + strconv.Itoa(r.f.Line)
			}
			if len(g) > 1 {
				loc += fmt.Sprintf(" and %s", Count(len(g)-1, "other place", "other places"))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", severityIcon(r.f.Severity), mdCell(r.check), textCell(loc), textCell(r.f.Rule),
				textCell(Truncate(findingText(r.f), summaryMessageRunes, Runes, "…")))
		}
	}
	if notes := strings.TrimSpace(s.Notes); notes != "" {
		b.WriteString("\n")
		b.WriteString(notes)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	// Intro, Notes and the checks' summaries are Markdown that quote
	// pull request data; whatever of it a reader would not see is
	// spelled out here, where the summary leaves for GitHub.
	_, err := io.WriteString(w, Visible(b.String()))
	return err
}

// textCell is plain text (a finding's message, a file name) as the
// content of a table cell: Markdown syntax in it is shown, not obeyed,
// and it stays on its row.
func textCell(s string) string {
	return strings.ReplaceAll(MarkdownText(s), "\n", " ")
}

func severityIcon(s Severity) string {
	switch severityRank(s) {
	case 0:
		return "❌ error"
	case 1:
		return "⚠️ warning"
	default:
		return "ℹ️ note"
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// GitHubOutput is one step output.
type GitHubOutput struct {
	Name, Value string
}

// outputDelimiter starts the heredoc delimiter of multi-line outputs.
const outputDelimiter = "CATALOGBOT_EOF"

// WriteGitHubOutputs writes outputs in the format of $GITHUB_OUTPUT:
// name=value, or for a value with line breaks a heredoc
// (name<<DELIMITER, the value, DELIMITER) whose delimiter does not occur in
// the value, so a value cannot end its own heredoc and smuggle in another
// output.
func WriteGitHubOutputs(w io.Writer, outputs []GitHubOutput) error {
	var b strings.Builder
	for _, o := range outputs {
		if o.Name == "" || strings.ContainsAny(o.Name, "=<\r\n") {
			return fmt.Errorf("invalid step output name %q", o.Name)
		}
		if !strings.ContainsAny(o.Value, "\r\n") {
			fmt.Fprintf(&b, "%s=%s\n", o.Name, o.Value)
			continue
		}
		delim := outputDelimiter
		for i := 1; strings.Contains(o.Value, delim); i++ {
			delim = outputDelimiter + "_" + strconv.Itoa(i)
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o.Name, delim, o.Value, delim)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
