package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
)

// Templates checks that each catalog template the policy maps to an
// output directory (catalog.templates) and its output stay in step: a
// change that touches either must leave the output holding exactly what
// the head's template renders. Outputs are compared as catalogs (loaded and
// written in opm render's canonical YAML), so the output may be split over
// files or written as JSON, but its content must be the rendering's.
//
// Bundle images are rendered with Input.Renderer (registry images only,
// under the PR check's egress rule). A bundle whose reference is pinned
// by digest and which the base's output already holds is taken from the
// base instead: the base is merged, trusted content, and one digest
// renders to one bundle. Nothing is ever taken from the head.
type Templates struct{}

// TemplatesName is the name of the templates check.
const TemplatesName = "templates"

func (Templates) Name() string { return TemplatesName }

// Rule ids of the templates check's verdicts on outputs.
const (
	RuleTemplateOutputStale  = "TP5"
	RuleTemplateOutputEdited = "TP6"
)

// maxDiffLines bounds the diff a finding shows; a reviewer needs to see
// that and how the output differs, and the command fixes all of it.
const maxDiffLines = 60

func (Templates) Run(ctx context.Context, in *Input) checks.Result {
	pairs := in.Policy.Catalog.Templates
	if len(pairs) == 0 {
		return checks.Result{Conclusion: checks.Success, Summary: "The policy maps no templates."}
	}
	paths := in.Change.Paths()
	var b strings.Builder
	res := checks.Result{}
	undecided := false
	var waits []checks.Wait
	// A repository of many packages maps thousands of templates: the
	// unchanged ones are counted, not listed.
	unchanged := 0
	for _, p := range pairs {
		tplChanged := slices.Contains(paths, p.Template)
		outChanged := slices.ContainsFunc(paths, func(q string) bool { return strings.HasPrefix(q, p.Output+"/") })
		if !tplChanged && !outChanged {
			unchanged++
			continue
		}
		findings, note, err := checkTemplate(ctx, in, p, tplChanged)
		switch {
		case err != nil:
			if r, ok := unreadable(err); ok {
				// A template or output whose object was not read is
				// neither in step nor stale: the check waits for it.
				waits = checks.AddWait(waits, r.Waits[0])
				fmt.Fprintf(&b, "- `%s` → `%s`: not judged: %v\n", p.Template, p.Output, err)
				continue
			}
			var limit *LimitError
			if errors.As(err, &limit) {
				// A template past a limit is judged, as any file
				// past it is: it is not read.
				fmt.Fprintf(&b, "- `%s` → `%s`: not read, past %s\n", p.Template, p.Output, limit.Key)
				res.Findings = append(res.Findings, checks.Finding{Rule: limit.Rule(), Severity: checks.SeverityError,
					File: p.Template, Line: 1, Message: limit.Error()})
				continue
			}
			var bundle *template.BundleError
			isBundle := errors.As(err, &bundle)
			switch c := sortContact(bundleHost(bundle), err); {
			case c.refused != nil:
				// The egress rule refused a bundle's host: a verdict.
				fmt.Fprintf(&b, "- `%s` → `%s`: a bundle image was refused\n", p.Template, p.Output)
				res.Findings = append(res.Findings, checks.Finding{Rule: template.RuleBundle, Severity: checks.SeverityError,
					File: p.Template, Line: 1, Message: "a bundle image was not rendered: " + c.refused.Error()})
				continue
			case c.wait != nil:
				// A registry that could not be asked has said nothing
				// about the template: the check waits for it.
				waits = checks.AddWait(waits, *c.wait)
				fmt.Fprintf(&b, "- `%s` → `%s`: could not be rendered yet: %s\n", p.Template, p.Output, undecidedReason(err))
				continue
			case isBundle:
				// The registry answered (a refusal, no such image): an
				// answer judges the template, so that a pull request
				// cannot hold the check undecided, which would pass, by
				// naming a registry that refuses it.
				class, msg := registry.Classify(bundle.Err)
				fmt.Fprintf(&b, "- `%s` → `%s`: a bundle image does not render\n", p.Template, p.Output)
				res.Findings = append(res.Findings, checks.Finding{Rule: template.RuleBundle, Severity: checks.SeverityError,
					File: p.Template, Line: 1, Message: fmt.Sprintf("bundle %s does not render: %s: %s", bundle.Ref, class, msg)})
				continue
			}
			undecided = true
			fmt.Fprintf(&b, "- `%s` → `%s`: could not be rendered: %s\n", p.Template, p.Output, undecidedReason(err))
		case len(findings) > 0:
			fmt.Fprintf(&b, "- `%s` → `%s`: %s\n", p.Template, p.Output, note)
			res.Findings = append(res.Findings, findings...)
		default:
			fmt.Fprintf(&b, "- `%s` → `%s`: %s\n", p.Template, p.Output, note)
		}
	}
	if unchanged > 0 {
		fmt.Fprintf(&b, "- %s that the change leaves alone\n", checks.Plural(unchanged, "template mapping"))
	}
	res.Conclusion = checks.ConclusionOf(res.Findings)
	if len(waits) > 0 && res.Conclusion != checks.Failure {
		res.Conclusion, res.Waits = checks.Pending, waits
		fmt.Fprintf(&b, "\nCould not judge every template yet: %s.\n", checks.WaitList(waits))
	} else if undecided && res.Conclusion != checks.Failure {
		// A template that could not be rendered has not been judged:
		// the check neither passes nor fails it on its own.
		res.Conclusion = checks.Neutral
	}
	res.Summary = b.String()
	return res
}

// errRenderingOff: the check was given no renderer.
var errRenderingOff = errors.New("rendering is off")

// bundleHost is the registry host of the bundle image err names, "" when
// it names none.
func bundleHost(err *template.BundleError) string {
	if err == nil {
		return ""
	}
	ref, perr := name.ParseReference(err.Ref)
	if perr != nil {
		return ""
	}
	return ref.Context().RegistryStr()
}

// undecidedReason says why a template could not be rendered in the words
// every registry failure is reported in, so that nothing of a registry's
// answer beyond its class reaches the pull request.
func undecidedReason(err error) string {
	if errors.Is(err, errRenderingOff) {
		return err.Error()
	}
	var re *template.BundleError
	if errors.As(err, &re) {
		_, msg := registry.Classify(re.Err)
		return fmt.Sprintf("bundle %s: %s", re.Ref, msg)
	}
	_, msg := registry.Classify(err)
	return msg
}

// checkTemplate judges one pair the change touches. The error is kept for
// the cases where no verdict is possible (no renderer, a registry that
// could not be reached).
func checkTemplate(ctx context.Context, in *Input, p policy.Template, tplChanged bool) ([]checks.Finding, string, error) {
	data, err := readOptional(in.Head, p.Template)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", p.Template, err)
	}
	if data == nil {
		return nil, "the template is removed; its output is no longer checked", nil
	}
	if in.Renderer == nil {
		return nil, "", errRenderingOff
	}
	known, err := baseBundles(ctx, in.Base, p.Output)
	if err != nil {
		return nil, "", err
	}
	breaker := in.Breaker
	if breaker == nil {
		breaker = &registry.Breaker{}
	}
	// The bundles a template names are the pull request's images like
	// any other: the allowlist binds them, each pull has the
	// per-reference deadline, and a registry that ran out of time is not
	// asked again in the pass.
	res, err := template.Render(ctx, p.Template, data, template.Options{
		Renderer: in.Renderer,
		// The pulls count against the pass's limits.images, with the
		// images and references checks' contacts and the other
		// templates' pulls.
		Budget: func(refs []string) (int, error) {
			if n := in.imageBudget().take(refs, true); n < len(refs) {
				return n, imagesLimitError(in.Policy.Limits.Images)
			}
			return len(refs), nil
		},
		Known:      func(ref string) (template.Known, bool) { k, ok := known[ref]; return k, ok },
		Admit:      in.Policy.Images.Admits,
		RefTimeout: in.Policy.Limits.ReferenceTimeout,
		Breaker:    breaker,
	})
	if err != nil {
		return nil, "", err
	}
	if res.Config == nil {
		return res.Findings, "the template does not render", nil
	}
	var want bytes.Buffer
	if err := render.WriteYAML(&want, res.Config); err != nil {
		return nil, "", err
	}
	var got bytes.Buffer
	headOut, err := loadOutput(ctx, in.Head, p.Output)
	if _, ok := change.Unreadable(err); ok {
		// Not read is not "does not load": no verdict on the output.
		return nil, "", err
	}
	if err != nil {
		return []checks.Finding{{Rule: RuleTemplateOutputStale, Severity: checks.SeverityError, File: p.Output,
				Message: fmt.Sprintf("the output of %s does not load: %v\nRegenerate it with:\n    %s", p.Template, err, regenerate(p))}},
			"the output does not load", nil
	}
	if err := render.WriteYAML(&got, headOut); err != nil {
		return nil, "", err
	}
	rendered := fmt.Sprintf("rendered (%d bundle image(s) pulled, %d taken from the base)", res.Pulled, res.Reused)
	if bytes.Equal(want.Bytes(), got.Bytes()) {
		return nil, rendered + "; the output matches", nil
	}
	diff := unifiedDiff(p.Output, p.Template+" rendered", got.Bytes(), want.Bytes(), maxDiffLines)
	// Line 1: the finding is about the whole file, and an annotation needs
	// a line to sit on.
	f := checks.Finding{Severity: checks.SeverityError, Line: 1}
	if tplChanged {
		f.Rule, f.File = RuleTemplateOutputStale, p.Template
		f.Message = fmt.Sprintf("%s changed, but %s does not hold what it renders. Regenerate the output with:\n    %s\n%s",
			p.Template, p.Output, regenerate(p), diff)
	} else {
		f.Rule, f.File = RuleTemplateOutputEdited, firstChanged(in, p.Output)
		f.Message = fmt.Sprintf("%s is generated from %s, which this change leaves alone, and no longer holds what it renders: change the template instead, then regenerate the output with:\n    %s\n%s",
			p.Output, p.Template, regenerate(p), diff)
	}
	return []checks.Finding{f}, rendered + "; the output differs", nil
}

// firstChanged is the first file under dir the change touches, or dir.
func firstChanged(in *Input, dir string) string {
	for _, q := range in.Change.Paths() {
		if strings.HasPrefix(q, dir+"/") {
			return q
		}
	}
	return dir
}

// regenerate is the command that writes an output from its template.
func regenerate(p policy.Template) string {
	return fmt.Sprintf("catalogbot render-template %s -o yaml > %s/catalog.yaml", p.Template, p.Output)
}

// loadOutput loads an output directory as a catalog; a directory that
// does not exist is an empty catalog.
func loadOutput(ctx context.Context, fsys fs.FS, dir string) (*declcfg.DeclarativeConfig, error) {
	if fsys == nil {
		return &declcfg.DeclarativeConfig{}, nil
	}
	if _, err := fs.Stat(fsys, dir); err != nil {
		if isNotExist(err) {
			return &declcfg.DeclarativeConfig{}, nil
		}
		return nil, err
	}
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	return fbc.LoadConfig(ctx, sub)
}

// baseBundles are the bundles of the base's output whose image is pinned
// by digest, by image. A base output that does not load offers none.
func baseBundles(ctx context.Context, base fs.FS, dir string) (map[string]template.Known, error) {
	cfg, err := loadOutput(ctx, base, dir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	out := map[string]template.Known{}
	for _, b := range cfg.Bundles {
		if !strings.Contains(b.Image, "@sha256:") {
			continue
		}
		if _, dup := out[b.Image]; dup {
			// Two bundles claim one image: trust neither.
			out[b.Image] = template.Known{}
			continue
		}
		out[b.Image] = template.Known{Bundle: b, CSV: render.CatalogCSV(&b)}
	}
	for ref, k := range out {
		if k.Bundle.Image == "" {
			delete(out, ref)
		}
	}
	return out, nil
}
