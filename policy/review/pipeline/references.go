package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// References checks the repository's catalog.yaml reference list: the head
// version parses, each entry the change adds or changes renders (as `opm
// render` would), and the catalog the whole list assembles validates, so
// that a package two entries hold is an error on the change that makes it
// (see Input.list). Who may change each entry, and bring the packages its
// image holds, is the owners check's business; the summary lists the
// entries and the paths they are owned as.
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
	if r, ok := unreadable(err); ok {
		return r
	}
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read %s: %v", file, err)}
	}
	base, err := readOptional(in.Base, file)
	if r, ok := unreadable(err); ok {
		return r
	}
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
		found, waits := assembledFindings(ctx, in, &b, toRender)
		res.Findings = append(res.Findings, found...)
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
	renderUnjudged                      // rendered; the assembled catalog waits for other entries
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
	renderUnjudged:    "rendered, not validated yet",
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

// renderJob is one image of the list to render; charged says it counts
// against limits.images, as the images the change adds do.
type renderJob struct {
	ref     catalogyaml.Reference
	charged bool
}

// renderResult is a job's rendering, nil when it did not render, and
// what happened.
type renderResult struct {
	cfg *declcfg.DeclarativeConfig
	out renderOutcome
}

// renderAll renders each job's image the image policy admits. Findings
// are placed on the entry's image line in the list: the rendered catalog
// exists nowhere in the repository. A reference whose registry could not
// be asked is no finding but a wait. Each render has the policy's
// limits.referenceTimeout; a registry that runs out of it is not asked
// again for the other entries, nor by the other checks sharing the
// pass's breaker. Each charged job the policy lets be pulled is charged
// to the pass's image budget, in order before any render starts, so that
// the first entry past limits.images is the same whichever render
// finishes first.
func renderAll(ctx context.Context, in *Input, file string, jobs []renderJob) []renderResult {
	breaker := in.Breaker
	if breaker == nil {
		breaker = &registry.Breaker{}
	}
	pol, budget, max := in.Policy.Images, in.imageBudget(), in.Policy.Limits.Images
	out := make([]renderResult, len(jobs))
	sem := make(chan struct{}, maxRenders)
	var wg sync.WaitGroup
	for i, job := range jobs {
		ref := job.ref
		if job.charged && contacts(pol, ref) && budget.take([]string{ref.Image}, true) == 0 {
			line := ref.ImageLine
			if line == 0 {
				line = ref.Line
			}
			out[i].out = renderOutcome{what: renderOverLimit, findings: []checks.Finding{{Rule: RuleLimitImages, Severity: checks.SeverityError,
				File: file, Line: line, Message: fmt.Sprintf("reference %q (%s): %s", ref.Name, ref.Image, imagesLimitError(max).Error())}}}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].cfg, out[i].out = renderOne(ctx, in.Renderer, pol, file, ref, in.Policy.Limits.ReferenceTimeout, breaker)
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

// renderOne renders one entry's image, with the deadline d (0: none).
// Whether what it renders validates is judged on the assembled catalog.
func renderOne(ctx context.Context, r *render.Renderer, pol images.Policy, file string, ref catalogyaml.Reference, d time.Duration, breaker *registry.Breaker) (*declcfg.DeclarativeConfig, renderOutcome) {
	at := func(rule, msg string) checks.Finding {
		line := ref.ImageLine
		if line == 0 {
			line = ref.Line
		}
		return checks.Finding{Rule: rule, Severity: checks.SeverityError, File: file, Line: line,
			Message: fmt.Sprintf("reference %q (%s): %s", ref.Name, ref.Image, msg)}
	}
	one := func(what renderWhat, f checks.Finding) (*declcfg.DeclarativeConfig, renderOutcome) {
		return nil, renderOutcome{what: what, findings: []checks.Finding{f}}
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
		return nil, waiting(host, checks.WaitTransport)
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
			return nil, renderOutcome{what: renderUnreachable, wait: c.wait}
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
	return cfg, renderOutcome{what: renderValid}
}

// assembledFindings judges the entries the change adds or changes (refs)
// in the catalog the whole list assembles (see Input.list), and writes
// what happened to each to b. The findings are each changed entry's
// render failures, the unchanged entries' as warnings (the catalog is
// validated without them), and what the assembled catalog's validation
// finds that the base's does not, or that is about a changed entry: so a
// package that two entries both hold is an error on the change that
// makes it so. A registry that could not be asked, for any entry, leaves
// the assembled catalog unjudged: the waits say for what.
func assembledFindings(ctx context.Context, in *Input, b *strings.Builder, refs []catalogyaml.Reference) ([]checks.Finding, []checks.Wait) {
	l := in.list(ctx)
	if l == nil {
		return nil, nil
	}
	byName := map[string]*listEntry{}
	for _, e := range l.entries {
		byName[e.name] = e
	}
	var findings []checks.Finding
	var waits []checks.Wait
	outcomes := make([]renderOutcome, len(refs))
	for i, r := range refs {
		if e := byName[r.Name]; e != nil {
			outcomes[i] = e.headOut
		}
		findings = append(findings, outcomes[i].findings...)
		if outcomes[i].wait != nil {
			waits = checks.AddWait(waits, *outcomes[i].wait)
		}
	}
	unchanged, left := 0, 0
	for _, e := range l.entries {
		if e.head == nil || e.changed() {
			continue
		}
		unchanged++
		switch o := e.headOut; {
		case o.wait != nil:
			waits = checks.AddWait(waits, *o.wait)
		case e.headCfg == nil:
			// The base's own entry: the change did not break it, but
			// the catalog cannot be judged with it.
			left++
			for _, f := range o.findings {
				f.Severity = checks.SeverityWarning
				f.Message += " (the change leaves this entry as it is; the assembled catalog was validated without it)"
				findings = append(findings, f)
			}
		}
	}
	if len(waits) == 0 {
		found, err := l.validate(ctx)
		if err != nil {
			findings = append(findings, checks.Finding{Rule: RuleReferenceRender, Severity: checks.SeverityError, File: l.file,
				Message: "the assembled catalog could not be validated: " + err.Error()})
		}
		findings = append(findings, found...)
		for i, r := range refs {
			e := byName[r.Name]
			if e == nil || outcomes[i].what != renderValid {
				continue
			}
			for _, f := range found {
				if f.Line == e.line() && f.Severity == checks.SeverityError && strings.HasPrefix(f.Message, fmt.Sprintf("reference %q ", r.Name)) {
					outcomes[i].what = renderInvalid
					break
				}
			}
		}
	}
	if len(waits) > 0 {
		// What rendered is not judged until the catalog it goes into
		// is whole.
		for i := range outcomes {
			if outcomes[i].what == renderValid {
				outcomes[i].what = renderUnjudged
			}
		}
	}
	writeRenderSummary(b, refs, outcomes, waits)
	if len(waits) == 0 {
		fmt.Fprintf(b, "The catalog the list assembles was validated whole: %s, %d of them unchanged and rendered at the image the base names",
			checks.Count(unchanged+len(refs)-left, "entry", "entries"), unchanged-left)
		if left > 0 {
			fmt.Fprintf(b, " (%d unchanged left out: they did not render)", left)
		}
		b.WriteString(".\n")
	}
	return findings, waits
}

// validate validates the catalog the head's list assembles, and returns
// the findings that are about an entry the change adds or changes, or
// that the base's assembled catalog does not have: a problem of the base
// that the change leaves as it is is not the change's.
func (l *listRenders) validate(ctx context.Context) ([]checks.Finding, error) {
	const prefix = "the assembled catalog does not validate: "
	headFS, headDirs, err := l.assembled(true)
	if err != nil {
		return nil, err
	}
	res, err := fbc.Validate(ctx, headFS, fbc.Options{})
	if err != nil {
		return nil, err
	}
	baseFS, baseDirs, err := l.assembled(false)
	if err != nil {
		return nil, err
	}
	old := map[string]bool{}
	if len(baseFS) > 0 {
		bres, err := fbc.Validate(ctx, baseFS, fbc.Options{})
		if err != nil {
			return nil, err
		}
		for _, f := range bres.Findings {
			g := l.onEntry(f, baseDirs, prefix)
			old[g.Rule+"\x00"+g.Message] = true
		}
	}
	var out []checks.Finding
	for _, f := range res.Findings {
		g := l.onEntry(f, headDirs, prefix)
		if e := headDirs[path.Dir(f.File)]; (e == nil || !e.changed()) && old[g.Rule+"\x00"+g.Message] {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// waiting is the outcome of an entry whose registry could not be asked.
func waiting(host, class string) renderOutcome {
	return renderOutcome{what: renderUnreachable, wait: &checks.Wait{Registry: host, Class: class, Count: 1}}
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
