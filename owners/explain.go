package owners

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Why says in a sentence why the walk for the path's approvers ended where
// it did.
func (res *Resolution) Why() string {
	switch {
	case res.Blocked != "":
		return "blocked: " + res.Blocked + "; nobody can approve it until that is fixed"
	case len(res.Approvers) == 0:
		return res.nobody() + ", so nobody can approve it"
	case res.Reason == ReasonNoParentOwners:
		return res.StoppedAt + " sets no_parent_owners, so OWNERS files above it are not consulted"
	case res.noOwners && res.CIYAML == nil && res.approver != nil && res.approver.source == SourceMaintainers:
		return res.ApproverOwnersFile + " names the maintainers, who approve every path; no package ci.yaml governs this one"
	case res.noOwners:
		return "the package's ci.yaml names its approvers; OWNERS files are not read (owners.sources)"
	}
	return "the walk reached the repository root; every OWNERS file on the way counts"
}

// nobody says that no source names approvers for the path, naming the
// sources the policy reads.
func (res *Resolution) nobody() string {
	switch {
	case res.noOwners:
		return "no package ci.yaml names reviewers for this path (owners.sources leaves OWNERS files out)"
	case res.ciSource:
		return "neither an OWNERS file up to the root nor a package ci.yaml names approvers for this path"
	}
	return "no OWNERS file up to the root names approvers for this path"
}

// sourcesNoun names the files approvers come from, for verdicts.
func (res *Resolution) sourcesNoun() string {
	switch {
	case res == nil:
	case res.noOwners:
		return "package ci.yaml"
	case res.ciSource:
		return "OWNERS file or package ci.yaml"
	}
	return "OWNERS file"
}

// grant says where a package's ci.yaml approvers come from, as a
// parenthesis to append, or "".
func grant(g *CIYAMLGrant) string {
	if g == nil {
		return ""
	}
	return " (" + g.String() + ")"
}

// Explain describes the resolution for people, one fact a line.
func (res *Resolution) Explain() string {
	var b strings.Builder
	b.WriteString(res.Path + "\n")
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "  %-21s %s\n", name+":", value)
		}
	}
	field("approvers", listOrNone(res.Approvers))
	field("leaf approvers", strings.Join(res.LeafApprovers, ", "))
	file := res.ApproverOwnersFile
	if res.ApproverFilter != "" {
		file += fmt.Sprintf(" (filter \"%s\")", res.ApproverFilter)
	}
	if res.approver != nil && res.approver.source == SourceCIYAML {
		file += " (its reviewers)"
	}
	field("approver OWNERS file", file)
	field("why", res.Why())
	if res.AutoApproved {
		field("approval", "not needed: "+res.ApproverOwnersFile+" sets auto_approve_unowned_subfolders and no OWNERS file below it names approvers")
	}
	field("reviewers", strings.Join(res.Reviewers, ", "))
	field("required reviewers", strings.Join(res.RequiredReviewers, ", "))
	field("labels", strings.Join(res.Labels, ", "))
	field("emeritus approvers", joinNote(res.EmeritusApprovers, " (shown only; they grant nothing)"))
	if res.CIYAML != nil {
		field("package ci.yaml", res.CIYAML.String())
	}
	if len(res.Layers) > 0 {
		consulted := "OWNERS files"
		if res.ciSource {
			consulted = "OWNERS and ci.yaml files"
		}
		b.WriteString("  " + consulted + " consulted, closest first:\n")
		for _, l := range res.Layers {
			b.WriteString("    " + l.File)
			switch {
			case l.Broken:
				b.WriteString(": does not parse")
			case l.NoParentOwners:
				b.WriteString(": no_parent_owners")
			}
			b.WriteString("\n")
			for _, m := range l.Matches {
				fmt.Fprintf(&b, "      %s\n", m.describe(l.Source))
			}
		}
	}
	return b.String()
}

func (m *Match) describe(source string) string {
	where := fmt.Sprintf("line %d", m.Line)
	if m.Filter != "" {
		where = fmt.Sprintf("filter \"%s\" (line %d)", m.Filter, m.Line)
	}
	var parts []string
	add := func(name string, v []string, note string) {
		if len(v) > 0 {
			parts = append(parts, name+" "+strings.Join(v, ", ")+note)
		}
	}
	via := ""
	if len(m.Aliases) > 0 {
		via = " (alias " + strings.Join(m.Aliases, ", ") + " expanded)"
	}
	if source == SourceCIYAML {
		// A ci.yaml's reviewers are approvers: say so in its own words.
		add("reviewers", m.Approvers, " (approvers: owners.sources includes ci.yaml)")
		add("reviewers", m.Uncounted, " (not counted: no_parent_owners below)")
		if len(parts) == 0 {
			parts = append(parts, "nothing for this path")
		}
		return where + ": " + strings.Join(parts, "; ")
	}
	add("approvers", m.Approvers, via)
	add("approvers", m.Uncounted, " (not counted: no_parent_owners below)")
	add("reviewers", m.Reviewers, "")
	add("required reviewers", m.RequiredReviewers, "")
	add("labels", m.Labels, "")
	add("emeritus approvers", m.EmeritusApprovers, "")
	if len(parts) == 0 {
		parts = append(parts, "nothing for this path")
	}
	return where + ": " + strings.Join(parts, "; ")
}

func listOrNone(v []string) string {
	if len(v) == 0 {
		return "(none)"
	}
	return strings.Join(v, ", ")
}

func joinNote(v []string, note string) string {
	if len(v) == 0 {
		return ""
	}
	return strings.Join(v, ", ") + note
}

// Explain describes the approval state for people: the verdict, each
// required OWNERS file with its paths and who approved them, the approvals
// that do not count and why, and whom to ask.
func (st *State) Explain() string {
	var b strings.Builder
	verdict := "NOT APPROVED"
	if st.Approved {
		verdict = "APPROVED"
	}
	fmt.Fprintf(&b, "%s: %s\n", verdict, st.Reason)
	if st.HeadSHA != "" {
		fmt.Fprintf(&b, "head: %s\n", st.HeadSHA)
	}
	if st.Author != "" {
		fmt.Fprintf(&b, "author: %s\n", st.Author)
	}
	if len(st.Required) > 0 {
		files := "OWNERS files"
		if slices.ContainsFunc(st.Required, func(r Requirement) bool { return r.Source == SourceCIYAML }) {
			files = "OWNERS and ci.yaml files"
		}
		b.WriteString("\n" + files + " that must approve:\n")
	}
	for _, req := range st.Required {
		mark, by := "[ ]", ""
		if req.Approved {
			mark = "[x]"
			if len(req.ApprovedBy) > 0 {
				by = " approved by " + strings.Join(req.ApprovedBy, ", ")
			}
		}
		fmt.Fprintf(&b, "  %s %s%s\n", mark, req.Name(), by)
		for _, cov := range st.Files {
			if cov.OwnersFile == req.File {
				fmt.Fprintf(&b, "        %s\n", cov.describe())
			}
		}
	}
	if len(st.Packages) > 0 {
		b.WriteString("\npackages the change touches:\n")
		for _, p := range st.Packages {
			fmt.Fprintf(&b, "  %s\n", p.Describe())
		}
	}
	if len(st.Approvers) > 0 {
		var parts []string
		for _, a := range st.Approvers {
			if a.Via != "" {
				parts = append(parts, fmt.Sprintf("%s (%s)", a.Login, a.Via))
			} else {
				parts = append(parts, a.Login)
			}
		}
		fmt.Fprintf(&b, "\napprovals that count: %s\n", strings.Join(parts, ", "))
	}
	if len(st.NotCounted) > 0 {
		b.WriteString("\nnot counted:\n")
		for _, n := range st.NotCounted {
			fmt.Fprintf(&b, "  %s %s\n", n.Login, n.Reason)
		}
	}
	if len(st.Suggested) > 0 {
		fmt.Fprintf(&b, "\nsuggested approvers: %s\n", strings.Join(st.Suggested, ", "))
	}
	return b.String()
}

func (cov *Coverage) describe() string {
	what := cov.Path + " (" + cov.Why + ")"
	if cov.derived {
		what = cov.Path + " (" + cov.File + ": " + cov.Why + ")"
	}
	switch {
	case cov.Blocked != "":
		return what + ": blocked, " + cov.Blocked
	case cov.AutoApproved:
		return what + ": needs no approval (auto_approve_unowned_subfolders)"
	case cov.Approved:
		return what + ": approved by " + strings.Join(cov.ApprovedBy, ", ") + grant(cov.CIYAML)
	case len(cov.Approvers) == 0:
		return what + ": nobody can approve it; no " + cov.res.sourcesNoun() + " names approvers for it"
	case cov.root:
		return what + ": waiting for a root approver: " + strings.Join(cov.Approvers, ", ")
	}
	return what + ": waiting for one of " + strings.Join(cov.Approvers, ", ") + grant(cov.CIYAML)
}

// Name is the required file as people read it: its path, and for a
// package's ci.yaml the reviewers it names ("operators/foo/ci.yaml
// reviewers: alice, bob").
func (req *Requirement) Name() string {
	if req.CIYAML != nil {
		return req.CIYAML.String()
	}
	return req.File
}

// Describe says in a line what a touched package needs: "package bar (home
// catalog/bar/): needs bob", or who approved it.
func (p *PackageState) Describe() string {
	home := p.Home
	if home == "" {
		home = "none: the name is not a directory name, so the root approvers decide"
	}
	return fmt.Sprintf("package %s (home %s; %s)", p.Name, home, p.Why) + p.verdict()
}

// DescribeAll says each package of ps in a line, as Describe does, except
// that a package touched in several homes with one verdict (the same
// bundle added to the catalogs of six OpenShift versions, owned by one
// ci.yaml) is one line: "package sailoperator in 6 homes,
// catalogs/v4.17/sailoperator/ to catalogs/v4.22/sailoperator/ (6 blobs
// added in all): approved by ...".
func DescribeAll(ps []PackageState) []string {
	type group struct {
		first          *PackageState
		homes          []string
		added, removed int
	}
	var order []string
	groups := map[string]*group{}
	for i := range ps {
		p := &ps[i]
		key := p.Name + "\x00" + p.verdict()
		g := groups[key]
		if g == nil || p.Home == "" {
			if g != nil {
				key += "\x00" + strconv.Itoa(i)
			}
			g = &group{first: p}
			groups[key] = g
			order = append(order, key)
		}
		g.homes = append(g.homes, p.Home)
		g.added += p.Added
		g.removed += p.Removed
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if len(g.homes) == 1 {
			out = append(out, g.first.Describe())
			continue
		}
		var counts []string
		if g.added > 0 {
			counts = append(counts, fmt.Sprintf("%d added", g.added))
		}
		if g.removed > 0 {
			counts = append(counts, fmt.Sprintf("%d removed", g.removed))
		}
		out = append(out, fmt.Sprintf("package %s in %d homes, %s to %s (blobs %s in all)", g.first.Name, len(g.homes),
			g.homes[0], g.homes[len(g.homes)-1], strings.Join(counts, ", "))+g.first.verdict())
	}
	return out
}

// verdict is the approval of the package as Describe ends it: its home's,
// then each other approval it needs.
func (p *PackageState) verdict() string {
	v := p.homeVerdict()
	for _, n := range p.Identity {
		v += "; " + n.verdict()
	}
	return v
}

func (p *PackageState) homeVerdict() string {
	switch {
	case p.Blocked != "":
		return ": blocked, " + p.Blocked
	case p.AutoApproved:
		return ": needs no approval (auto_approve_unowned_subfolders)"
	case p.homeApproved || p.Approved && len(p.Identity) == 0:
		return ": approved by " + strings.Join(p.ApprovedBy, ", ") + grant(p.CIYAML)
	case len(p.Approvers) == 0:
		return ": nobody can approve it; no " + p.res.sourcesNoun() + " names approvers for its home"
	}
	return ": needs " + strings.Join(p.Approvers, " or ") + grant(p.CIYAML)
}

// verdict says what the need is and whether it is met: "its operator's
// approvers (...): needs bob".
func (n *PackageNeed) verdict() string {
	what := "also " + n.Why
	switch {
	case n.Blocked != "":
		return what + ": blocked, " + n.Blocked
	case n.Approved:
		return what + ": approved by " + strings.Join(n.ApprovedBy, ", ") + grant(n.CIYAML)
	case len(n.Approvers) == 0:
		return what + ": nobody can approve it"
	case n.Root:
		return what + ": needs a root approver: " + strings.Join(n.Approvers, " or ")
	}
	return what + ": needs " + strings.Join(n.Approvers, " or ") + grant(n.CIYAML)
}
