package policy

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
)

// Report is what the checks concluded about one head commit.
type Report struct {
	// Conclusions maps each catalogbot check's name to its outcome.
	Conclusions map[string]checks.Conclusion
	// Approvals names the check whose conclusion is the approval state
	// (PRState.Approved says the same): its failure is coded
	// approval-missing rather than checks-failed, so that a pull request
	// waiting for its owners is not counted as a broken catalog.
	Approvals string
	// HeadSHA is the commit the checks ran on.
	HeadSHA string
}

// PRState is the pull request as the forge sees it now.
type PRState struct {
	// Local says there is no forge behind the decision (a check on this
	// machine): whether merging is enabled and the checks of other tools
	// are left to whoever merges, rather than always failing.
	Local bool
	Draft bool
	// Held is true when the hold label is set or a /hold stands.
	Held     bool
	Approved bool
	// HeadSHA is the pull request's current head; CheckedSHA the head the
	// report is for ("" means the report's HeadSHA).
	HeadSHA    string
	CheckedSHA string
	// Mergeable is the forge's verdict; nil while it is still computing.
	Mergeable *bool
	// Conflicts are the paths where the change does not apply onto the
	// base's tip, as catalogbot merged it: there is no tree to judge, so
	// no merge, whatever the forge says.
	Conflicts []string
	// Onto is the base tip the change was merged onto for the check.
	Onto string
	// BaseMoved says the base branch moved since the check, and
	// BaseChangedPaths which paths it changed.
	BaseMoved        bool
	BaseChangedPaths []string
	// TouchedPaths are the paths the pull request changes.
	TouchedPaths []string
	// ExtraChecks are the check runs other than catalogbot's on the
	// checked head, by name: of each App that made a run of that name,
	// its newest, newest first. Nil means they were not read: the
	// required checks are not judged, so such a decision can only rule a
	// merge out; the decision that merges always reads them.
	ExtraChecks map[string][]CheckRun
	// OwnRun is the conclusion of catalogbot's own check run at the
	// checked head as the forge shows it now, "" when it has none. Only
	// a success merges: the run is what the author and the branch
	// protection see, and one that says otherwise (rewritten since, or
	// never written) must not be merged past. Nil means not read, as for
	// ExtraChecks; Local leaves it out.
	OwnRun *checks.Conclusion
}

// CheckRun is one App's newest check run of a name.
type CheckRun struct {
	Conclusion checks.Conclusion
	// AppID and AppSlug name the App that made the run, as GitHub says;
	// 0 and "" when it did not say.
	AppID   int64
	AppSlug string
}

// app names the run's App in messages.
func (r CheckRun) app() string {
	switch {
	case r.AppSlug != "":
		return r.AppSlug
	case r.AppID != 0:
		return strconv.FormatInt(r.AppID, 10)
	}
	return "(unknown)"
}

// Decision is whether to merge, and every reason not to.
type Decision struct {
	Merge  bool   `json:"merge"`
	Method string `json:"method"`
	// SHA is the checked head: the merge call must send it, so that a
	// push after the check makes the merge fail rather than merge
	// unchecked commits.
	SHA string `json:"sha"`
	// Blocks are the reasons against merging, each with its code; empty
	// when Merge is set.
	Blocks []Block `json:"blocks"`
	// Recheck says the checks must run again before a merge can be
	// decided: the head or the base moved under them.
	Recheck bool `json:"recheck"`
}

// Decide says whether the pull request may be merged under p. It lists
// every reason against merging, not only the first, so that the one
// comment that reports it tells the author everything left to do.
func (p *Policy) Decide(report Report, pr PRState) Decision {
	checked := pr.CheckedSHA
	if checked == "" {
		checked = report.HeadSHA
	}
	d := Decision{Method: p.Merge.Method, SHA: checked}
	no := func(code Code, format string, args ...any) {
		d.Blocks = append(d.Blocks, Block{Code: code, Text: fmt.Sprintf(format, args...)})
	}

	if !p.Merge.Enabled && !pr.Local {
		no(CodeMergingDisabled, "merging is disabled by the repository policy")
	}
	if pr.Draft {
		no(CodeDraft, "the pull request is a draft")
	}
	if pr.Held {
		no(CodeHold, "the pull request is held (%s label or /hold)", p.Merge.HoldLabel)
	}
	if !pr.Approved {
		no(CodeApprovalMissing, "the pull request is not approved")
	}

	if len(report.Conclusions) == 0 {
		no(CodeChecksPending, "no catalogbot check has reported")
	}
	for _, name := range slices.Sorted(maps.Keys(report.Conclusions)) {
		switch c := report.Conclusions[name]; {
		case c == checks.Success:
		case c == checks.Pending:
			no(CodeChecksPending, "check %s could not judge yet", name)
		case name == report.Approvals && name != "":
			no(CodeApprovalMissing, "check %s concluded %s", name, conclusion(c))
		default:
			no(CodeChecksFailed, "check %s concluded %s", name, conclusion(c))
		}
	}
	for _, rc := range p.Merge.RequiredChecks {
		if pr.Local || pr.ExtraChecks == nil {
			break
		}
		// Only a run by the App the policy names counts: any App can
		// name its runs as it likes.
		runs := pr.ExtraChecks[rc.Name]
		i := slices.IndexFunc(runs, func(r CheckRun) bool { return rc.ReportedBy(r.AppID, r.AppSlug) })
		switch {
		case i < 0 && len(runs) > 0:
			var by []string
			for _, r := range runs {
				if a := r.app(); !slices.Contains(by, a) {
					by = append(by, a)
				}
			}
			// The named App may still report; until it does, the
			// check is missing, as if no App had run it.
			no(CodeChecksPending, "check %s was reported by app %s, not %s", rc.Name, strings.Join(by, ", "), rc.App)
		case i < 0:
			no(CodeChecksPending, "required check %s has not reported", rc.Name)
		case runs[i].Conclusion == "":
			no(CodeChecksPending, "required check %s concluded %s", rc.Name, conclusion(runs[i].Conclusion))
		case runs[i].Conclusion != checks.Success:
			no(CodeChecksFailed, "required check %s concluded %s", rc.Name, conclusion(runs[i].Conclusion))
		}
	}

	if !pr.Local && pr.OwnRun != nil {
		switch c := *pr.OwnRun; c {
		case checks.Success:
		case "":
			no(CodeChecksPending, "catalogbot's check run at %s has not concluded", short(checked))
		default:
			no(CodeChecksFailed, "catalogbot's check run at %s concluded %s", short(checked), c)
		}
	}

	switch {
	case checked == "":
		no(CodeHeadMoved, "the report names no checked commit")
		d.Recheck = true
	case report.HeadSHA != "" && report.HeadSHA != checked:
		no(CodeHeadMoved, "the report is for %s, not the checked head %s", short(report.HeadSHA), short(checked))
		d.Recheck = true
	case pr.HeadSHA != checked:
		no(CodeHeadMoved, "the head moved from %s to %s since the check", short(checked), short(pr.HeadSHA))
		d.Recheck = true
	}

	switch {
	case pr.Mergeable == nil:
		no(CodeMergeability, "mergeability unknown")
	case !*pr.Mergeable:
		no(CodeMergeConflict, "the pull request cannot be merged cleanly")
	}
	if len(pr.Conflicts) > 0 {
		no(CodeMergeConflict, "the change does not apply cleanly onto %s: %s changed on both sides", short(pr.Onto), listPaths(pr.Conflicts))
	}

	// The verdict is on the tree the base will hold after the merge, so
	// any move of the base calls for a new one: a change elsewhere in
	// the catalog (a bundle removed that this change replaces, a channel
	// another change added) can make the merge result invalid. The
	// judgement is incremental; the overlap only names what both moved.
	if pr.BaseMoved {
		if shared := p.overlap(pr.BaseChangedPaths, pr.TouchedPaths); len(shared) > 0 {
			no(CodeBaseMoved, "the base branch changed %s since the check", strings.Join(shared, ", "))
		} else {
			no(CodeBaseMoved, "the base branch moved since the check; the merge result is judged again")
		}
		d.Recheck = true
	}

	d.Merge = len(d.Blocks) == 0
	return d
}

// listPaths names up to three paths, then how many more.
func listPaths(paths []string) string {
	if len(paths) <= 3 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
}

func conclusion(c checks.Conclusion) string {
	if c == "" {
		return "nothing"
	}
	return string(c)
}

// short abbreviates a commit id for messages.
func short(sha string) string {
	if sha == "" {
		return "(none)"
	}
	return change.ShortSHA(sha)
}

// overlap returns the units (packages, or paths outside the catalog) that
// both lists of paths touch, sorted. Two paths touch the same unit when
// their units are equal or one is a directory holding the other: a change
// to catalog/foo/a.yaml on the base and one to catalog/foo/b.yaml in the
// pull request are both changes to package foo, and validation of foo
// depends on both.
func (p *Policy) overlap(base, touched []string) []string {
	var out []string
	tu := make([]string, 0, len(touched))
	for _, t := range touched {
		tu = append(tu, p.unit(t))
	}
	for _, b := range base {
		bu := p.unit(b)
		for _, t := range tu {
			if within(bu, t) || within(t, bu) {
				// Name the narrower of the two: that is what both
				// changed.
				shared := bu
				if len(t) > len(bu) {
					shared = t
				}
				if !slices.Contains(out, shared) {
					out = append(out, shared)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// unit maps a path to the directory that is checked as a whole: under a
// catalog root, the package directory (the root's child); elsewhere the
// path itself.
func (p *Policy) unit(s string) string {
	s = path.Clean(strings.TrimPrefix(s, "/"))
	for _, t := range p.resolvedTargets() {
		// A catalog of several roots is validated whole, so a change
		// anywhere in it touches every package of it.
		if _, ok := TargetOf([]Target{t}, s); ok && len(t.Roots) > 1 {
			roots := slices.Sorted(slices.Values(t.Roots))
			return "the catalog of " + strings.Join(roots, ", ")
		}
	}
	for _, root := range p.Catalog.Roots {
		if root == "." {
			pkg, _, _ := strings.Cut(s, "/")
			return pkg
		}
		if rest, ok := strings.CutPrefix(s, root+"/"); ok {
			pkg, _, _ := strings.Cut(rest, "/")
			return root + "/" + pkg
		}
	}
	return s
}

// within reports whether path a is dir or inside it.
func within(a, dir string) bool {
	return a == dir || dir == "." || strings.HasPrefix(a, dir+"/")
}
