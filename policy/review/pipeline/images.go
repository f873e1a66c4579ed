package pipeline

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// Images verifies the image references a change adds or changes: bundle
// images and related images in the touched packages, and the images of
// the reference list entries it adds or changes. References that were on
// the base already were checked when they landed; Input.AllImages checks
// every reference of the catalog instead. The policy's image rules apply.
type Images struct{}

// ImagesName is the name of the image verification check.
const ImagesName = "images"

func (Images) Name() string { return ImagesName }

func (Images) Run(ctx context.Context, in *Input) checks.Result {
	if in.ImageOptions == nil {
		return checks.Result{Conclusion: checks.Neutral, Summary: "Image verification is off; no registry was contacted."}
	}
	uses, err := newImageUses(ctx, in)
	if r, ok := unreadable(err); ok {
		return r
	}
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not list the image references: %v", err)}
	}
	if len(uses) == 0 {
		what := "The change adds or changes no image reference."
		if in.AllImages {
			what = "The catalog has no image reference."
		}
		return checks.Result{Conclusion: checks.Success, Summary: what}
	}
	opts := *in.ImageOptions
	opts.Policy = in.Policy.Images
	opts.ReferenceTimeout = in.Policy.Limits.ReferenceTimeout
	opts.Breaker = in.Breaker
	v, err := images.New(opts)
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("The image policy cannot be applied: %v", err)}
	}
	refs := images.Dedupe(uses)
	// Each reference costs requests to a registry the change names, so
	// the pass contacts at most limits.images of them, whichever check
	// asks first; the rest fail it.
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.Image
	}
	var over []images.Reference
	if n := in.imageBudget().take(names, false); n < len(refs) {
		refs, over = refs[:n], refs[n:]
	}
	results, err := v.Verify(ctx, refs)
	if err != nil {
		// Only the end of ctx stops a verification; the runner says
		// which end it was.
		return checks.Result{Conclusion: checks.Pending, Summary: "Image verification stopped before every image was checked."}
	}
	findings := images.Findings(results)
	summary := images.Summary(results) + "."
	if len(over) > 0 {
		findings = append(findings, imagesOverLimit(in.Policy.Limits.Images, len(refs)+len(over), over[0]))
		summary += fmt.Sprintf(" %d more reference(s) were not verified: one pull request check contacts at most limits.images (%d) images.", len(over), in.Policy.Limits.Images)
	}
	res := checks.Result{Conclusion: checks.ConclusionOf(findings), Findings: findings, Summary: summary}
	if res.Conclusion == checks.Success {
		// A registry that could not be asked has not cleared the change:
		// the check waits for it rather than passing. A failure found
		// elsewhere stands, since no answer can undo it.
		if waits := images.Waits(results); len(waits) > 0 {
			res.Conclusion, res.Waits = checks.Pending, waits
			res.Summary = "Could not judge every image: " + checks.WaitList(waits) + ".\n\n" + res.Summary
		}
	}
	return res
}

// newImageUses lists the image uses to verify: in the touched packages of
// each catalog root and in the reference list, those whose image the base
// does not use at the same place already (all of them with AllImages).
func newImageUses(ctx context.Context, in *Input) ([]images.Use, error) {
	var uses []images.Use
	for _, root := range in.Policy.Catalog.Roots {
		if !isDir(in.Head, root) {
			continue
		}
		s := &scope{all: true}
		if !in.AllImages {
			dirs, rootFile := touchedDirs(in.Change, root)
			if len(dirs) == 0 && !rootFile {
				continue
			}
			s = &scope{dirs: dirs, all: rootFile}
		}
		head, err := imageUses(ctx, in.Head, root, s)
		if err != nil {
			return nil, err
		}
		var known map[string]bool
		if !in.AllImages && isDir(in.Base, root) {
			base, err := imageUses(ctx, in.Base, root, s)
			if err != nil {
				return nil, err
			}
			known = make(map[string]bool, len(base))
			for _, u := range base {
				known[useKey(u)] = true
			}
		}
		for _, u := range head {
			if !known[useKey(u)] {
				uses = append(uses, u)
			}
		}
	}
	refs, err := referenceUses(in)
	if err != nil {
		return nil, err
	}
	return append(uses, refs...), nil
}

// useKey identifies a use by what it is and where it belongs, not by line:
// moving a bundle within its file changes no image.
func useKey(u images.Use) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s", u.Kind, u.Package, u.Bundle, u.Name, u.Image)
}

// imageUses lists the image uses of the scope s of the catalog under root.
// The catalog need not be valid: the references of every bundle that
// loads are listed, and the fbc check reports the rest.
func imageUses(ctx context.Context, fsys fs.FS, root string, s *scope) ([]images.Use, error) {
	sub, err := subFS(fsys, root)
	if err != nil {
		return nil, err
	}
	if !s.all {
		if sub, err = newScopedFS(sub, s.dirs); err != nil {
			return nil, err
		}
	}
	res, err := fbc.Validate(ctx, sub, fbc.Options{Images: true})
	if err != nil {
		return nil, err
	}
	return images.FromFBC(root, res.Images), nil
}

// referenceUses lists the images of the reference list entries the change
// adds or changes (every entry with AllImages).
func referenceUses(in *Input) ([]images.Use, error) {
	file := referenceList(in)
	if file == "" {
		return nil, nil
	}
	head, err := readOptional(in.Head, file)
	if err != nil || head == nil {
		return nil, err
	}
	f, _ := catalogyaml.Parse(file, head)
	if f == nil {
		return nil, nil
	}
	all := images.FromCatalogYAML(f)
	if in.AllImages {
		return all, nil
	}
	base, err := readOptional(in.Base, file)
	if err != nil {
		return nil, err
	}
	d, _ := owners.DiffReferenceList(file, base, head)
	changed := map[string]bool{}
	for _, rc := range d.References {
		if rc.Change != owners.RefRemoved {
			changed[rc.Name] = true
		}
	}
	var out []images.Use
	for _, u := range all {
		if changed[u.Name] {
			out = append(out, u)
		}
	}
	return out, nil
}

// referenceList is the path of the repository's reference list, as the
// policy decides it for the change's two trees.
func referenceList(in *Input) string {
	return in.Policy.Catalog.ReferenceListIn(in.Head, in.Base)
}

// readOptional reads name from fsys, nil when fsys or the file does not
// exist.
func readOptional(fsys fs.FS, name string) ([]byte, error) {
	if fsys == nil {
		return nil, nil
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	return data, nil
}

// imagesOverLimit is the finding of a change with more image references
// than the check verifies, placed where the first one left out is written.
func imagesOverLimit(max, total int, first images.Reference) checks.Finding {
	f := checks.Finding{Rule: RuleLimitImages, Severity: checks.SeverityError,
		Message: fmt.Sprintf("the change has %d image references to verify, and the pull request check contacts at most limits.images (%d) across its checks; from %s on they were not verified; raise limits.images in %s",
			total, max, first.Image, policy.FileName)}
	if len(first.Locations) > 0 {
		l := first.Locations[0]
		f.File, f.Line, f.Package, f.Bundle = l.File, l.Line, l.Package, l.Bundle
	}
	return f
}
