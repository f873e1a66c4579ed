package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/publisher/catalogyaml"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// References checks the repository's catalog.yaml reference list: the head
// version parses, and each entry the change adds or changes renders (as
// `opm render` would) to a catalog that validates. Who may change each
// entry is the owners check's business, entry by entry; the summary lists
// the entries and the paths they are owned as.
type References struct{}

// ReferencesName is the name of the reference list check.
const ReferencesName = "references"

func (References) Name() string { return ReferencesName }

// maxRenders bounds the references rendered at once: each pulls a whole
// catalog image.
const maxRenders = 4

func (References) Run(ctx context.Context, in *Input) checks.Result {
	file := referenceList(in)
	if file == "" {
		return checks.Result{Conclusion: checks.Success, Summary: "The repository has no reference list."}
	}
	head, err := readOptional(in.Head, file)
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read %s: %v", file, err)}
	}
	base, err := readOptional(in.Base, file)
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read %s on the base: %v", file, err)}
	}
	switch {
	case head == nil && base == nil:
		return checks.Result{Conclusion: checks.Success, Summary: fmt.Sprintf("The reference list %s does not exist.", file)}
	case head == nil:
		return checks.Result{Conclusion: checks.Success, Summary: fmt.Sprintf("The change removes the reference list %s.", file)}
	case base != nil && bytes.Equal(head, base):
		return checks.Result{Conclusion: checks.Success, Summary: fmt.Sprintf("The change leaves %s as it is.", file)}
	}

	f, findings := catalogyaml.Parse(file, head)
	d, diffFindings := owners.DiffReferenceList(file, base, head)
	// Parse and the diff both report a file that does not parse; the
	// parser's findings are the complete ones.
	if len(findings) == 0 {
		findings = diffFindings
	}
	if f == nil {
		return checks.Result{Conclusion: checks.ConclusionOf(findings), Findings: findings,
			Summary: fmt.Sprintf("%s does not parse.", file)}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "`%s`:", file)
	if len(d.References) == 0 && len(d.Fields) == 0 {
		b.WriteString(" no entry changed.\n")
	}
	b.WriteString("\n")
	var toRender []catalogyaml.Reference
	byName := map[string]catalogyaml.Reference{}
	for _, r := range f.References {
		if _, dup := byName[r.Name]; !dup {
			byName[r.Name] = r
		}
	}
	for _, rc := range d.References {
		fmt.Fprintf(&b, "- %s `%s`", rc.Change, rc.Name)
		if rc.To != "" {
			fmt.Fprintf(&b, " → `%s`", rc.To)
		}
		if len(rc.Paths) > 0 {
			fmt.Fprintf(&b, " (owned as `%s`)", strings.Join(rc.Paths, "`, `"))
		} else {
			b.WriteString(" (owned by the root approvers)")
		}
		b.WriteString("\n")
		if rc.Change == owners.RefRemoved {
			continue
		}
		if r, ok := byName[rc.Name]; ok && r.Image != "" {
			toRender = append(toRender, r)
		}
	}
	if len(d.Fields) > 0 {
		fmt.Fprintf(&b, "- changed outside the entries: %s (owned by the root approvers)\n", strings.Join(d.Fields, ", "))
	}

	res := checks.Result{Findings: findings}
	switch {
	case len(toRender) == 0:
	case in.Renderer == nil:
		res.Conclusion = checks.Neutral
		fmt.Fprintf(&b, "\nRendering is off: the %d added or changed reference(s) were not rendered.\n", len(toRender))
	default:
		res.Findings = append(res.Findings, renderAndValidate(ctx, in.Renderer, file, toRender)...)
		fmt.Fprintf(&b, "\nRendered and validated %d added or changed reference(s).\n", len(toRender))
	}
	if res.Conclusion == "" || checks.ConclusionOf(res.Findings) == checks.Failure {
		res.Conclusion = checks.ConclusionOf(res.Findings)
	}
	res.Summary = b.String()
	return res
}

// Rule ids of the references check's own findings.
const (
	RuleReferenceRender   = "RF1"
	RuleReferenceNotImage = "RF2"
)

// Rules describes the rule ids of the pipeline's own findings, for
// reporters that publish a catalogue. The checks report the engines'
// rules besides (fbc, owners, images, catalog.yaml).
var Rules = []checks.Rule{
	{ID: RuleLayout, Name: "PackageLayout", Description: "A package's content sits outside the directory of its name."},
	{ID: RuleReferenceRender, Name: "ReferenceRender", Description: "A catalog.yaml entry does not render, or renders to an invalid catalog."},
	{ID: RuleReferenceNotImage, Name: "ReferenceNotImage", Description: "A catalog.yaml entry is not a registry image reference."},
	{ID: RuleTemplateOutputStale, Name: "TemplateOutputStale", Description: "A change edits a catalog template, but its output directory does not hold what the template renders."},
	{ID: RuleTemplateOutputEdited, Name: "TemplateOutputEdited", Description: "A change edits a template's output directory so that it no longer holds what the unchanged template renders."},
}

// renderAndValidate renders each reference and validates what it renders
// to. Findings are placed on the entry's image line in the list: the
// rendered catalog exists nowhere in the repository.
func renderAndValidate(ctx context.Context, r *render.Renderer, file string, refs []catalogyaml.Reference) []checks.Finding {
	out := make([][]checks.Finding, len(refs))
	sem := make(chan struct{}, maxRenders)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = renderOne(ctx, r, file, ref)
		})
	}
	wg.Wait()
	var all []checks.Finding
	for _, fs := range out {
		all = append(all, fs...)
	}
	return all
}

func renderOne(ctx context.Context, r *render.Renderer, file string, ref catalogyaml.Reference) []checks.Finding {
	at := func(rule, msg string) checks.Finding {
		line := ref.ImageLine
		if line == 0 {
			line = ref.Line
		}
		return checks.Finding{Rule: rule, Severity: checks.SeverityError, File: file, Line: line,
			Message: fmt.Sprintf("reference %q (%s): %s", ref.Name, ref.Image, msg)}
	}
	if ref.Ref == nil {
		// An OCI layout or a path names something on the machine that
		// runs the check, which a pull request must not make it read.
		return []checks.Finding{at(RuleReferenceNotImage, "not a registry image reference; only registry images can be checked for a change")}
	}
	cfg, err := r.RenderOne(ctx, ref.Image)
	if err != nil {
		var re *render.RefError
		if errors.As(err, &re) {
			err = re.Err
		}
		return []checks.Finding{at(RuleReferenceRender, "does not render: "+err.Error())}
	}
	var buf bytes.Buffer
	if err := render.WriteJSON(&buf, cfg); err != nil {
		return []checks.Finding{at(RuleReferenceRender, "cannot be written out: "+err.Error())}
	}
	rendered := fstest.MapFS{"catalog.json": &fstest.MapFile{Data: buf.Bytes()}}
	res, err := fbc.Validate(ctx, rendered, fbc.Options{})
	if err != nil {
		return []checks.Finding{at(RuleReferenceRender, "validation stopped: "+err.Error())}
	}
	var out []checks.Finding
	for _, f := range res.Findings {
		g := at(f.Rule, "renders to an invalid catalog: "+f.Message)
		g.Package, g.Channel, g.Bundle = f.Package, f.Channel, f.Bundle
		out = append(out, g)
	}
	return out
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
