package olmv1

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/catalogbot/catalogbot/checks"
)

// Summary counts a Result the way a reader of a whole catalog asks: how
// many packages OLM v1 installs, why the others fail, and how many
// upgrade differently.
type Summary struct {
	Packages    int `json:"packages"`
	Installable int `json:"installable"`
	// Reasons counts the packages each reason keeps out, most first.
	Reasons []ReasonCount `json:"reasons,omitempty"`
	// Divergent counts the packages with at least one divergent upgrade,
	// and Divergences the divergent upgrades of all of them.
	Divergent   int `json:"divergentPackages"`
	Divergences int `json:"divergences"`
}

// ReasonCount is how many packages one reason keeps out.
type ReasonCount struct {
	Reason   string `json:"reason"`
	Packages int    `json:"packages"`
}

// Summarize counts r.
func Summarize(r *Result) Summary {
	s := Summary{Packages: len(r.Packages)}
	by := map[string]int{}
	for _, p := range r.Packages {
		if p.Installable {
			s.Installable++
		}
		for _, w := range p.Why {
			by[w]++
		}
		if len(p.Divergences) > 0 {
			s.Divergent++
			s.Divergences += len(p.Divergences)
		}
	}
	for w, n := range by {
		s.Reasons = append(s.Reasons, ReasonCount{w, n})
	}
	slices.SortFunc(s.Reasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Packages, a.Packages), cmp.Compare(a.Reason, b.Reason))
	})
	return s
}

// Formats are the formats Write writes.
var Formats = []string{"text", "json", "markdown"}

// Write writes the whole catalog's table, one package a line (its name,
// whether OLM v1 installs it, why not, and how many of its upgrades
// diverge), and the summary, in format (one of Formats).
func Write(w io.Writer, r *Result, format string) error {
	s := Summarize(r)
	switch format {
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(struct {
			Summary  Summary   `json:"summary"`
			Packages []Package `json:"packages"`
		}{s, r.Packages})
	case "text":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PACKAGE\tINSTALLABLE\tWHY NOT\tDIVERGENT UPGRADES")
		for _, p := range r.Packages {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", checks.VisibleLine(p.Name), yesNo(p.Installable), checks.VisibleLine(cmp.Or(strings.Join(p.Why, "; "), "-")), len(p.Divergences))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "\n%s\n", summaryLine(s))
		for _, rc := range s.Reasons {
			fmt.Fprintf(w, "  %d  %s\n", rc.Packages, checks.VisibleLine(rc.Reason))
		}
		return err
	case "markdown":
		fmt.Fprintf(w, "%s\n\n", summaryLine(s))
		if len(s.Reasons) > 0 {
			fmt.Fprintln(w, "| packages | reason |\n|---:|---|")
			for _, rc := range s.Reasons {
				fmt.Fprintf(w, "| %d | %s |\n", rc.Packages, cell(rc.Reason))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "| package | installable | why not | divergent upgrades |\n|---|---|---|---:|")
		for _, p := range r.Packages {
			fmt.Fprintf(w, "| %s | %s | %s | %d |\n", cell(p.Name), yesNo(p.Installable), cell(strings.Join(p.Why, "; ")), len(p.Divergences))
		}
		return nil
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// summaryLine is the summary in one sentence.
func summaryLine(s Summary) string {
	return fmt.Sprintf("OLM v1 installs %d of %s; %s %s upgrades that differ from OLM v0 (%s).",
		s.Installable, checks.Count(s.Packages, "package", "packages"),
		checks.Count(s.Divergent, "package", "packages"), hasHave(s.Divergent), checks.Count(s.Divergences, "upgrade", "upgrades"))
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// cell is s as a Markdown table cell shows it.
func cell(s string) string {
	return checks.MarkdownText(checks.VisibleLine(s))
}
