package review

import (
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// The account of a change opens every rendering of its outcome: first
// the catalogs it deletes whole, then its files as the pull request's
// diff lists them (what the author sees), then what is derived from them
// (packages, blobs, the paths that need approval), labelled as derived,
// since those counts differ from the files' and a reader comparing them
// with the diff must be told why.

// deletedCatalogs are the catalogs the change removes whole, with the
// number of files it removes from them.
func (o *Outcome) deletedCatalogs() (names []string, files int) {
	if o.Owners == nil {
		return nil, 0
	}
	for _, c := range o.Owners.Catalogs {
		if !c.Added {
			names = append(names, c.Name)
			files += len(c.Files)
		}
	}
	return names, files
}

// quoter shows a name from the repository: escaped as Markdown text, or
// plain for the text output.
type quoter func(string) string

func plain(s string) string { return s }

// deletesLine says which catalogs the change deletes whole, "" when
// none; md makes it Markdown, prominent.
func (o *Outcome) deletesLine(q quoter, md bool) string {
	names, files := o.deletedCatalogs()
	if len(names) == 0 {
		return ""
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = q(n)
	}
	noun, image, them := "catalog", "its published image goes", "it"
	if len(names) > 1 {
		noun, image, them = "catalogs", "their published images go", "them"
	}
	head := fmt.Sprintf("This change deletes the %s %s", noun, strings.Join(quoted, ", "))
	if md {
		head = "⚠️ **" + head + "**"
	}
	line := head + ": "
	if files > 0 {
		line += fmt.Sprintf("it removes %s of %s, ", checks.Count(files, "file", "files"), them)
	}
	return line + fmt.Sprintf("and %s with %s. Only the root approvers may approve it.", image, them)
}

// rootsLine says which catalog roots the change deletes whole, besides
// those of the catalogs it deletes; "" when none.
func (o *Outcome) rootsLine(q quoter, md bool) string {
	var gone []string
	for _, r := range o.RemovedRoots {
		if o.Owners != nil && slices.ContainsFunc(o.Owners.Catalogs, func(c owners.CatalogChange) bool {
			return !c.Added && slices.Contains(c.Roots, r)
		}) {
			continue
		}
		gone = append(gone, q(r))
	}
	if len(gone) == 0 {
		return ""
	}
	noun, them := "catalog root", "it"
	if len(gone) > 1 {
		noun, them = "catalog roots", "them"
	}
	head := fmt.Sprintf("This change deletes the %s %s", noun, strings.Join(gone, ", "))
	if md {
		head = "⚠️ **" + head + "**"
	}
	return fmt.Sprintf("%s: every file under %s is removed, and the catalog is published without %s.", head, them, them)
}

// filesLine counts the change's files by status, as the pull request's
// diff lists them; "" when the outcome has no files.
func (o *Outcome) filesLine(md bool) string {
	if len(o.Files) == 0 {
		return ""
	}
	n := map[string]int{}
	order := []string{change.Added, change.Modified, change.Removed, change.Renamed}
	for _, f := range o.Files {
		if !slices.Contains(order, f.Status) {
			order = append(order, f.Status)
		}
		n[f.Status]++
	}
	var parts []string
	for _, s := range order {
		if n[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[s], s))
		}
	}
	label := "Changed files, as the pull request's diff lists them"
	if md {
		label = "**" + label + "**"
	}
	total := ""
	if len(parts) > 1 {
		total = fmt.Sprintf(" (%s)", checks.Plural(len(o.Files), "file"))
	}
	return fmt.Sprintf("%s: %s%s.", label, strings.Join(parts, ", "), total)
}

// derivedLine counts what is derived from the files: the packages they
// touch and those packages' blobs, and the paths that need approval; ""
// when the OWNERS state is unknown.
func (o *Outcome) derivedLine(q quoter, md bool) string {
	st := o.Owners
	if st == nil || len(o.Files) == 0 {
		return ""
	}
	var parts []string
	if len(st.Packages) > 0 {
		// A package in several catalogs has a home in each: it is
		// counted once, with its homes.
		var names []string
		added, removed := 0, 0
		for _, p := range st.Packages {
			added += p.Added
			removed += p.Removed
			if !slices.Contains(names, p.Name) {
				names = append(names, p.Name)
			}
		}
		shown := make([]string, 0, min(len(names), 10))
		for _, n := range names[:min(len(names), 10)] {
			shown = append(shown, q(n))
		}
		more := ""
		if len(names) > 10 {
			more = fmt.Sprintf(" and %d more", len(names)-10)
		}
		part := fmt.Sprintf("%s (%s%s)", checks.Plural(len(names), "package"), strings.Join(shown, ", "), more)
		if len(st.Packages) > len(names) {
			part += fmt.Sprintf(" in %d homes", len(st.Packages))
		}
		parts = append(parts, part)
		var blobs []string
		if added > 0 {
			blobs = append(blobs, fmt.Sprintf("%d added", added))
		}
		if removed > 0 {
			blobs = append(blobs, fmt.Sprintf("%d removed", removed))
		}
		if len(blobs) > 0 {
			part := "their blobs: " + strings.Join(blobs, ", ")
			if added > 0 && removed > 0 {
				part += " (a changed blob counts as one of each)"
			}
			parts = append(parts, part)
		}
	}
	if len(st.Files) > 0 {
		part := checks.Plural(len(st.Files), "path") + " to approve"
		if len(st.Files) != len(o.Files) {
			part += " (the files, both sides of a rename, reference list entries, and the homes of the packages and catalogs touched)"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return ""
	}
	label := "Derived from them"
	if md {
		label = "**" + label + "**"
	}
	return label + ": " + strings.Join(parts, "; ") + "."
}

// account is the opening of the Markdown renderings: the catalogs the
// change deletes, its files and what is derived from them, each its own
// paragraph; "" when there is nothing to say.
func (o *Outcome) account() string {
	return strings.Join(o.accountLines(markdownName, true), "\n\n")
}

// accountText is account as plain text, one line each.
func (o *Outcome) accountText() string {
	var b strings.Builder
	for _, l := range o.accountLines(plain, false) {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func (o *Outcome) accountLines(q quoter, md bool) []string {
	var out []string
	for _, l := range []string{o.deletesLine(q, md), o.rootsLine(q, md), o.filesLine(md), o.derivedLine(q, md)} {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func markdownName(s string) string { return checks.MarkdownText(s) }
