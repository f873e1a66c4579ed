package replay

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
)

// maxFindings is how many error findings of one check the text shows per
// commit; the JSON output has them all.
const maxFindings = 5

// WriteText writes the report for a terminal: each commit, oldest first,
// with each check's verdict and what would block its merge, then the
// summaries and, for two policies, the flips.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Backtest of %s at %s: %s touching a catalog root, oldest first; policy: %s.\n",
		r.Repo, change.ShortSHA(r.Head), checks.Count(len(r.Commits), "commit", "commits"), policyNames(r.Policies))
	switch r.HistoryEnd {
	case "root":
		b.WriteString("The walk reached the first commit.\n")
	case "missing":
		b.WriteString("The walk stopped where parent commits are missing (a shallow clone).\n")
	}
	for _, c := range r.Commits {
		b.WriteByte('\n')
		fmt.Fprintf(&b, "%s %s %s\n", change.ShortSHA(c.SHA), c.Time.Format("2006-01-02"), checks.VisibleLine(c.Subject))
		if len(c.Roots) > 0 {
			fmt.Fprintf(&b, "  roots: %s\n", strings.Join(c.Roots, ", "))
		}
		if c.Unreadable != nil {
			where := ""
			if c.Unreadable.Path != "" {
				where = " (" + checks.VisibleLine(c.Unreadable.Path) + ")"
			}
			fmt.Fprintf(&b, "  unreadable: %s%s\n", c.Unreadable.Reason, where)
			continue
		}
		for _, rv := range c.Reviews {
			writeReview(&b, rv, len(c.Reviews) > 1)
		}
	}
	for _, s := range r.Summaries {
		writeSummary(&b, s)
	}
	if r.Flips != nil {
		fmt.Fprintf(&b, "\nVerdicts that flip from %s to %s: %d\n", r.Policies[0], r.Policies[1], len(r.Flips))
		for _, f := range r.Flips {
			fmt.Fprintf(&b, "  %s %s: %s -> %s\n", change.ShortSHA(f.SHA), checks.VisibleLine(f.Subject), briefText(f.From), briefText(f.To))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func policyNames(names []string) string {
	if len(names) == 1 && names[0] == "base" {
		return "each base commit's own"
	}
	return strings.Join(names, " vs ")
}

func writeReview(b *strings.Builder, rv Review, named bool) {
	indent := "  "
	if named {
		fmt.Fprintf(b, "  under %s:\n", rv.Policy)
		indent = "    "
	}
	fmt.Fprintf(b, "%sverdict: %s (%s)\n", indent, rv.Verdict, rv.Title)
	if len(rv.PolicyFindings) > 0 {
		var fb strings.Builder
		_ = checks.WriteText(&fb, rv.PolicyFindings, "")
		b.WriteString(indentLines(fb.String(), indent+"  "))
	}
	for _, c := range rv.Checks {
		fmt.Fprintf(b, "%s%-11s %s", indent, c.Name, c.Conclusion)
		if c.Errors+c.Warnings > 0 {
			fmt.Fprintf(b, " (%s, %s)", checks.Count(c.Errors, "error", "errors"), checks.Count(c.Warnings, "warning", "warnings"))
		}
		b.WriteByte('\n')
		shown := c.Findings[:min(len(c.Findings), maxFindings)]
		var fb strings.Builder
		_ = checks.WriteText(&fb, shown, "")
		if more := len(c.Findings) - len(shown); more > 0 {
			fmt.Fprintf(&fb, "... and %d more\n", more)
		}
		if c.Summary != "" && c.Conclusion == checks.Failure {
			fb.WriteString(checks.Visible(firstLine(c.Summary)) + "\n")
		}
		b.WriteString(indentLines(fb.String(), indent+"  "))
	}
	if rv.Owners != nil && !rv.Owners.Approved {
		for _, n := range rv.Owners.Needs {
			who := "nobody can approve it"
			if len(n.Approvers) > 0 {
				who = strings.Join(n.Approvers, ", ")
			}
			fmt.Fprintf(b, "%sneeds approval under %s: %s\n", indent, checks.VisibleLine(n.File), checks.VisibleLine(who))
		}
	}
	if rv.Mergeable {
		fmt.Fprintf(b, "%swould merge\n", indent)
	} else {
		fmt.Fprintf(b, "%sblocked: %s\n", indent, checks.VisibleLine(strings.Join(rv.Blocking, "; ")))
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func indentLines(s, indent string) string {
	if s == "" {
		return ""
	}
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = indent + l
	}
	return strings.Join(lines, "") + "\n"
}

func writeSummary(b *strings.Builder, s Summary) {
	fmt.Fprintf(b, "\nSummary under %s: %s, %d unreadable, %d reviewed", policyNames([]string{s.Policy}),
		checks.Count(s.Commits, "commit", "commits"), s.Unreadable, s.Commits-s.Unreadable)
	if s.InvalidPolicy > 0 {
		fmt.Fprintf(b, " (%d with an invalid policy)", s.InvalidPolicy)
	}
	b.WriteString(".\n")
	fmt.Fprintf(b, "  verdicts: %s; would merge: %d\n", counts(s.Verdicts), s.Mergeable)
	for _, name := range slices.Sorted(maps.Keys(s.Checks)) {
		fmt.Fprintf(b, "  %-11s %s\n", name, counts(s.Checks[name]))
	}
	fmt.Fprintf(b, "  content checks failed on %s\n", checks.Count(len(s.ContentFailures), "commit", "commits"))
	for _, f := range s.ContentFailures {
		fmt.Fprintf(b, "    %s %s: %s\n", change.ShortSHA(f.SHA), checks.VisibleLine(f.Subject), strings.Join(f.Checks, ", "))
	}
}

// counts lists conclusions and their counts in a fixed order.
func counts(m map[checks.Conclusion]int) string {
	var parts []string
	for _, c := range []checks.Conclusion{checks.Success, checks.Failure, checks.Pending, checks.Neutral} {
		if m[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, m[c]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func briefText(b Brief) string {
	s := string(b.Verdict)
	if len(b.Failed) > 0 {
		s += " (" + strings.Join(b.Failed, ", ") + ")"
	}
	if b.Mergeable {
		s += ", would merge"
	}
	return s
}
