package checks

import (
	"context"
	"fmt"
	"strings"
)

// Conclusion is how a check ended, in the words of GitHub check runs.
type Conclusion string

const (
	Success Conclusion = "success"
	Failure Conclusion = "failure"
	// Neutral is a check that had nothing to judge, or could not judge:
	// it neither passes nor blocks on its own.
	Neutral Conclusion = "neutral"
)

// Check is one named check of a change. T is what the checks read; it is a
// type parameter so that this package stays free of the packages that
// describe changes and policies, which themselves report Findings.
type Check[T any] interface {
	Name() string
	// Run judges in. It must honour ctx and report its own problems in
	// the Result: a check that cannot reach a verdict concludes neutral
	// or failure with a summary saying why, so one broken check never
	// hides the others.
	Run(ctx context.Context, in T) Result
}

// Result is what one check concluded.
type Result struct {
	Name       string     `json:"name"`
	Conclusion Conclusion `json:"conclusion"`
	Findings   []Finding  `json:"findings"`
	// Summary is Markdown, for the check run and the PR comment.
	Summary string `json:"summary"`
}

// Report is the results of every check of one run, in check-name order.
type Report struct {
	Results []Result `json:"results"`
}

// Conclusions maps each check to its conclusion.
func (r Report) Conclusions() map[string]Conclusion {
	m := make(map[string]Conclusion, len(r.Results))
	for _, res := range r.Results {
		m[res.Name] = res.Conclusion
	}
	return m
}

// Passed reports whether every check succeeded. Neutral does not count as
// success: a check that could not judge has not cleared the change.
func (r Report) Passed() bool {
	for _, res := range r.Results {
		if res.Conclusion != Success {
			return false
		}
	}
	return true
}

// Markdown renders the report as a table of conclusions followed by each
// check's summary under its own heading.
func (r Report) Markdown() string {
	var b strings.Builder
	b.WriteString("| Check | Conclusion |\n| --- | --- |\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "| %s | %s %s |\n", mdCell(res.Name), icon(res.Conclusion), res.Conclusion)
	}
	for _, res := range r.Results {
		if res.Summary == "" {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n%s\n", res.Name, strings.TrimRight(res.Summary, "\n"))
	}
	return b.String()
}

func icon(c Conclusion) string {
	switch c {
	case Success:
		return "✅"
	case Failure:
		return "❌"
	default:
		return "➖"
	}
}

// mdCell keeps a value from breaking out of its table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// ConclusionOf is failure when any finding is an error and success
// otherwise: warnings and notes never fail a check.
func ConclusionOf(findings []Finding) Conclusion {
	for _, f := range findings {
		if f.Severity == SeverityError {
			return Failure
		}
	}
	return Success
}
