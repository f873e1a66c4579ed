package owners

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Why the walk up the tree for a path's approvers ended.
const (
	// ReasonRoot: the walk reached the repository root.
	ReasonRoot = "root"
	// ReasonNoParentOwners: an OWNERS file with no_parent_owners stopped
	// the walk after approvers had been found at or below it.
	ReasonNoParentOwners = "no_parent_owners"
)

// Resolution is who owns one path and why. Logins are normalised and
// sorted. Its slices may be shared with the Repo: treat them as read-only.
type Resolution struct {
	Path string `json:"path"`
	// Approvers may approve a change to the path: every matching entry
	// from the path's directory up to the root, or up to the OWNERS file
	// whose no_parent_owners stopped the walk.
	Approvers []string `json:"approvers"`
	// LeafApprovers are those of the closest OWNERS file with matching
	// approvers, and of a package's ci.yaml in the same directory: the
	// people to ask first.
	LeafApprovers []string `json:"leafApprovers"`
	// ApproverOwnersFile is that closest file; the root OWNERS file when
	// no file names approvers for the path.
	ApproverOwnersFile string `json:"approverOwnersFile"`
	// ApproverFilter is the filter of ApproverOwnersFile that matched the
	// path, empty for a simple-form file.
	ApproverFilter string `json:"approverFilter,omitempty"`
	// Reason says why the walk ended (ReasonRoot, ReasonNoParentOwners);
	// StoppedAt is the OWNERS file that stopped it.
	Reason    string `json:"reason"`
	StoppedAt string `json:"stoppedAt,omitempty"`

	Reviewers         []string `json:"reviewers,omitempty"`
	RequiredReviewers []string `json:"requiredReviewers,omitempty"`
	Labels            []string `json:"labels,omitempty"`
	// EmeritusApprovers of the files walked: shown, never counted.
	EmeritusApprovers []string `json:"emeritusApprovers,omitempty"`

	// AutoApproved is set when ApproverOwnersFile has
	// auto_approve_unowned_subfolders and the path lies in a directory
	// below it: the path needs no approval.
	AutoApproved bool `json:"autoApproved,omitempty"`
	// Blocked says why nobody can approve the path: an OWNERS or
	// OWNERS_ALIASES file that governs it does not parse. BlockedBy is
	// that file.
	Blocked   string `json:"blocked,omitempty"`
	BlockedBy string `json:"blockedBy,omitempty"`

	// Layers are the OWNERS files that had something for the path,
	// closest first.
	Layers []Layer `json:"layers"`
	// CIYAML is the package ci.yaml whose reviewers approve the path, when
	// ci.yaml is an owners source and the path is in a package's home.
	CIYAML *CIYAMLGrant `json:"ciYAML,omitempty"`

	approver, blockedBy *ownersDir
	// noOwners and ciSource say which sources were read, for explanations.
	noOwners, ciSource bool
}

// Layer is what one OWNERS file contributed to a resolution.
type Layer struct {
	File string `json:"file"`
	// Source is SourceCIYAML for a package's ci.yaml, empty for an OWNERS
	// file.
	Source         string  `json:"source,omitempty"`
	NoParentOwners bool    `json:"noParentOwners,omitempty"`
	Broken         bool    `json:"broken,omitempty"`
	Matches        []Match `json:"matches,omitempty"`
}

// Match is one entry of an OWNERS file that applies to the path, and what
// it contributed to each role that was still being collected.
type Match struct {
	// Filter is the filter that matched; empty for the simple form.
	Filter    string   `json:"filter,omitempty"`
	Line      int      `json:"line"`
	Approvers []string `json:"approvers,omitempty"`
	// Aliases are the alias names the entry's approvers were written as.
	Aliases           []string `json:"aliases,omitempty"`
	Reviewers         []string `json:"reviewers,omitempty"`
	RequiredReviewers []string `json:"requiredReviewers,omitempty"`
	Labels            []string `json:"labels,omitempty"`
	EmeritusApprovers []string `json:"emeritusApprovers,omitempty"`
	// Uncounted are approvers the entry lists that do not count, because
	// a no_parent_owners file below stopped the walk for approvers.
	Uncounted []string `json:"uncounted,omitempty"`
}

// CleanPath turns a user's or an API's path into the slash-separated,
// root-relative form the engine uses, or reports that it leaves the tree.
func CleanPath(p string) (string, error) {
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	c = strings.TrimPrefix(c, "/")
	if c == "" || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q does not name a file inside the repository", p)
	}
	return c, nil
}

// rel is p relative to directory dir, which contains it.
func rel(dir, p string) string {
	if dir == "." {
		return p
	}
	return p[len(dir)+1:]
}

// ownersFilePath is the OWNERS file of a directory, whether or not it
// exists.
func (r *Repo) ownersFilePath(dir string) string {
	if dir == "." {
		return r.ownersFile
	}
	return dir + "/" + r.ownersFile
}

// roleWalk collects one role up the tree, honouring no_parent_owners for
// that role alone. The sets are small, so a slice sorted once at the end
// beats a map.
type roleWalk struct {
	all     []string
	stopped bool
}

func (w *roleWalk) add(logins []string) {
	if len(logins) == 0 {
		return
	}
	if w.all == nil {
		w.all = make([]string, 0, max(16, len(logins)))
	}
	w.all = append(w.all, logins...)
}

// list sorts and de-duplicates in place: the walk owns the slice.
func (w *roleWalk) list() []string {
	if len(w.all) == 0 {
		return nil
	}
	slices.Sort(w.all)
	return slices.Compact(w.all)
}

// Resolve says who owns the file at p (slash-separated, relative to the
// root; see CleanPath). The path need not exist: owners are a property of
// the place, so a deleted or not yet added file resolves the same way.
//
// The walk goes from p's directory to the root. At each OWNERS file it takes
// every entry whose filter is empty or matches p relative to that file's
// directory; no_parent_owners ends the walk for a role once that role has
// someone. An OWNERS file covers its directory, itself, its siblings and
// everything below, so its owners approve changes to it. A path ending in
// a slash is a directory (see ResolveDir).
func (r *Repo) Resolve(p string) *Resolution {
	if strings.HasSuffix(p, "/") && p != "/" {
		if dir, err := CleanPath(p); err == nil {
			return r.ResolveDir(dir)
		}
	}
	return r.resolve(p, false)
}

// ResolveDir says who owns the directory dir ("." for the root): the owners
// of its OWNERS file, which are those of everything directly in it, whether
// or not the file exists.
func (r *Repo) ResolveDir(dir string) *Resolution {
	res := r.Resolve(r.ownersFilePath(dir))
	res.Path = dir
	return res
}

// ResolveRoot is Resolve with only the root OWNERS file consulted: for
// changes that only the repository's root approvers may make.
func (r *Repo) ResolveRoot(p string) *Resolution {
	return r.resolve(p, true)
}

func (r *Repo) resolve(p string, rootOnly bool) *Resolution {
	if c, err := CleanPath(p); err == nil {
		p = c
	}
	res := &Resolution{Path: p, Reason: ReasonRoot, ApproverOwnersFile: r.ownersFile}
	if r.aliasesBroken != "" {
		res.Blocked = fmt.Sprintf("%s does not parse, so no alias can be expanded", r.aliasesBroken)
		res.BlockedBy = r.aliasesBroken
	}
	var appr, rev, req, lab, emer roleWalk
	var approverDir *ownersDir
	dir := path.Dir(p)
	if rootOnly {
		dir = "."
	}
	for {
		for _, od := range r.layersAt(dir) {
			if od == nil {
				continue
			}
			layer := Layer{File: od.file, NoParentOwners: od.options.NoParentOwners, Broken: od.broken, Source: od.source}
			if od.broken && !appr.stopped && res.Blocked == "" {
				res.Blocked = fmt.Sprintf("%s does not parse, and it governs this path", od.file)
				res.BlockedBy = od.file
				res.blockedBy = od
			}
			relPath := rel(dir, p)
			var layerApprovers []string
			for i := range od.entries {
				e := &od.entries[i]
				if !e.Matches(relPath) {
					continue
				}
				m := Match{Filter: e.Filter, Line: e.Line, Aliases: e.approverAliases}
				if appr.stopped {
					m.Uncounted = e.approvers
				} else {
					m.Approvers = e.approvers
					m.EmeritusApprovers = e.emeritus
					if len(e.approvers) > 0 && approverDir == nil && layerApprovers == nil {
						res.ApproverFilter = e.Filter
					}
					layerApprovers = append(layerApprovers, e.approvers...)
					if od.ci != nil && res.CIYAML == nil {
						res.CIYAML = &CIYAMLGrant{File: od.file, Line: e.Line, Reviewers: e.approvers}
					}
				}
				if !rev.stopped {
					m.Reviewers = e.reviewers
				}
				if !req.stopped {
					m.RequiredReviewers = e.required
				}
				if !lab.stopped {
					m.Labels = e.labels
				}
				appr.add(m.Approvers)
				emer.add(m.EmeritusApprovers)
				rev.add(m.Reviewers)
				req.add(m.RequiredReviewers)
				lab.add(m.Labels)
				layer.Matches = append(layer.Matches, m)
			}
			switch {
			case len(layerApprovers) == 0:
			case approverDir == nil:
				approverDir = od
				res.ApproverOwnersFile = od.file
				res.LeafApprovers = sortedUnique(layerApprovers)
			case approverDir.dir == dir:
				// A package's ci.yaml beside its OWNERS file is as close
				// to the path: its reviewers are asked first too.
				res.LeafApprovers = sortedUnique(append(res.LeafApprovers, layerApprovers...))
			}
			if len(layer.Matches) > 0 || layer.NoParentOwners || layer.Broken {
				res.Layers = append(res.Layers, layer)
			}
		}
		// no_parent_owners applies after every layer of the directory: a
		// package's ci.yaml stands beside the OWNERS file of its home.
		if od := r.dirs[dir]; od != nil && od.options.NoParentOwners {
			if len(appr.all) > 0 && !appr.stopped {
				appr.stopped = true
				res.Reason = ReasonNoParentOwners
				res.StoppedAt = od.file
			}
			rev.stopped = rev.stopped || len(rev.all) > 0
			req.stopped = req.stopped || len(req.all) > 0
			lab.stopped = lab.stopped || len(lab.all) > 0
		}
		next := path.Dir(dir)
		if dir == "." || next == dir || appr.stopped && rev.stopped && req.stopped && lab.stopped {
			break
		}
		dir = next
	}
	res.Approvers = appr.list()
	res.Reviewers = rev.list()
	res.RequiredReviewers = req.list()
	res.Labels = lab.list()
	res.EmeritusApprovers = emer.list()
	if approverDir != nil && approverDir.options.AutoApproveUnownedSubfolders && path.Dir(p) != approverDir.dir && !rootOnly {
		res.AutoApproved = true
	}
	res.approver = approverDir
	res.noOwners, res.ciSource = r.noOwners, r.ci != nil
	return res
}

// layersAt are the files that own directory dir directly: its OWNERS file,
// then the ci.yaml of the package whose home it is; either may be nil. An
// array, not a slice, so that the walk allocates nothing for it.
func (r *Repo) layersAt(dir string) [2]*ownersDir {
	return [2]*ownersDir{r.dirs[dir], r.ciLayerAt(dir)}
}

// approverGroup is what a resolution's path is required under: the
// directory of its approver OWNERS file, or the path of its approver
// ci.yaml, which owns the package's directories in every root at once.
func (r *Repo) approverGroup(res *Resolution) string {
	return groupOf(res.approver)
}

func groupOf(od *ownersDir) string {
	switch {
	case od == nil:
		return "."
	case od.source == SourceCIYAML:
		return od.file
	}
	return od.dir
}

// noParentOwners reports whether the OWNERS file of dir sets
// no_parent_owners.
func (r *Repo) noParentOwners(dir string) bool {
	od := r.dirs[dir]
	return od != nil && od.options.NoParentOwners
}
