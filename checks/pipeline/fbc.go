package pipeline

import (
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// FBC validates the catalog of the head commit under every catalog root of
// the policy. Every finding is compared with the base commit's: one that was
// already there (same file, rule and message) is pre-existing and reported
// as a warning, so a change is never blocked by problems it did not make,
// while still showing them.
type FBC struct{}

// FBCName is the name of the catalog validation check.
const FBCName = "fbc"

func (FBC) Name() string { return FBCName }

func (FBC) Run(ctx context.Context, in *Input) checks.Result {
	var roots []string
	for _, root := range in.Policy.Catalog.Roots {
		if isDir(in.Head, root) {
			roots = append(roots, root)
		}
	}
	if len(roots) == 0 {
		return checks.Result{Conclusion: checks.Neutral, Summary: "No catalog root of the policy exists in the head commit; nothing to validate."}
	}

	// Renamed files are compared with their findings under the old name.
	previous := make(map[string]string)
	if in.Change != nil {
		for _, f := range in.Change.Files {
			if f.PreviousPath != "" {
				previous[f.Path] = f.PreviousPath
			}
		}
	}

	var findings []checks.Finding
	introduced, preexisting := 0, 0
	for _, root := range roots {
		head, err := validate(ctx, in.Head, root)
		if err != nil {
			return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not validate %s: %v", root, err)}
		}
		var base []checks.Finding
		if isDir(in.Base, root) {
			if base, err = validate(ctx, in.Base, root); err != nil {
				return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not validate %s on the base: %v", root, err)}
			}
		}
		known := make(map[findingKey]bool, len(base))
		for _, f := range base {
			known[keyOf(f, f.File)] = true
		}
		for _, f := range head {
			file := f.File
			if p, ok := previous[file]; ok {
				file = p
			}
			if f.Severity == checks.SeverityError {
				if known[keyOf(f, file)] {
					f.Severity = checks.SeverityWarning
					f.Message += " (pre-existing: also on the base branch)"
					preexisting++
				} else {
					introduced++
				}
			}
			findings = append(findings, f)
		}
	}

	res := checks.Result{Conclusion: checks.ConclusionOf(findings), Findings: findings}
	switch {
	case introduced > 0:
		res.Summary = fmt.Sprintf("This change introduces %d catalog error(s).", introduced)
	default:
		res.Summary = "The catalog is valid."
	}
	if preexisting > 0 {
		res.Summary += fmt.Sprintf(" %d error(s) were already on the base branch and are reported as warnings.", preexisting)
	}
	return res
}

type findingKey struct{ file, rule, message string }

func keyOf(f checks.Finding, file string) findingKey {
	return findingKey{file, f.Rule, f.Message}
}

// validate validates the catalog under root of fsys and returns its
// findings with their files relative to the repository root, as changes
// and OWNERS name them.
func validate(ctx context.Context, fsys fs.FS, root string) ([]checks.Finding, error) {
	sub := fsys
	if root != "." {
		var err error
		if sub, err = fs.Sub(fsys, root); err != nil {
			return nil, err
		}
	}
	res, err := fbc.Validate(ctx, sub, fbc.Options{})
	if err != nil {
		return nil, err
	}
	out := make([]checks.Finding, len(res.Findings))
	for i, f := range res.Findings {
		if f.File != "" {
			f.File = path.Join(root, f.File)
		}
		out[i] = f
	}
	return out, nil
}

func isDir(fsys fs.FS, name string) bool {
	if fsys == nil {
		return false
	}
	info, err := fs.Stat(fsys, name)
	return err == nil && info.IsDir()
}
