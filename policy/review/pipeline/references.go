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
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/owners"
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
	fmt.Fprintf(&b, "%s:", checks.Code(file))
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
		// Entry names and paths are the pull request's: code spans
		// they cannot close.
		fmt.Fprintf(&b, "- %s %s", rc.Change, checks.Code(rc.Name))
		if rc.To != "" {
			fmt.Fprintf(&b, " → %s", checks.Code(rc.To))
		}
		if len(rc.Paths) > 0 {
			paths := make([]string, len(rc.Paths))
			for i, p := range rc.Paths {
				paths[i] = checks.Code(p)
			}
			fmt.Fprintf(&b, " (owned as %s)", strings.Join(paths, ", "))
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
		outcomes := renderAndValidate(ctx, in.Renderer, in.Policy.Images, file, toRender, in.Policy.Limits.ReferenceTimeout, in.Breaker, in.imageBudget(), in.Policy.Limits.Images)
		var waits []checks.Wait
		for _, o := range outcomes {
			res.Findings = append(res.Findings, o.findings...)
			if o.wait != nil {
				waits = checks.AddWait(waits, *o.wait)
			}
		}
		writeRenderSummary(&b, toRender, outcomes, waits)
		if len(waits) > 0 {
			// A registry that could not be asked has not cleared the
			// entry: the check waits for it rather than passing it.
			res.Conclusion, res.Waits = checks.Pending, waits
		}
	}
	// A failure found stands whatever the rest waits for.
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
	{ID: RuleLimitImages, Name: "LimitImages", Description: "The change names more images than limits.images lets one pull request check contact, across verification, reference list renders and template pulls."},
	{ID: RuleLimitCatalogBytes, Name: "LimitCatalogBytes", Description: "The check would read more catalog content than limits.catalogBytes."},
	{ID: RuleLimitFileBytes, Name: "LimitFileBytes", Description: "A file is larger than limits.fileBytes; it is not read."},
	{ID: RuleTemplateOutputStale, Name: "TemplateOutputStale", Description: "A change edits a catalog template, but its output directory does not hold what the template renders."},
	{ID: RuleTemplateOutputEdited, Name: "TemplateOutputEdited", Description: "A change edits a template's output directory so that it no longer holds what the unchanged template renders."},
}

// renderWhat is what happened to one entry the check set out to render.
type renderWhat int

const (
	renderValid       renderWhat = iota // rendered, and the catalog validates
	renderInvalid                       // rendered to an invalid catalog
	renderRefused                       // refused by the policy; nothing was contacted
	renderUnreachable                   // its registry could not be asked
	renderFailed                        // the registry answered, and it does not render
	renderOverLimit                     // left out: the pass reached limits.images
)

// renderWords say each outcome in the summary, in the order the tally
// lists them.
var renderWords = []string{
	renderValid:       "rendered and validated",
	renderInvalid:     "rendered to an invalid catalog",
	renderRefused:     "refused by policy, not contacted",
	renderUnreachable: "could not be rendered yet",
	renderFailed:      "failed to render",
	renderOverLimit:   "not rendered, past limits.images",
}

type renderOutcome struct {
	what     renderWhat
	findings []checks.Finding
	// wait is what an entry whose registry could not be asked waits for.
	wait *checks.Wait
}

// writeRenderSummary says what happened to each entry, then counts them,
// so that the summary never claims a render that did not happen.
func writeRenderSummary(b *strings.Builder, refs []catalogyaml.Reference, outcomes []renderOutcome, waits []checks.Wait) {
	fmt.Fprintf(b, "\nRendering the %d added or changed reference(s):\n", len(refs))
	counts := make([]int, len(renderWords))
	for i, ref := range refs {
		w := outcomes[i].what
		counts[w]++
		fmt.Fprintf(b, "- %s: %s\n", checks.Code(ref.Name), renderWords[w])
	}
	var parts []string
	for w, n := range counts {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, renderWords[w]))
		}
	}
	fmt.Fprintf(b, "\n%s.\n", strings.Join(parts, ", "))
	if len(waits) > 0 {
		fmt.Fprintf(b, "Could not judge every entry yet: %s.\n", checks.WaitList(waits))
	}
}

// renderAndValidate renders each reference the image policy admits and
// validates what it renders to. Findings are placed on the entry's image
// line in the list: the rendered catalog exists nowhere in the repository.
// A reference whose registry could not be asked is no finding but a wait.
// Each render has the deadline d (0: none); a registry that runs out of it
// is not asked again for the other entries, nor by the other checks
// sharing breaker (nil: a breaker of its own). Each entry the policy lets
// be pulled is charged to budget, in the list's order before any render
// starts, so that the first entry past limits.images (max) is the same
// whichever render finishes first.
func renderAndValidate(ctx context.Context, r *render.Renderer, pol images.Policy, file string, refs []catalogyaml.Reference, d time.Duration, breaker *registry.Breaker, budget *imageCap, max int) []renderOutcome {
	if breaker == nil {
		breaker = &registry.Breaker{}
	}
	out := make([]renderOutcome, len(refs))
	sem := make(chan struct{}, maxRenders)
	var wg sync.WaitGroup
	for i, ref := range refs {
		if contacts(pol, ref) && budget.take([]string{ref.Image}, true) == 0 {
			line := ref.ImageLine
			if line == 0 {
				line = ref.Line
			}
			out[i] = renderOutcome{what: renderOverLimit, findings: []checks.Finding{{Rule: RuleLimitImages, Severity: checks.SeverityError,
				File: file, Line: line, Message: fmt.Sprintf("reference %q (%s): %s", ref.Name, ref.Image, imagesLimitError(max).Error())}}}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = renderOne(ctx, r, pol, file, ref, d, breaker)
		})
	}
	wg.Wait()
	return out
}

// contacts says whether rendering ref reaches a registry: the refusals
// renderOne makes before any pull cost no registry work.
func contacts(pol images.Policy, ref catalogyaml.Reference) bool {
	if ref.Ref == nil {
		return false
	}
	ok, _ := pol.Admits(ref.Image)
	return ok
}

func renderOne(ctx context.Context, r *render.Renderer, pol images.Policy, file string, ref catalogyaml.Reference, d time.Duration, breaker *registry.Breaker) renderOutcome {
	at := func(rule, msg string) checks.Finding {
		line := ref.ImageLine
		if line == 0 {
			line = ref.Line
		}
		return checks.Finding{Rule: rule, Severity: checks.SeverityError, File: file, Line: line,
			Message: fmt.Sprintf("reference %q (%s): %s", ref.Name, ref.Image, msg)}
	}
	one := func(what renderWhat, f checks.Finding) renderOutcome {
		return renderOutcome{what: what, findings: []checks.Finding{f}}
	}
	if ref.Ref == nil {
		// An OCI layout or a path names something on the machine that
		// runs the check, which a pull request must not make it read.
		return one(renderRefused, at(RuleReferenceNotImage, "not a registry image reference; only registry images can be checked for a change"))
	}
	// The image policy's allowlist binds rendering as it binds the
	// images check: an entry it refuses is never pulled.
	if ok, why := pol.Admits(ref.Image); !ok {
		return one(renderRefused, at(images.RuleID(registry.ClassPolicy), why))
	}
	host := ref.Ref.Context().RegistryStr()
	if err := breaker.Check(host); err != nil {
		// It timed out earlier in this pass: wait on it at once.
		return waiting(host, checks.WaitTransport)
	}
	rctx := ctx
	if d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	cfg, err := r.RenderOne(rctx, ref.Image)
	if err != nil {
		switch c := sortContact(host, err); {
		case c.refused != nil:
			return one(renderRefused, at(RuleReferenceRender, "not rendered: "+c.refused.Error()))
		case c.wait != nil:
			// One that ran out of time is not asked again in this pass.
			breaker.Record(host, err)
			return renderOutcome{what: renderUnreachable, wait: c.wait}
		case c.answered:
			// Worded for the pull request's reader: class, host and
			// what to do, never the library's text, which may quote
			// what an internal host answered.
			class, msg, _ := registry.Explain(err)
			return one(renderFailed, at(RuleReferenceRender, "does not render: "+string(class)+": "+msg))
		}
		var re *render.RefError
		if errors.As(err, &re) {
			err = re.Err
		}
		return one(renderFailed, at(RuleReferenceRender, "does not render: "+err.Error()))
	}
	var buf bytes.Buffer
	if err := render.WriteJSON(&buf, cfg); err != nil {
		return one(renderFailed, at(RuleReferenceRender, "cannot be written out: "+err.Error()))
	}
	rendered := fstest.MapFS{"catalog.json": &fstest.MapFile{Data: buf.Bytes()}}
	res, err := fbc.Validate(ctx, rendered, fbc.Options{})
	if err != nil {
		return one(renderFailed, at(RuleReferenceRender, "validation stopped: "+err.Error()))
	}
	out := renderOutcome{what: renderValid}
	for _, f := range res.Findings {
		g := at(f.Rule, "renders to an invalid catalog: "+f.Message)
		g.Package, g.Channel, g.Bundle = f.Package, f.Channel, f.Bundle
		out.findings = append(out.findings, g)
	}
	if checks.ConclusionOf(out.findings) == checks.Failure {
		out.what = renderInvalid
	}
	return out
}

// waiting is the outcome of an entry whose registry could not be asked.
func waiting(host, class string) renderOutcome {
	return renderOutcome{what: renderUnreachable, wait: &checks.Wait{Registry: host, Class: class, Count: 1}}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
