package checks

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// Conclusion is how a check ended, in the words of GitHub check runs, and
// Pending, which GitHub has no word for.
type Conclusion string

const (
	Success Conclusion = "success"
	Failure Conclusion = "failure"
	// Neutral is a check that had nothing to judge (a check turned off):
	// it neither passes nor blocks on its own.
	Neutral Conclusion = "neutral"
	// Pending is a check that could not judge: a registry it needed was
	// rate limiting, did not answer or could not be reached, or the check
	// ran out of time. It is not neutral, because GitHub counts a neutral
	// check run as passing: a pending check never passes. The App keeps
	// its check run in progress and tries again later; the Action and the
	// command line fail. Result.Waits say what it waits for.
	Pending Conclusion = "pending"
)

// Check is one named check of a change. T is what the checks read; it is a
// type parameter so that this package stays free of the packages that
// describe changes and policies, which themselves report Findings.
type Check[T any] interface {
	Name() string
	// Run judges in. It must honour ctx and report its own problems in
	// the Result: a check that cannot reach a verdict concludes pending
	// (something outside may answer later) or failure with a summary
	// saying why, so one broken check never hides the others.
	Run(ctx context.Context, in T) Result
}

// Result is what one check concluded.
type Result struct {
	Name       string     `json:"name"`
	Conclusion Conclusion `json:"conclusion"`
	Findings   []Finding  `json:"findings"`
	// Summary is Markdown, for the check run and the PR comment.
	Summary string `json:"summary"`
	// Waits say what a pending result could not judge without; empty
	// for every other conclusion.
	Waits []Wait `json:"waits,omitempty"`
}

// Why a check could not judge (Wait.Class). The first two are the
// registry failure classes (registry.ClassRateLimited, ClassTransport)
// by value: this package imports none of its users.
const (
	WaitRateLimited = "rate_limited" // the registry kept answering 429
	WaitTransport   = "transport"    // the registry timed out, failed or could not be reached
	WaitDeadline    = "deadline"     // the check ran out of time
	WaitCancelled   = "cancelled"    // the check was stopped (the service shutting down)
	// WaitUnreadable is a file the check needed whose git object is
	// missing (a partial clone) or misread: it was never read, so it is
	// neither valid nor invalid. Wait.Path and Wait.Object name it.
	WaitUnreadable = "unreadable"
)

// Wait is one thing a pending check could not judge without.
type Wait struct {
	// Registry is the registry host that could not be asked; "" when
	// the check itself was cut short.
	Registry string `json:"registry,omitempty"`
	// Class says why; see WaitRateLimited and the others.
	Class string `json:"class"`
	// Count is how many references wait on it; 0 when not counted.
	Count int `json:"count,omitempty"`
	// Path, Object and Commit name, for WaitUnreadable, the repository
	// path, the git object that could not be read and the commit whose
	// tree holds it.
	Path   string `json:"path,omitempty"`
	Object string `json:"object,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// String says what w waits for in a sentence fragment. It is written
// from the class alone, never from what a registry answered: a registry
// named in a pull request is anyone's, and its answers are no one's to
// read in a check run.
func (w Wait) String() string {
	what := "the check"
	if w.Registry != "" {
		what = "registry " + w.Registry
		if w.Count > 0 {
			what += " (" + Count(w.Count, "reference", "references") + ")"
		}
	}
	switch w.Class {
	case WaitRateLimited:
		return what + " rate limited the requests"
	case WaitTransport:
		return what + " did not answer in time or could not be reached"
	case WaitDeadline:
		return what + " ran out of time before it could judge"
	case WaitCancelled:
		return what + " was stopped before it could judge"
	case WaitUnreadable:
		return fmt.Sprintf("%s could not read %s (git object %s)", what, w.Path, w.Object)
	}
	return what + ": " + w.Class
}

// WaitList says what waits wait for, in one sentence fragment.
func WaitList(waits []Wait) string {
	parts := make([]string, len(waits))
	for i, w := range waits {
		parts[i] = w.String()
	}
	return strings.Join(parts, "; ")
}

// AddWait adds w to waits, which it keeps sorted by registry and class,
// counting it into an equal entry (same registry and class) when there is
// one: the same waits read the same whatever order they were met in.
func AddWait(waits []Wait, w Wait) []Wait {
	i, found := slices.BinarySearchFunc(waits, w, func(a, b Wait) int {
		return cmp.Or(cmp.Compare(a.Registry, b.Registry), cmp.Compare(a.Class, b.Class))
	})
	if found {
		waits[i].Count += w.Count
		return waits
	}
	return slices.Insert(waits, i, w)
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

// Passed reports whether every check succeeded. Neutral and pending do not
// count as success: a check that did not judge has not cleared the change.
func (r Report) Passed() bool {
	for _, res := range r.Results {
		if res.Conclusion != Success {
			return false
		}
	}
	return true
}

// Markdown renders the report as a table of conclusions followed by each
// check's summary under its own heading. The summaries quote pull request
// data, so what a reader would not see in them is spelled out (Visible).
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
	return Visible(b.String())
}

func icon(c Conclusion) string {
	switch c {
	case Success:
		return "✅"
	case Failure:
		return "❌"
	case Pending:
		return "⏳"
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
	if HasErrors(findings) {
		return Failure
	}
	return Success
}

// HasErrors says whether any finding is an error.
func HasErrors(findings []Finding) bool {
	for _, f := range findings {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}
