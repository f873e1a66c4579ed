package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/olmv1"
	"github.com/catalogbot/catalogbot/policy"
)

// OLMv1Name is the name of the OLM v1 readiness check.
const OLMv1Name = "olmv1"

// Readiness is the OLM v1 readiness (package olmv1) of one package the
// change touches, in one catalog root, on the base and on the head.
type Readiness struct {
	Root    string `json:"root"`
	Package string `json:"package"`
	// Base and Head are nil where the side lacks the package.
	Base *olmv1.Package `json:"base,omitempty"`
	Head *olmv1.Package `json:"head,omitempty"`
	// Findings are the head's findings, placed under Root; Introduced
	// says, index by index, which of them the base does not have.
	Findings   []checks.Finding `json:"findings,omitempty"`
	Introduced []bool           `json:"introduced,omitempty"`
}

// Changed says whether the change alters what OLM v1 makes of the
// package: whether it installs it and why not, or how many of its
// upgrades diverge from OLM v0.
func (r Readiness) Changed() bool {
	if (r.Base == nil) != (r.Head == nil) {
		return true
	}
	if r.Base == nil {
		return false
	}
	return r.Base.Installable != r.Head.Installable || !slices.Equal(r.Base.Why, r.Head.Why) ||
		len(r.Base.Divergences) != len(r.Head.Divergences)
}

// Verdict is p as one phrase: "installable", or "not installable: why".
func Verdict(p *olmv1.Package) string {
	switch {
	case p == nil:
		return "absent"
	case p.Installable:
		return "installable"
	}
	return "not installable: " + strings.Join(p.Why, "; ")
}

// OLMv1Readiness judges, on the base and on the head, every package the
// change touches, as OLM v1 would install and upgrade it. It is the
// summary's section under olmv1: report and the olmv1 check's input
// otherwise. Packages are loaded whole, once per Input.
func OLMv1Readiness(ctx context.Context, in *Input) ([]Readiness, error) {
	cats, err := in.touched.load(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []Readiness
	// Each tree is judged once (see perTree).
	type judgement struct {
		p    *fbc.Placed
		pkgs string
	}
	judged := map[judgement]*olmv1.Result{}
	check := func(p *fbc.Placed, pkgs []string) *olmv1.Result {
		return perTree(judged, judgement{p, strings.Join(pkgs, "\x00")}, func() *olmv1.Result {
			return olmv1.Check(p, olmv1.Options{Packages: pkgs, Memo: &in.olmv1Memo})
		})
	}
	for _, c := range cats {
		if len(c.pkgs) == 0 {
			continue
		}
		head := check(c.head, c.pkgs)
		var base *olmv1.Result
		if c.base != nil {
			base = check(c.base, c.pkgs)
		}
		for _, name := range c.pkgs {
			r := Readiness{Root: c.root, Package: name, Head: packageOf(head, name)}
			var had []checks.Finding
			if base != nil {
				r.Base = packageOf(base, name)
				had = ofPackage(base.Findings, name)
			}
			for _, f := range ofPackage(head.Findings, name) {
				r.Introduced = append(r.Introduced, !slices.ContainsFunc(had, func(b checks.Finding) bool { return sameFinding(b, f) }))
				r.Findings = append(r.Findings, f)
			}
			r.Findings = prefixed(r.Findings, c.root)
			out = append(out, r)
		}
	}
	return out, nil
}

// packageOf is the verdict on package name in res, nil when the side has
// no bundle of it.
func packageOf(res *olmv1.Result, name string) *olmv1.Package {
	for i := range res.Packages {
		if p := &res.Packages[i]; p.Name == name && p.Bundles > 0 {
			return p
		}
	}
	return nil
}

func ofPackage(fs []checks.Finding, pkg string) []checks.Finding {
	var out []checks.Finding
	for _, f := range fs {
		if f.Package == pkg {
			out = append(out, f)
		}
	}
	return out
}

// sameFinding says whether two findings are the same fact, wherever
// their lines moved: the rule, the bundle, the channel and what it says.
func sameFinding(a, b checks.Finding) bool {
	return a.Rule == b.Rule && a.Bundle == b.Bundle && a.Channel == b.Channel && a.Message == b.Message
}

// OLMv1 is the OLM v1 readiness check, run under olmv1: warning or error
// (under report, the default, the readiness is a section of the summary
// instead and never fails). Under warning every installability finding of
// the touched packages is a warning; under error, those the change
// introduces are errors and fail the check, and those the base has
// already stay warnings. A divergent upgrade (V4) is a note in both: both
// upgrades are valid, the finding says which one each OLM takes.
type OLMv1 struct{}

func (OLMv1) Name() string { return OLMv1Name }

func (OLMv1) Run(ctx context.Context, in *Input) checks.Result {
	rs, err := OLMv1Readiness(ctx, in)
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read the touched packages: %v", err)}
	}
	strict := in.Policy.OLMv1 == policy.OLMv1Error
	var findings []checks.Finding
	ready, introduced := 0, 0
	for _, r := range rs {
		if r.Head != nil && r.Head.Installable {
			ready++
		}
		for i, f := range r.Findings {
			switch {
			case f.Rule == olmv1.RuleDivergence:
				f.Severity = checks.SeverityNote
			case strict && r.Introduced[i]:
				f.Severity = checks.SeverityError
				introduced++
			default:
				f.Severity = checks.SeverityWarning
				if strict {
					f.Message += " (pre-existing: the base has it too)"
				}
			}
			findings = append(findings, f)
		}
	}
	if len(rs) == 0 {
		return checks.Result{Conclusion: checks.Success, Summary: "The change touches no package."}
	}
	summary := fmt.Sprintf("OLM v1 installs %d of the %s the change touches.", ready, checks.Count(len(rs), "package", "packages"))
	if introduced > 0 {
		return checks.Result{Conclusion: checks.Failure, Findings: findings,
			Summary: summary + fmt.Sprintf(" The change brings in %s that OLM v1 does not install (olmv1: error).", checks.Count(introduced, "bundle problem", "bundle problems"))}
	}
	return checks.Result{Conclusion: checks.Success, Findings: findings, Summary: summary}
}
