package review

import (
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// olmv1Section is the summary's OLM v1 readiness section under olmv1:
// report (the default), where it is no check and never fails: each touched
// package whose readiness the change alters, before and after. A package
// the change leaves as it was costs nothing; under warning and error the
// olmv1 check says it all.
func (o *Outcome) olmv1Section() string {
	changed := o.olmv1Changed()
	if len(changed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n#### OLM v1 readiness\n\nWhat OLM v1 makes of the packages whose readiness this change alters (`V` rules, reported only: `olmv1` in the policy can make them a check).\n\n")
	for _, r := range changed {
		fmt.Fprintf(&b, "- %s in %s: %s\n", checks.MarkdownText(r.Package), checks.MarkdownText(r.Root), checks.MarkdownText(readinessChange(r)))
	}
	return b.String()
}

// writeOLMv1Text is olmv1Section for a terminal.
func (o *Outcome) writeOLMv1Text(b *strings.Builder) {
	changed := o.olmv1Changed()
	if len(changed) == 0 {
		return
	}
	b.WriteString("olm v1 readiness: the packages whose readiness this change alters\n")
	for _, r := range changed {
		fmt.Fprintf(b, "  %s in %s: %s\n", checks.VisibleLine(r.Package), checks.VisibleLine(r.Root), checks.VisibleLine(readinessChange(r)))
	}
}

func (o *Outcome) olmv1Changed() []pipeline.Readiness {
	var out []pipeline.Readiness
	for _, r := range o.Readiness {
		if r.Changed() {
			out = append(out, r)
		}
	}
	return out
}

// readinessChange says what the change did to a package's readiness.
func readinessChange(r pipeline.Readiness) string {
	s := pipeline.Verdict(r.Head)
	if r.Head != nil && len(r.Head.Divergences) > 0 {
		s += fmt.Sprintf(", %s differently from OLM v0", checks.Count(len(r.Head.Divergences), "upgrade", "upgrades"))
	}
	was := pipeline.Verdict(r.Base)
	if r.Base != nil && len(r.Base.Divergences) > 0 {
		was += fmt.Sprintf(", %s differently", checks.Count(len(r.Base.Divergences), "upgrade", "upgrades"))
	}
	return s + " (was: " + was + ")"
}
