package owners

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
)

// MaxFiles is the most files GitHub's pull request files API lists. A change
// with that many may have more that nobody sees, so it is never approved.
const MaxFiles = 3000

// Ways an approval was given.
const (
	ViaAuthor  = "author"  // the author, approving their own change
	ViaComment = "comment" // an /approve comment
	ViaReview  = "review"  // an APPROVED review
)

// Approval is one person's approval of a change, or its withdrawal.
type Approval struct {
	User string `json:"user"`
	// SHA is the head commit the approval was given on. Unless approvals
	// are sticky it counts only while that commit is the head.
	SHA  string    `json:"sha,omitempty"`
	Time time.Time `json:"time"`
	// Cancel withdraws the user's approval (/approve cancel, a review
	// requesting changes).
	Cancel bool   `json:"cancel,omitempty"`
	Via    string `json:"via,omitempty"`
	// Unbound says why SHA is empty when the front end could not tie the
	// approval to a head, for the report.
	Unbound string `json:"unbound,omitempty"`
}

// Policy are the repository's choices about approvals. The zero value is the
// default policy.
type Policy struct {
	// NoSelfApproval stops the author from approving their own change,
	// implicitly or explicitly. By default the author counts as an
	// approver of the files they own.
	NoSelfApproval bool
	// StickyApprovals keep approvals across pushes, as Prow does. By
	// default an approval covers the head commit it was given on.
	StickyApprovals bool
	// Bots are logins whose approvals never count, besides every
	// "name[bot]" login: the app itself.
	Bots []string
	// ReferenceLists are the catalog.yaml reference lists of the
	// repository, whose entries are owned one by one; nil for none.
	// Which file is one is the repository policy's to say
	// (policy.Catalog.ReferenceListIn), not this package's.
	ReferenceLists []string
	// Sources are where approvers come from: SourceOwners (OWNERS files),
	// SourceCIYAML (each package's ci.yaml reviewers) or both. Nil means
	// OWNERS files alone. Load reads them (LoadOptions.Sources), so this
	// is the policy's word that callers hand to it.
	Sources []string
	// Maintainers approve every path besides the sources' approvers
	// (LoadOptions.Maintainers); nil for none.
	Maintainers *Maintainers `json:",omitempty"`
	// RequireAccess is AccessWrite when approvals count only from users
	// the forge says may write to the repository (Input.WriteAccess,
	// which the review core fills in); "" for no such rule.
	RequireAccess string `json:",omitempty"`
}

// AccessWrite is the one value of Policy.RequireAccess: write access to
// the repository (GitHub's write, maintain or admin).
const AccessWrite = "write"

// Owner sources.
const (
	SourceOwners = "owners"
	SourceCIYAML = "ci.yaml"
	// SourceMaintainers marks the root grant of LoadOptions.Maintainers
	// in resolutions; it is not a value of owners.sources.
	SourceMaintainers = "maintainers"
)

// Input is what Evaluate needs to know about a change.
type Input struct {
	Change    *change.Change
	Approvals []Approval
	Policy    Policy
	// Collaborators, when not nil, are the only users whose approvals
	// count (the author included): an owner who has lost access to the
	// repository approves nothing. Nil means no such filter.
	Collaborators []string
	// WriteAccess, when not nil, are the only users whose approvals
	// count because the forge says they may write to the repository
	// (Policy.RequireAccess); the author's own approval included.
	// NoAccess says why a user outside it does not count.
	WriteAccess []string
	NoAccess    string
	// Base and Head are the trees of the change, used to judge changes
	// to catalog.yaml reference lists entry by entry. Without them a
	// reference list is judged as a whole, by its own owners.
	Base, Head fs.FS
	// Packages are the catalog packages whose blobs the change adds,
	// removes or changes, wherever they sit (spec/owners.md section 4).
	// Each needs the approvers of its home besides those of the paths.
	Packages []PackageTouch
	// Catalogs are the catalogs the change adds or removes. Each is a
	// published image that appears or goes, which only the root
	// approvers (the maintainers) may decide.
	Catalogs []CatalogChange
}

// CatalogChange is a catalog that a change adds or removes.
type CatalogChange struct {
	// Name is the catalog's name, Roots its directories on the side
	// where it exists.
	Name  string   `json:"name"`
	Roots []string `json:"roots"`
	// Added is set for a new catalog, unset for one the change removes.
	Added bool `json:"added,omitempty"`
	// Files are changed files under its roots, the first of which the
	// requirement is shown against.
	Files []string `json:"files,omitempty"`
}

// PackageTouch is a package whose blobs a change adds, removes or changes.
type PackageTouch struct {
	Name string `json:"name"`
	// Home is the package's directory, "<root>/<name>/", whose approvers
	// (read from the base, like every path's) own the package. "" when
	// the name cannot be a directory name: only the root approvers may
	// approve such a package.
	Home string `json:"home"`
	// Files are the changed files that hold the package's blobs, on
	// either side of the change.
	Files []string `json:"files"`
	// Why says what happened to its blobs: "1 blob added in ...".
	Why string `json:"why"`
	// Added and Removed count its blobs the change adds and removes.
	Added   int `json:"added,omitempty"`
	Removed int `json:"removed,omitempty"`
	// ByName says the package's ownership follows its name across the
	// repository, as under the directories layout, where Home is named
	// for the operator rather than the package: besides Home's
	// approvers, the package needs those of its operator (Holders, and
	// operators/<name>/ci.yaml where ci.yaml is a source), and the root
	// approvers when Home is a directory of another name that never held
	// it, or when the package is new to the repository (see
	// Repo.packageTargets).
	ByName bool `json:"byName,omitempty"`
	// Holders are, with ByName, the directories that hold the package
	// on the base, "<root>/<dir>/", in every catalog of the repository.
	Holders []string `json:"holders,omitempty"`
}

// PackageState is the approval state of one touched package.
type PackageState struct {
	PackageTouch
	Approvers    []string `json:"approvers"`
	ApprovedBy   []string `json:"approvedBy,omitempty"`
	Approved     bool     `json:"approved"`
	AutoApproved bool     `json:"autoApproved,omitempty"`
	Blocked      string   `json:"blocked,omitempty"`
	// CIYAML is the package's ci.yaml whose reviewers approve it, when
	// ci.yaml is an owners source.
	CIYAML *CIYAMLGrant `json:"ciYAML,omitempty"`
	// Identity are what the package needs besides its home's approvers
	// when its ownership follows its name (PackageTouch.ByName). Approved
	// is set only when they are approved too.
	Identity []PackageNeed `json:"identity,omitempty"`

	res          *Resolution
	homeApproved bool
}

// PackageNeed is one approval a package needs besides its home's: its
// operator's approvers where the base keeps it, or the root approvers.
type PackageNeed struct {
	// Path is the directory whose approvers decide.
	Path string `json:"path"`
	// Why says why the package needs them.
	Why        string       `json:"why"`
	Root       bool         `json:"root,omitempty"`
	Approvers  []string     `json:"approvers"`
	ApprovedBy []string     `json:"approvedBy,omitempty"`
	Approved   bool         `json:"approved"`
	Blocked    string       `json:"blocked,omitempty"`
	CIYAML     *CIYAMLGrant `json:"ciYAML,omitempty"`

	res *Resolution
}

// State is the approval state of a change at its head commit.
type State struct {
	Approved bool `json:"approved"`
	// Reason is one sentence on the verdict.
	Reason  string `json:"reason"`
	Number  int    `json:"number,omitempty"`
	Author  string `json:"author,omitempty"`
	HeadSHA string `json:"headSHA"`
	// Files is the coverage of every path that needs approval: both
	// paths of a rename, and the entries of reference lists.
	Files []Coverage `json:"files"`
	// Required are the OWNERS files whose approvers must approve.
	Required []Requirement `json:"required"`
	// Unapproved are the Required files still waiting.
	Unapproved []string `json:"unapproved"`
	// Suggested is a small set of approvers who together would approve
	// the rest, most useful first; stable for a given change number.
	Suggested []string `json:"suggested"`
	// Approvers are the approvals that count, in order of login.
	Approvers []Approver `json:"approvers"`
	// NotCounted are approvals that were given but do not count, and why.
	NotCounted []NotCounted `json:"notCounted,omitempty"`
	// Findings are the problems with the OWNERS files and reference lists.
	Findings []checks.Finding `json:"findings"`
	// Packages are the catalog packages the change touches, each with
	// the approvers of its home; their coverage is in Files too.
	Packages []PackageState `json:"packages,omitempty"`
	// Catalogs are the catalogs the change adds or removes, which the
	// root approvers decide; their coverage is in Files too.
	Catalogs []CatalogChange `json:"catalogs,omitempty"`
}

// Coverage is the approval state of one path.
type Coverage struct {
	// Path is the path whose owners decide; File the changed file it
	// stands for (the same, except for reference list entries).
	Path string `json:"path"`
	File string `json:"file"`
	// Why the path needs approval: "modified", "renamed from", "entry
	// etcd changed", ...
	Why string `json:"why"`
	// OwnersFile is the required OWNERS file the path counts under.
	OwnersFile string   `json:"ownersFile"`
	Approvers  []string `json:"approvers"`
	ApprovedBy []string `json:"approvedBy,omitempty"`
	Approved   bool     `json:"approved"`
	// AutoApproved paths need no approval (auto_approve_unowned_subfolders).
	AutoApproved bool `json:"autoApproved,omitempty"`
	// Blocked says why nobody can approve the path.
	Blocked string `json:"blocked,omitempty"`
	// Package is the package the path is the home of, when the path
	// needs approval because the change touches that package.
	Package string `json:"package,omitempty"`
	// CIYAML is the package ci.yaml whose reviewers approve the path,
	// when ci.yaml is an owners source.
	CIYAML *CIYAMLGrant `json:"ciYAML,omitempty"`

	res      *Resolution
	root     bool
	derived  bool // the path stands for part of File (a reference list entry)
	pkg      int  // as target.pkg
	identity bool // as target.identity
}

// Requirement is one OWNERS file whose approvers must approve.
type Requirement struct {
	File string `json:"file"`
	// Source is SourceCIYAML when File is a package's ci.yaml, whose
	// reviewers (CIYAML) must approve.
	Source     string       `json:"source,omitempty"`
	CIYAML     *CIYAMLGrant `json:"ciYAML,omitempty"`
	Approved   bool         `json:"approved"`
	ApprovedBy []string     `json:"approvedBy,omitempty"`
	Paths      []string     `json:"paths"`
}

// Approver is an approval that counts.
type Approver struct {
	// Login as the user spelt it; compared normalised.
	Login string `json:"login"`
	Via   string `json:"via,omitempty"`
	SHA   string `json:"sha,omitempty"`
}

// NotCounted is an approval that does not count.
type NotCounted struct {
	Login  string `json:"login"`
	Reason string `json:"reason"`
}

// target is one path that needs approval, before it is resolved.
type target struct {
	path, file, why string
	root            bool // only the root approvers decide
	derived         bool // part of a reference list, not a file
	pkg             int  // 1 + the index of the package in Input.Packages; 0 for a path
	// identity marks a package's need besides its home (PackageNeed).
	identity bool
}

// Evaluate computes the approval state of a change: which paths need whose
// approval, which of them have it, and whom to ask for the rest.
//
// A change is approved when it has at least one and fewer than MaxFiles
// files and every path that needs approval has a current approval from one of
// its approvers. A path governed by an OWNERS file that does not parse can
// never be approved.
func (r *Repo) Evaluate(in Input) *State {
	c := in.Change
	if c == nil {
		c = &change.Change{}
	}
	st := &State{Number: c.Number, Author: c.Author, HeadSHA: c.HeadSHA, Findings: r.Findings()}

	targets, findings := r.targets(c, in)
	st.Findings = append(st.Findings, findings...)
	targets = append(targets, r.packageTargets(in.Packages)...)
	targets = append(targets, catalogTargets(in.Catalogs)...)

	current, notCounted, author := r.currentApprovers(c, in)
	st.NotCounted = notCounted

	byDir := map[string][]int{}
	for _, t := range targets {
		var res *Resolution
		if t.root {
			res = r.ResolveRoot(t.path)
		} else {
			res = r.Resolve(t.path)
		}
		cov := Coverage{
			Path: t.path, File: t.file, Why: t.why,
			Approvers:    res.Approvers,
			AutoApproved: res.AutoApproved,
			Blocked:      res.Blocked,
			CIYAML:       res.CIYAML,
			res:          res,
			root:         t.root,
			derived:      t.derived,
			identity:     t.identity,
		}
		if t.pkg > 0 {
			cov.Package, cov.pkg = in.Packages[t.pkg-1].Name, t.pkg
		}
		for _, a := range res.Approvers {
			if ap, ok := current[a]; ok {
				cov.ApprovedBy = append(cov.ApprovedBy, ap.Login)
			}
		}
		cov.Approved = cov.Blocked == "" && (cov.AutoApproved || len(cov.ApprovedBy) > 0)
		dir := "."
		switch {
		case res.blockedBy != nil:
			// Filed under the broken file, which is what must change.
			dir = groupOf(res.blockedBy)
		case !t.root:
			dir = r.approverGroup(res)
		}
		byDir[dir] = append(byDir[dir], len(st.Files))
		st.Files = append(st.Files, cov)
	}

	st.Required = r.required(st.Files, byDir)
	st.Packages = packageStates(in.Packages, st.Files)
	st.Catalogs = in.Catalogs
	for _, req := range st.Required {
		if !req.Approved {
			st.Unapproved = append(st.Unapproved, req.File)
		}
	}

	// Approvers who count, and those who approved nothing here.
	used := map[string]bool{}
	for _, cov := range st.Files {
		for _, a := range cov.ApprovedBy {
			used[NormLogin(a)] = true
		}
	}
	for _, login := range slices.Sorted(maps.Keys(current)) {
		ap := current[login]
		switch {
		case used[login]:
			st.Approvers = append(st.Approvers, ap)
		case login != author:
			st.NotCounted = append(st.NotCounted, NotCounted{Login: ap.Login, Reason: "is not an approver of any path in this change"})
		}
	}

	st.Suggested = r.suggest(st.Files, c.Number, func(login string) bool {
		return login == author || IsBot(login, in.Policy.Bots) || !collaborator(in.Collaborators, login)
	})
	st.Approved, st.Reason = verdict(st, len(c.Files))
	// Empty lists, not nulls, for the JSON consumers.
	for _, l := range []*[]string{&st.Unapproved, &st.Suggested} {
		if *l == nil {
			*l = []string{}
		}
	}
	if st.Files == nil {
		st.Files = []Coverage{}
	}
	if st.Required == nil {
		st.Required = []Requirement{}
	}
	if st.Approvers == nil {
		st.Approvers = []Approver{}
	}
	if st.Findings == nil {
		st.Findings = []checks.Finding{}
	}
	return st
}

func verdict(st *State, files int) (bool, string) {
	blocked, orphans, waiting := 0, 0, 0
	var broken []string
	for _, cov := range st.Files {
		if !cov.Approved {
			waiting++
		}
		if cov.Blocked == "" && !cov.Approved && len(cov.Approvers) == 0 {
			orphans++
		}
		if cov.Blocked != "" {
			blocked++
			if by := cov.res.BlockedBy; !slices.Contains(broken, by) {
				broken = append(broken, by)
			}
		}
	}
	switch {
	case files == 0 || len(st.Files) == 0:
		return false, "the change has no files; a change without files is never approved"
	case files >= MaxFiles:
		return false, fmt.Sprintf("the change has %d files, as many as GitHub lists (%d); some may be unlisted, so it is never approved automatically", files, MaxFiles)
	case blocked > 0:
		slices.Sort(broken)
		return false, fmt.Sprintf("%s %s not parse; nobody can approve the %s %s until %s fixed",
			strings.Join(broken, ", "), pick(len(broken), "does", "do"), checks.Plural(blocked, "path"),
			pick(len(broken), "it governs", "they govern"), pick(len(broken), "it is", "they are"))
	case orphans > 0:
		return false, fmt.Sprintf("no %s names approvers for %s, so nobody can approve %s",
			st.Files[0].res.sourcesNoun(), checks.Plural(orphans, "path"), pick(orphans, "it", "them"))
	case len(st.Unapproved) == 1:
		return false, st.Unapproved[0] + " still needs approval"
	case len(st.Unapproved) > 1:
		return false, fmt.Sprintf("%d of %d required OWNERS files still need approval", len(st.Unapproved), len(st.Required))
	case waiting > 0:
		// Every waiting path belongs to an unapproved OWNERS file; this
		// only guards the verdict against a grouping mistake.
		return false, checks.Plural(waiting, "path") + " still need approval"
	}
	if len(st.Files) == 1 {
		return true, "the one path that needs approval is approved"
	}
	return true, fmt.Sprintf("all %d paths that need approval are approved", len(st.Files))
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// targets lists the paths that need approval: every changed file, both
// paths of a rename, and for reference lists the entries they touch.
func (r *Repo) targets(c *change.Change, in Input) ([]target, []checks.Finding) {
	lists := in.Policy.ReferenceLists
	isList := func(p string) bool { return slices.Contains(lists, p) }
	var out []target
	var findings []checks.Finding
	seen := map[target]bool{}
	add := func(t target) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	files := slices.Clone(c.Files)
	change.SortFiles(files)
	for _, f := range files {
		var oldPath, newPath string
		switch f.Status {
		case change.Added:
			newPath = f.Path
		case change.Removed:
			oldPath = f.Path
		case change.Renamed:
			oldPath, newPath = f.PreviousPath, f.Path
			if oldPath == "" {
				oldPath = f.Path
			}
		default:
			oldPath, newPath = f.Path, f.Path
		}
		for i, p := range []string{oldPath, newPath} {
			if p == "" || i == 1 && p == oldPath {
				continue
			}
			cp, err := CleanPath(p)
			if err != nil {
				// A path the engine cannot place: only the root
				// approvers may approve it.
				add(target{path: p, file: f.Path, why: "a path outside the tree", root: true})
				continue
			}
			if isList(cp) && in.Base != nil && in.Head != nil {
				ts, fs := r.listTargets(cp, oldPath, newPath, f, in)
				for _, t := range ts {
					add(t)
				}
				findings = append(findings, fs...)
				continue
			}
			add(target{path: cp, file: f.Path, why: fileWhy(f, p)})
		}
	}
	return out, findings
}

// packageTargets are the homes of the touched packages: each package
// needs its home's approvers wherever its blobs sit, so that the owner of
// one package cannot change another from their own directory.
//
// A package whose ownership follows its name (PackageTouch.ByName) needs
// more, since its home is named for an operator and any operator's
// directory can hold any package: the approvers of the package where the
// base keeps it (operators/<name>/ci.yaml and its directories in every
// catalog), and the root approvers when its directory has another name
// and never held it (the first konflux directory to hold konflux-operator
// was the maintainers' to accept) or when the base has no trace of it.
func (r *Repo) packageTargets(pkgs []PackageTouch) []target {
	var out []target
	for i, p := range pkgs {
		file := ""
		if len(p.Files) > 0 {
			file = p.Files[0]
		}
		why := "package " + p.Name + ": " + p.Why
		if p.Home == "" {
			out = append(out, target{path: ".", file: file, why: why + "; its name is not a plain directory name", root: true, derived: true, pkg: i + 1})
			continue
		}
		home := strings.TrimSuffix(p.Home, "/") + "/"
		out = append(out, target{path: home, file: file, why: why, derived: true, pkg: i + 1})
		if p.ByName {
			out = append(out, r.identityTargets(p, home, file, i+1)...)
		}
	}
	return out
}

// identityTargets are what a package whose ownership follows its name
// needs besides its home (see packageTargets). A place whose approvers
// are those of the home, or of a place already listed, adds nothing and
// is left out: a package kept in eleven catalogs under one ci.yaml is one
// requirement, not eleven.
func (r *Repo) identityTargets(p PackageTouch, home, file string, pkg int) []target {
	var places []string
	if r.ci != nil && r.ci[p.Name] != nil && plainName(p.Name) {
		places = append(places, OperatorsDir+"/"+p.Name+"/")
	}
	for _, h := range p.Holders {
		places = append(places, strings.TrimSuffix(h, "/")+"/")
	}
	seen := []*Resolution{r.Resolve(home)}
	var out []target
	for _, pl := range places {
		res := r.Resolve(pl)
		if res.Blocked == "" && slices.ContainsFunc(seen, func(s *Resolution) bool {
			return s.Blocked == "" && (s.approver != nil && s.approver == res.approver || slices.Equal(s.Approvers, res.Approvers))
		}) {
			continue
		}
		seen = append(seen, res)
		why := "package " + p.Name + " is kept in " + pl + " on the base; its approvers there approve it everywhere"
		if strings.HasPrefix(pl, OperatorsDir+"/") {
			why = "package " + p.Name + " is its operator's, " + OperatorsDir + "/" + p.Name + "/" + CIYAMLFile + ", in every catalog"
		}
		out = append(out, target{path: pl, file: file, why: why, derived: true, pkg: pkg, identity: true})
	}
	dir := path.Base(strings.TrimSuffix(home, "/"))
	switch {
	case dir != p.Name && !slices.ContainsFunc(p.Holders, func(h string) bool { return path.Base(strings.TrimSuffix(h, "/")) == dir }):
		out = append(out, target{path: home, file: file, root: true, derived: true, pkg: pkg, identity: true,
			why: "directory " + dir + " holds package " + p.Name + ", and no directory of that name holds it on the base; a package in a directory of another name needs the root approvers the first time"})
	case len(places) == 0 && r.maintainers:
		out = append(out, target{path: home, file: file, root: true, derived: true, pkg: pkg, identity: true,
			why: "package " + p.Name + " is new to the repository: no catalog of the base holds it and it has no " + OperatorsDir + "/" + p.Name + "/" + CIYAMLFile})
	}
	return out
}

// Why says why the catalog needs the root approvers.
func (c *CatalogChange) Why() string {
	if c.Added {
		return "catalog " + c.Name + " added: a new catalog is a new published image"
	}
	return "catalog " + c.Name + " removed: its published image goes with it"
}

// catalogTargets are the catalogs the change adds or removes: each is a
// published image that appears or goes, which the root approvers decide.
func catalogTargets(cats []CatalogChange) []target {
	var out []target
	for _, c := range cats {
		if len(c.Roots) == 0 {
			continue
		}
		file := ""
		if len(c.Files) > 0 {
			file = c.Files[0]
		}
		out = append(out, target{path: strings.TrimSuffix(c.Roots[0], "/") + "/", file: file, why: c.Why(), root: true, derived: true})
	}
	return out
}

// packageStates reads each touched package's approval off the coverage of
// its home and of what else it needs.
func packageStates(pkgs []PackageTouch, files []Coverage) []PackageState {
	var out []PackageState
	for i, p := range pkgs {
		ps := PackageState{PackageTouch: p}
		home := false
		for _, cov := range files {
			switch {
			case cov.pkg != i+1:
			case cov.identity:
				ps.Identity = append(ps.Identity, PackageNeed{
					Path: cov.Path, Why: cov.Why, Root: cov.root, Approvers: cov.Approvers, ApprovedBy: cov.ApprovedBy,
					Approved: cov.Approved, Blocked: cov.Blocked, CIYAML: cov.CIYAML, res: cov.res,
				})
			case !home:
				home = true
				ps.Approvers, ps.ApprovedBy = cov.Approvers, cov.ApprovedBy
				ps.Approved, ps.AutoApproved, ps.Blocked = cov.Approved, cov.AutoApproved, cov.Blocked
				ps.CIYAML, ps.res = cov.CIYAML, cov.res
			}
		}
		ps.homeApproved = ps.Approved
		for _, n := range ps.Identity {
			ps.Approved = ps.Approved && n.Approved
		}
		if ps.Approvers == nil {
			ps.Approvers = []string{}
		}
		out = append(out, ps)
	}
	return out
}

func fileWhy(f change.File, p string) string {
	if f.Status == change.Renamed {
		if p == f.Path {
			return "renamed from " + orDefault(f.PreviousPath, f.Path)
		}
		return "renamed to " + f.Path
	}
	if f.Status == "" {
		return change.Modified
	}
	return f.Status
}

// listTargets judges one side of a change to a reference list entry by entry.
func (r *Repo) listTargets(p, oldPath, newPath string, f change.File, in Input) ([]target, []checks.Finding) {
	var base, head []byte
	var findings []checks.Finding
	read := func(fsys fs.FS, name string) []byte {
		b, err := fs.ReadFile(fsys, name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			findings = append(findings, finding(RuleReferenceList, checks.SeverityWarning, name, 0,
				fmt.Sprintf("cannot read the reference list: %v; its root approvers decide", err)))
		}
		return b
	}
	// A side of the change that is this list is compared with the other
	// side only if that is the same list; a list renamed to or from
	// another path is a list removed or added.
	if p == oldPath {
		base = read(in.Base, p)
	}
	if p == newPath {
		head = read(in.Head, p)
	}
	d, fs := DiffReferenceList(p, base, head)
	findings = append(findings, fs...)
	if !d.IsList {
		return []target{{path: p, file: f.Path, why: fileWhy(f, p)}}, findings
	}
	var out []target
	for _, rc := range d.References {
		why := fmt.Sprintf("entry %s %s", rc.Name, rc.Change)
		if rc.Detail != "" {
			why += " (" + rc.Detail + ")"
		}
		if len(rc.Paths) == 0 {
			out = append(out, target{path: p, file: p, why: why + "; its name is not a plain directory name", root: true, derived: true})
		}
		for _, rp := range rc.Paths {
			out = append(out, target{path: rp, file: p, why: why, derived: true})
		}
	}
	switch {
	case len(d.Fields) > 0:
		out = append(out, target{path: p, file: p, why: "changed " + strings.Join(d.Fields, ", "), root: true, derived: true})
	case len(out) == 0:
		out = append(out, target{path: p, file: p, why: "changed without changing an entry (comments or layout)", root: true, derived: true})
	}
	return out, findings
}

// currentApprovers replays the approvals in time order and returns, by
// normalised login, those that count at the head commit.
func (r *Repo) currentApprovers(c *change.Change, in Input) (map[string]Approver, []NotCounted, string) {
	author := NormLogin(c.Author)
	approvals := slices.Clone(in.Approvals)
	sort.SliceStable(approvals, func(i, j int) bool { return approvals[i].Time.Before(approvals[j].Time) })

	var notCounted []NotCounted
	noted := map[string]bool{}
	note := func(a Approval, reason string) {
		if !noted[NormLogin(a.User)] {
			noted[NormLogin(a.User)] = true
			notCounted = append(notCounted, NotCounted{Login: a.User, Reason: reason})
		}
	}
	latest := map[string]Approval{}
	var order []string
	for _, a := range approvals {
		login := NormLogin(a.User)
		switch {
		case login == "":
			continue
		case IsBot(a.User, in.Policy.Bots):
			note(a, "is a bot; bots never approve")
			continue
		case login == author && in.Policy.NoSelfApproval:
			note(a, "is the author, and self-approval is off")
			continue
		case !collaborator(in.Collaborators, login):
			note(a, "is not a collaborator of the repository")
			continue
		case !writer(in, login):
			note(a, in.noAccess())
			continue
		}
		if _, ok := latest[login]; !ok {
			order = append(order, login)
		}
		latest[login] = a
	}

	current := map[string]Approver{}
	for _, login := range order {
		a := latest[login]
		switch {
		case a.Cancel:
			// Withdrawn; for the author that withdraws the implicit
			// self-approval too.
			note(a, "withdrew their approval (/approve cancel or a review requesting changes)")
		case login == author:
			current[login] = Approver{Login: a.User, Via: ViaAuthor}
		case !in.Policy.StickyApprovals && (c.HeadSHA == "" || !strings.EqualFold(a.SHA, c.HeadSHA)):
			reason := staleReason(a.SHA, c.HeadSHA)
			if a.SHA == "" && a.Unbound != "" && c.HeadSHA != "" {
				reason = a.Unbound
			}
			note(a, reason)
		default:
			ap := Approver{Login: a.User, Via: a.Via}
			if !in.Policy.StickyApprovals {
				ap.SHA = c.HeadSHA
			} else {
				ap.SHA = a.SHA
			}
			current[login] = ap
		}
	}
	if author != "" && !in.Policy.NoSelfApproval && !IsBot(c.Author, in.Policy.Bots) && collaborator(in.Collaborators, author) {
		switch a, ok := latest[author]; {
		case ok && a.Cancel:
		case !writer(in, author):
			if !noted[author] {
				noted[author] = true
				notCounted = append(notCounted, NotCounted{Login: c.Author, Reason: "is the author, and " + in.noAccess()})
			}
		default:
			current[author] = Approver{Login: c.Author, Via: ViaAuthor}
		}
	}
	return current, notCounted, author
}

// writer says whether login may approve under Policy.RequireAccess.
func writer(in Input, login string) bool {
	return in.WriteAccess == nil || slices.ContainsFunc(in.WriteAccess, func(w string) bool { return NormLogin(w) == login })
}

func (in Input) noAccess() string {
	if in.NoAccess != "" {
		return in.NoAccess
	}
	return "has no write access to the repository, which approvals need (owners.requireAccess)"
}

func staleReason(sha, head string) string {
	switch {
	case head == "":
		return "the head commit is unknown, so no approval can be tied to it"
	case sha == "":
		return "approved without naming a commit; approvals are bound to the head commit"
	}
	return fmt.Sprintf("approved %s, not the head %s; a push after an approval needs a fresh one", change.ShortSHA(sha), change.ShortSHA(head))
}

func collaborator(collaborators []string, login string) bool {
	if collaborators == nil {
		return true
	}
	return slices.ContainsFunc(collaborators, func(c string) bool { return NormLogin(c) == login })
}

// required groups the paths by the OWNERS file whose approvers must approve
// them. Each path starts at its approver OWNERS file; a file whose ancestor
// is also required is folded into that ancestor, whose approvers approve it
// too, unless a no_parent_owners file lies between them.
func (r *Repo) required(files []Coverage, byDir map[string][]int) []Requirement {
	dirs := slices.Sorted(maps.Keys(byDir))
	keep := map[string]bool{}
	for _, d := range dirs {
		keep[d] = true
	}
	for _, d := range dirs {
		if r.ancestorInSet(d, byDir) != "" {
			delete(keep, d)
		}
	}
	groups := map[string][]int{}
	for _, d := range dirs {
		g := d
		for !keep[g] && g != "." {
			g = path.Dir(g)
		}
		if !keep[g] {
			g = d // cannot happen: a folded file always has a kept ancestor
		}
		groups[g] = append(groups[g], byDir[d]...)
	}
	var out []Requirement
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		req := Requirement{File: r.ownersFilePath(g), Approved: true}
		if od := r.dirs[g]; od != nil && od.source == SourceMaintainers {
			// No OWNERS file at the root: the maintainers' file is
			// what names the root approvers.
			req.File = od.file
		}
		if r.isCIGroup(g) {
			req.File, req.Source = g, SourceCIYAML
		}
		by := map[string]bool{}
		for _, i := range groups[g] {
			cov := &files[i]
			cov.OwnersFile = req.File
			if req.Source == SourceCIYAML && req.CIYAML == nil {
				req.CIYAML = cov.CIYAML
			}
			req.Paths = append(req.Paths, cov.Path)
			req.Approved = req.Approved && cov.Approved
			for _, a := range cov.ApprovedBy {
				by[a] = true
			}
		}
		req.ApprovedBy = slices.Sorted(maps.Keys(by))
		slices.Sort(req.Paths)
		req.Paths = slices.Compact(req.Paths)
		out = append(out, req)
	}
	return out
}

// ancestorInSet returns the closest ancestor of dir in set that dir folds
// into, or "" when a no_parent_owners file (dir's own included) is in the
// way or no ancestor is in the set. A broken OWNERS file never folds: it is
// what must be fixed, so it stays in sight.
//
// A package's ci.yaml neither folds nor takes others in: it owns the
// package's directories in several places at once (operators/<package>/
// and <root>/<package>/), so no directory stands for it.
func (r *Repo) ancestorInSet(dir string, set map[string][]int) string {
	if od := r.dirs[dir]; od != nil && od.broken || r.isCIGroup(dir) {
		return ""
	}
	for p := dir; p != "."; {
		if r.noParentOwners(p) {
			return ""
		}
		p = path.Dir(p)
		if _, ok := set[p]; ok && !r.isCIGroup(p) {
			return p
		}
	}
	return ""
}

// isCIGroup reports whether a requirement group is a package's ci.yaml
// rather than a directory.
func (r *Repo) isCIGroup(g string) bool {
	od := r.ci[path.Base(path.Dir(g))]
	return od != nil && od.file == g
}
