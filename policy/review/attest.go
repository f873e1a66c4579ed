package review

import (
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// Merged is what the approval attestation records of a change merged
// as merge: one sign.Package per catalog package the change touches, each
// holding the pull request, its head, who approved the package and under
// which OWNERS or ci.yaml files (read at the base, like every approval),
// and the checks that passed on the head. A change that touches no
// package is returned as the pull request alone (pr), for the
// attestation's unpackaged list.
func (o *Outcome) Merged(number int, author, merge string) (pkgs []sign.Package, pr sign.PullRequest) {
	pr = sign.PullRequest{Number: number, Head: o.HeadSHA, Merge: merge, Author: author, Approvers: []string{}, Owners: []sign.Revision{}, Checks: []sign.Check{}}
	for _, r := range o.Report.Results {
		if r.Conclusion == checks.Success {
			pr.Checks = append(pr.Checks, sign.Check{Name: r.Name, Conclusion: string(r.Conclusion)})
		}
	}
	if o.Owners == nil {
		return nil, pr
	}
	for _, a := range o.Owners.Approvers {
		pr.Approvers = append(pr.Approvers, a.Login)
	}
	for _, req := range o.Owners.Required {
		pr.Owners = append(pr.Owners, sign.Revision{Path: req.File, Commit: o.BaseSHA})
	}
	for _, ps := range o.Owners.Packages {
		p := pr
		p.Approvers = append([]string{}, ps.ApprovedBy...)
		p.Owners = []sign.Revision{}
		for _, c := range o.Owners.Files {
			if c.Package == ps.Name && c.OwnersFile != "" && !slices.ContainsFunc(p.Owners, func(r sign.Revision) bool { return r.Path == c.OwnersFile }) {
				p.Owners = append(p.Owners, sign.Revision{Path: c.OwnersFile, Commit: o.BaseSHA})
			}
		}
		if ps.CIYAML != nil {
			p.Owners = append(p.Owners, sign.Revision{Path: ps.CIYAML.File, Commit: o.BaseSHA})
		}
		pkgs = append(pkgs, sign.Package{Name: ps.Name, PullRequests: []sign.PullRequest{p}})
	}
	return pkgs, pr
}

// MergeRecord is what a publisher keeps of a merge it made, for the
// approval attestation of the publication that ships it (Outcome.Merged).
type MergeRecord struct {
	Packages    []sign.Package
	PullRequest sign.PullRequest
	// Onto is, for a rebase merge, the branch's tip the pull request's
	// commits were replayed onto: the commits after it up to the merge
	// commit are the pull request's too. Empty for squash and merge
	// commits, which are one commit.
	Onto string
}

// RecordApprovals fills appr from the merges among commits, the
// first-parent commits published since the previous publication, newest
// first; complete says they reach back to it. Packages are grouped by
// name and keep their pull requests oldest first. ApprovalsRecorded is set
// only when the commits are complete and every one is a recorded merge;
// otherwise the Note says what is missing, and what is recorded is kept.
func RecordApprovals(appr *sign.Approval, commits []string, complete bool, record func(sha string) (MergeRecord, bool)) {
	appr.Packages, appr.Unpackaged = []sign.Package{}, nil
	// The commits a rebase merge replayed before its last one belong to
	// its record; newest first, they follow the merge commit.
	covered := map[string]bool{}
	for i, c := range commits {
		if rec, ok := record(c); ok && rec.Onto != "" {
			for _, d := range commits[i+1:] {
				if d == rec.Onto {
					break
				}
				covered[d] = true
			}
		}
	}
	var unknown []string
	for i := len(commits) - 1; i >= 0; i-- {
		rec, ok := record(commits[i])
		if !ok {
			if !covered[commits[i]] {
				unknown = append(unknown, commits[i])
			}
			continue
		}
		if len(rec.Packages) == 0 {
			appr.Unpackaged = append(appr.Unpackaged, rec.PullRequest)
		}
		for _, p := range rec.Packages {
			j := slices.IndexFunc(appr.Packages, func(q sign.Package) bool { return q.Name == p.Name })
			if j < 0 {
				appr.Packages = append(appr.Packages, sign.Package{Name: p.Name})
				j = len(appr.Packages) - 1
			}
			appr.Packages[j].PullRequests = append(appr.Packages[j].PullRequests, p.PullRequests...)
		}
	}
	slices.SortStableFunc(appr.Packages, func(a, b sign.Package) int { return strings.Compare(a.Name, b.Name) })
	appr.ApprovalsRecorded = complete && len(unknown) == 0
	switch {
	case appr.ApprovalsRecorded:
		appr.Note = ""
	case !complete:
		appr.Note = "the previous publication is not known to this publisher: only the merges it recorded since are listed"
	default:
		appr.Note = fmt.Sprintf("%d commit(s) since the previous publication are not merges this publisher recorded (a direct push, or a merge before a restart): %s",
			len(unknown), strings.Join(unknown, ", "))
	}
}
