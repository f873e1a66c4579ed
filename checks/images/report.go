package images

import (
	"fmt"
	"github.com/catalogbot/catalogbot/checks/registry"
	"io"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
)

// Document is the JSON form of a verification: every reference with its
// verdict, and the problems found in the inputs themselves (a catalog.yaml
// that does not parse), which kept some references from being checked.
type Document struct {
	References []Result         `json:"references"`
	Findings   []checks.Finding `json:"findings,omitempty"`
}

// WriteJSON writes the results and input findings as a Document.
func WriteJSON(w io.Writer, results []Result, findings []checks.Finding) error {
	if results == nil {
		results = []Result{}
	}
	return checks.WriteJSON(w, Document{References: results, Findings: findings})
}

// maxAlso is how many further locations a text line names before it only
// counts them; JSON lists them all.
const maxAlso = 3

// WriteText prints the input findings, then one line per failing reference,
// compiler style, then a summary:
//
//	file:line: package/bundle: not_found: quay.io/x/y:v1: no such image in the registry (404 Not Found) [also at file:line]
//	images: 12 references: 10 ok, 1 not_found, 1 policy
func WriteText(w io.Writer, results []Result, findings []checks.Finding) error {
	var b strings.Builder
	if err := checks.WriteText(&b, findings, ""); err != nil {
		return err
	}
	for _, r := range results {
		if r.OK() {
			continue
		}
		b.WriteString(where(r.Locations))
		fmt.Fprintf(&b, "%s: %s: %s", r.Class, r.Image, r.Message)
		if len(r.Locations) > 1 {
			also := r.Locations[1:]
			var s []string
			for _, l := range also[:min(len(also), maxAlso)] {
				s = append(s, position(l))
			}
			more := ""
			if len(also) > maxAlso {
				more = fmt.Sprintf(" and %d more", len(also)-maxAlso)
			}
			fmt.Fprintf(&b, " [also at %s%s]", strings.Join(s, ", "), more)
		}
		b.WriteByte('\n')
	}
	b.WriteString(Summary(results))
	b.WriteByte('\n')
	// Image references and file names are the catalog's: what a
	// terminal would obey rather than show is spelled out.
	_, err := io.WriteString(w, checks.Visible(b.String()))
	return err
}

// Summary counts the results by class: "images: 12 references: 10 ok,
// 1 not_found, 1 policy".
func Summary(results []Result) string {
	counts := map[registry.Class]int{}
	for _, r := range results {
		counts[r.Class]++
	}
	var parts []string
	for _, c := range registry.Classes {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[c], c))
		}
	}
	noun := "references"
	if len(results) == 1 {
		noun = "reference"
	}
	if len(parts) == 0 {
		return "images: no references"
	}
	return fmt.Sprintf("images: %d %s: %s", len(results), noun, strings.Join(parts, ", "))
}

// where is the "file:line: object: " prefix of a line about the first
// location.
func where(locs []Location) string {
	if len(locs) == 0 {
		return ""
	}
	l := locs[0]
	var b strings.Builder
	if p := position(l); p != "" && l.File != "" {
		b.WriteString(p)
		b.WriteString(": ")
	}
	if o := object(l); o != "" {
		b.WriteString(o)
		b.WriteString(": ")
	}
	return b.String()
}

// position is "file:line", "file", or what the location is when it has no
// file.
func position(l Location) string {
	switch {
	case l.File != "" && l.Line > 0:
		return fmt.Sprintf("%s:%d", l.File, l.Line)
	case l.File != "":
		return l.File
	case l.Kind == KindBase:
		return "base image"
	}
	return string(l.Kind)
}

// object names what the location belongs to: the bundle
// ("package/bundle"), the catalog.yaml entry, or the base image.
func object(l Location) string {
	switch {
	case l.Package != "" && l.Bundle != "":
		return l.Package + "/" + l.Bundle
	case l.Package != "":
		return l.Package
	case l.Kind == KindReference && l.Name != "":
		return "reference " + l.Name
	case l.Kind == KindBase:
		return "base image"
	}
	return ""
}

// Rules describes the rule ids of Findings, one per failure class.
var Rules = []checks.Rule{
	{ID: RuleID(registry.ClassNotFound), Name: "ImageNotFound", Description: "The registry has no such image."},
	{ID: RuleID(registry.ClassUnauthorized), Name: "ImageUnauthorized", Description: "The registry refused access to the image."},
	{ID: RuleID(registry.ClassRateLimited), Name: "ImageRateLimited", Description: "The registry rate limited the check."},
	{ID: RuleID(registry.ClassTransport), Name: "ImageTransport", Description: "The registry could not be reached or gave no usable answer."},
	{ID: RuleID(registry.ClassPolicy), Name: "ImagePolicy", Description: "The image reference breaks the repository's image policy."},
}

// RuleID is the rule id of findings of a class: IM1 for not found.
func RuleID(c registry.Class) string {
	if id, ok := classRules[c]; ok {
		return id
	}
	return "IM0"
}

// classRules numbers the failure classes for rule ids. The numbers are
// part of the output and are never reused.
var classRules = map[registry.Class]string{
	registry.ClassNotFound:     "IM1",
	registry.ClassUnauthorized: "IM2",
	registry.ClassRateLimited:  "IM3",
	registry.ClassTransport:    "IM4",
	registry.ClassPolicy:       "IM5",
}

// Findings turns failing results into findings, one per location, for the
// reporters that annotate files (SARIF, GitHub annotations). Failures that
// say nothing about the reference itself (rate limits, transport) are
// warnings: the check could not decide, which is not the same as wrong.
func Findings(results []Result) []checks.Finding {
	var out []checks.Finding
	for _, r := range results {
		if r.OK() {
			continue
		}
		sev := checks.SeverityError
		if r.Class == registry.ClassRateLimited || r.Class == registry.ClassTransport {
			sev = checks.SeverityWarning
		}
		for _, l := range r.Locations {
			out = append(out, checks.Finding{
				Rule:     RuleID(r.Class),
				Severity: sev,
				File:     l.File,
				Line:     l.Line,
				Package:  l.Package,
				Bundle:   l.Bundle,
				Message:  fmt.Sprintf("image %s: %s", r.Image, r.Message),
			})
		}
	}
	return out
}
