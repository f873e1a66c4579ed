package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/owners"
)

// Owners checks that every changed path is approved by its owners. OWNERS
// files are read from the base tree only: an OWNERS edit inside the change
// grants nothing until it has merged.
type Owners struct{}

// OwnersName is the name of the owners check.
const OwnersName = "owners"

func (Owners) Name() string { return OwnersName }

func (Owners) Run(ctx context.Context, in *Input) checks.Result {
	st := in.Owners
	if st == nil {
		var err error
		if st, err = EvaluateOwners(ctx, in); err != nil {
			// The OWNERS files, or the changed files whose blobs say
			// which packages' owners must approve (one over a limit,
			// say), could not be read: no approval can be judged.
			if r, ok := unreadable(err); ok {
				return r
			}
			return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not evaluate the approvals: %v", err)}
		}
	}
	findings, elsewhere := splitUntouched(st.Findings, in.Change)
	res := checks.Result{Conclusion: checks.Failure, Findings: findings, Summary: ownersSummary(st)}
	if elsewhere > 0 {
		// A warning about an OWNERS or ci.yaml file of another package
		// would otherwise be annotated on every pull request of the
		// repository: it is counted, not shown.
		res.Summary += fmt.Sprintf("\n%s about files this change does not touch; `catalogbot owners check` lists them.\n",
			checks.Count(elsewhere, "warning", "warnings"))
	}
	if st.Approved {
		res.Conclusion = checks.Success
	}
	return res
}

// EvaluateOwners reads the OWNERS files of the base tree, and the packages'
// ci.yaml files when the policy's owners.sources names them, and evaluates
// the change's approvals against them. The packages the change touches
// are those of the blobs it changes and, with a renderer, those the
// reference list entries it adds or changes render to (see
// listRenders.packageTouches), which ctx bounds the rendering of. Under
// the directories layout each package is owned by its name across the
// repository as well (withIdentity), and a catalog the change adds or
// removes needs the root approvers (catalogChanges).
func EvaluateOwners(ctx context.Context, in *Input) (*owners.State, error) {
	in.bind()
	repo, err := owners.Load(in.Base, owners.LoadOptions{
		Sources:      in.Policy.Owners.Sources,
		CatalogRoots: in.Policy.Catalog.Roots,
		Maintainers:  in.Policy.Owners.Maintainers,
		// The policy read the packages' ci.yaml files already.
		Operators: in.Policy.Operators,
	})
	if err != nil {
		return nil, fmt.Errorf("read the OWNERS files at %s: %w", in.Change.BaseSHA, err)
	}
	pkgs, err := touchedPackages(fbc.CacheFrom(ctx), in.Change, in.Base, in.Head, in.Policy.Catalog.Roots, in.Policy.Catalog.Layout)
	if err != nil {
		return nil, err
	}
	if err := withIdentity(ctx, in, pkgs); err != nil {
		return nil, err
	}
	cats, err := catalogChanges(in)
	if err != nil {
		return nil, err
	}
	if listed := in.list(ctx).packageTouches(); len(listed) > 0 {
		pkgs = append(pkgs, listed...)
		slices.SortStableFunc(pkgs, func(a, b owners.PackageTouch) int { return cmp.Compare(a.Name, b.Name) })
	}
	pol := in.Policy.Owners
	pol.ReferenceLists = in.Policy.Catalog.ReferenceListsIn(in.Base, in.Head)
	if in.Bots != nil {
		pol.Bots = in.Bots
	}
	return repo.Evaluate(owners.Input{
		Change:    in.Change,
		Approvals: in.Approvals,
		Policy:    pol,
		Base:      in.Base,
		Head:      in.Head,
		Packages:  pkgs,
		Catalogs:  cats,
		// Nil unless the policy requires write access.
		WriteAccess: in.WriteAccess,
		NoAccess:    in.NoAccess,
	}), nil
}

// splitUntouched keeps the findings that are errors or that name a file
// the change touches, and counts the warnings about other files.
func splitUntouched(findings []checks.Finding, c *change.Change) ([]checks.Finding, int) {
	if c == nil {
		return findings, 0
	}
	touched := map[string]bool{}
	for _, f := range c.Files {
		touched[f.Path], touched[f.PreviousPath] = true, true
	}
	var kept []checks.Finding
	elsewhere := 0
	for _, f := range findings {
		if f.Severity == checks.SeverityError || touched[f.File] {
			kept = append(kept, f)
			continue
		}
		elsewhere++
	}
	return kept, elsewhere
}

// ownersSummary says the verdict, what waits for approval and whom to ask:
// the part of the approval state an author acts on.
func ownersSummary(st *owners.State) string {
	var b strings.Builder
	b.WriteString(st.Reason)
	b.WriteString("\n")
	if len(st.Unapproved) > 0 {
		b.WriteString("\nWaiting for approval:\n\n")
		for _, req := range st.Required {
			if req.Approved {
				continue
			}
			fmt.Fprintf(&b, "- %s", checks.Code(req.File))
			if req.CIYAML != nil {
				fmt.Fprintf(&b, " reviewers: %s", checks.Visible(strings.Join(req.CIYAML.Reviewers, ", ")))
			}
			b.WriteString("\n")
		}
	}
	if len(st.Packages) > 0 {
		b.WriteString("\nPackages the change touches:\n\n")
		for _, line := range owners.DescribeAll(st.Packages) {
			fmt.Fprintf(&b, "- %s\n", checks.MarkdownText(line))
		}
	}
	if len(st.Catalogs) > 0 {
		b.WriteString("\nCatalogs the change adds or removes, which the root approvers decide:\n\n")
		for _, c := range st.Catalogs {
			fmt.Fprintf(&b, "- %s\n", checks.MarkdownText(c.Why()))
		}
	}
	if len(st.Suggested) > 0 {
		fmt.Fprintf(&b, "\nSuggested approvers: %s\n", strings.Join(st.Suggested, ", "))
	}
	return b.String()
}

// Approved reports whether the owners check of rep succeeded: the approval
// state that merge decisions need.
func Approved(rep checks.Report) bool {
	return rep.Conclusions()[OwnersName] == checks.Success
}
