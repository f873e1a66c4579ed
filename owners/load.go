package owners

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
)

// Default file names, as in Prow.
const (
	DefaultOwnersFile  = "OWNERS"
	DefaultAliasesFile = "OWNERS_ALIASES"
)

// preconfiguredDenylist are the directories Prow never reads OWNERS from
// unless told to: git's own directory, build output and vendored code.
// They are matched, unanchored, against slash-separated directory paths.
var preconfiguredDenylist = []*regexp.Regexp{
	regexp.MustCompile(`(^|/)\.git$`),
	regexp.MustCompile(`(^|/)_output$`),
	regexp.MustCompile(`(^|/)vendor/.*/.*$`),
}

// LoadOptions adjust discovery for repositories configured differently from
// Prow's defaults. The zero value is Prow's default configuration.
type LoadOptions struct {
	// OwnersFile and AliasesFile rename the files (Prow's
	// owners.filenames); empty means OWNERS and OWNERS_ALIASES.
	OwnersFile, AliasesFile string
	// DirDenylist are regular expressions (Go syntax, unanchored) matched
	// against slash-separated directory paths; OWNERS files in matching
	// directories and below them are not read.
	DirDenylist []string
	// IgnorePreconfiguredDefaults reads OWNERS files in .git, _output and
	// vendor/*/* too.
	IgnorePreconfiguredDefaults bool
	// Sources are where approvers come from, as the policy's
	// owners.sources says (Policy.Sources): SourceOwners, SourceCIYAML or
	// both. Nil means OWNERS files alone. Without SourceOwners no OWNERS
	// or OWNERS_ALIASES file is read.
	Sources []string
	// CatalogRoots are the policy's catalog roots. With SourceCIYAML, the
	// reviewers of operators/<package>/ci.yaml own <root>/<package>/ under
	// each of them, besides operators/<package>/.
	CatalogRoots []string
	// Maintainers approve every path, as a root OWNERS file's approvers
	// do: operator-pipelines' config.yaml maintainers, in a repository
	// whose packages' ci.yaml files name every other approver.
	Maintainers *Maintainers
	// Operators, when set, are the packages' ci.yaml files as read
	// already (the policy's conventions read them): Load takes them as
	// they are when their Tree is the tree id of fsys's operators
	// directory, and reads the files itself otherwise.
	Operators *Operators
}

// Maintainers are logins that approve every path of a repository, read
// from a file that is not an OWNERS file.
type Maintainers struct {
	// File and Line say where the list is, for explanations.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Logins are the maintainers as written.
	Logins []string `json:"logins"`
}

// Repo is the OWNERS data of one tree, ready to answer who owns a path.
type Repo struct {
	ownersFile, aliasesFile string
	dirs                    map[string]*ownersDir // by directory, "." for the root
	// ci are the packages' ci.yaml files by package name when ci.yaml is
	// a source, nil when it is not; catalogRoots are where the packages'
	// catalog homes are.
	ci           map[string]*ownersDir
	catalogRoots []string
	// noOwners is set when OWNERS files are not a source.
	noOwners bool
	// maintainers is set when LoadOptions named maintainers, who then
	// also decide packages new to the repository.
	maintainers bool
	aliases     Aliases
	// aliasesBroken names the OWNERS_ALIASES file when it does not parse,
	// which leaves every alias, and so every path, undecidable.
	aliasesBroken string
	findings      []checks.Finding
}

// ownersDir is one OWNERS file, with its aliases expanded, or a package's
// ci.yaml read as the OWNERS file of the package's directories: its
// reviewers are the approvers of one entry without a filter.
type ownersDir struct {
	dir     string // "." for the root
	file    string // the OWNERS file's path
	options Options
	entries []entry
	broken  bool // the file does not parse: it governs, but nobody knows how
	// source is SourceCIYAML for a ci.yaml, whose parse is ci; "" for an
	// OWNERS file.
	source string
	ci     *CIYAML
}

type entry struct {
	Entry
	// Expanded, sorted and de-duplicated logins; raw holds the entry as
	// written, for explanations.
	approvers, reviewers, required, emeritus, labels []string
	// approverAliases are the alias names the approvers were written as.
	approverAliases []string
}

// Load reads every OWNERS file in fsys and the OWNERS_ALIASES file at its
// root, and with SourceCIYAML among opts.Sources every
// operators/<package>/ci.yaml. fsys must be the trusted tree: the base
// commit of a change, never its head. Problems with the files are findings
// (Repo.Findings), not errors: a file that does not parse blocks approval
// of the paths it governs. Load fails only when the tree itself cannot be
// read, since then nothing about it can be decided.
func Load(fsys fs.FS, opts LoadOptions) (*Repo, error) {
	r := &Repo{
		ownersFile:  orDefault(opts.OwnersFile, DefaultOwnersFile),
		aliasesFile: orDefault(opts.AliasesFile, DefaultAliasesFile),
		dirs:        make(map[string]*ownersDir),
	}
	readOwners := opts.Sources == nil || slices.Contains(opts.Sources, SourceOwners)
	r.noOwners = !readOwners
	var deny []*regexp.Regexp
	if !opts.IgnorePreconfiguredDefaults {
		deny = append(deny, preconfiguredDenylist...)
	}
	for _, s := range opts.DirDenylist {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("owners directory denylist: %w", err)
		}
		deny = append(deny, re)
	}

	if slices.Contains(opts.Sources, SourceCIYAML) {
		r.ci = map[string]*ownersDir{}
		for _, root := range opts.CatalogRoots {
			r.catalogRoots = append(r.catalogRoots, path.Clean(root))
		}
	}
	if !readOwners {
		if err := r.loadCIYAML(fsys, opts.Operators); err != nil {
			return nil, err
		}
		r.addMaintainers(opts.Maintainers)
		return r, nil
	}
	if err := r.loadAliases(fsys); err != nil {
		return nil, err
	}
	var files []*File
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && slices.ContainsFunc(deny, func(re *regexp.Regexp) bool { return re.MatchString(p) }) {
				return fs.SkipDir
			}
			return nil
		}
		switch d.Name() {
		case r.aliasesFile:
			if p != r.aliasesFile {
				r.findings = append(r.findings, finding(RuleAliasesPlace, checks.SeverityWarning, p, 0,
					fmt.Sprintf("%s is read only at the repository root; this one is ignored", r.aliasesFile)))
			}
		case r.ownersFile:
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			f, findings := parseOwners(p, data)
			r.findings = append(r.findings, findings...)
			dir := path.Dir(p)
			if f == nil {
				r.dirs[dir] = &ownersDir{dir: dir, file: p, broken: true}
				return nil
			}
			files = append(files, f)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read OWNERS files: %w", err)
	}
	for _, f := range files {
		r.dirs[path.Dir(f.Path)] = r.expand(f)
	}
	if r.ci != nil {
		if err := r.loadCIYAML(fsys, opts.Operators); err != nil {
			return nil, err
		}
	}
	r.addMaintainers(opts.Maintainers)
	return r, nil
}

// addMaintainers makes m approvers of the root, beside a root OWNERS
// file's own.
func (r *Repo) addMaintainers(m *Maintainers) {
	if m == nil || len(m.Logins) == 0 {
		return
	}
	logins := make([]string, 0, len(m.Logins))
	for _, l := range m.Logins {
		if n := NormLogin(l); n != "" {
			logins = append(logins, n)
		}
	}
	r.maintainers = true
	e := entry{Entry: Entry{Line: m.Line}, approvers: sortedUnique(logins)}
	if od := r.dirs["."]; od != nil && !od.broken {
		od.entries = append(od.entries, e)
		return
	}
	if r.dirs["."] == nil {
		r.dirs["."] = &ownersDir{dir: ".", file: m.File, source: SourceMaintainers, entries: []entry{e}}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (r *Repo) loadAliases(fsys fs.FS) error {
	data, err := fs.ReadFile(fsys, r.aliasesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", r.aliasesFile, err)
	}
	a, findings := parseAliases(r.aliasesFile, data)
	r.findings = append(r.findings, findings...)
	if a == nil {
		r.aliasesBroken = r.aliasesFile
	}
	r.aliases = a
	return nil
}

// expand replaces alias names by their members, one level deep, and warns
// about names that can never approve anyone's change.
func (r *Repo) expand(f *File) *ownersDir {
	od := &ownersDir{dir: path.Dir(f.Path), file: f.Path, options: f.Options}
	for _, e := range f.Entries {
		x := entry{Entry: e}
		x.approvers = r.expandLogins(f.Path, e, keyApprovers, e.Approvers)
		for _, n := range e.Approvers {
			if _, ok := r.aliases[n]; ok {
				x.approverAliases = append(x.approverAliases, n)
			}
		}
		x.reviewers = r.expandLogins(f.Path, e, keyReviewers, e.Reviewers)
		x.required = r.expandLogins(f.Path, e, keyRequiredReviewers, e.RequiredReviewers)
		x.emeritus = r.expandLogins(f.Path, e, keyEmeritusApprovers, e.EmeritusApprovers)
		x.labels = sortedUnique(e.Labels)
		od.entries = append(od.entries, x)
	}
	return od
}

func (r *Repo) expandLogins(file string, e Entry, key string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	out := make([]string, 0, len(names))
	where := key
	if e.Filter != "" {
		where = fmt.Sprintf("%s of filter %q", key, e.Filter)
	}
	for _, n := range names {
		if members, ok := r.aliases[n]; ok {
			out = append(out, members...)
			continue
		}
		if msg := r.loginProblem(n); msg != "" {
			r.findings = append(r.findings, finding(RuleLogin, checks.SeverityWarning, file, e.LineOf(key, n),
				fmt.Sprintf("%s: %q %s", where, n, msg)))
		}
		out = append(out, n)
	}
	return sortedUnique(out)
}

// loginProblem says why a name that is not an alias will never match a
// GitHub user, or "" when it may well be one.
func (r *Repo) loginProblem(n string) string {
	switch {
	case r.aliasesBroken != "":
		return "" // already reported: every name is in doubt
	case strings.Contains(n, "/"):
		return "names a GitHub team; teams are not supported (their membership changes are not auditable), so it matches nobody. List the people or define an alias in " + r.aliasesFile
	case !validLogin(n):
		return "is not a valid GitHub login, so it matches nobody"
	case aliasLike(n):
		return fmt.Sprintf("looks like an alias, but %s does not define it; it is read as a login, which probably matches nobody", r.aliasesFile)
	}
	return ""
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// Findings returns the problems found in the OWNERS and OWNERS_ALIASES
// files, in the order the files were read. Error findings mean a file does
// not parse: the paths it governs cannot be approved until it is fixed.
func (r *Repo) Findings() []checks.Finding {
	return slices.Clone(r.findings)
}

// Files returns the paths of the OWNERS and ci.yaml files read, sorted.
func (r *Repo) Files() []string {
	out := make([]string, 0, len(r.dirs)+len(r.ci))
	for _, od := range r.dirs {
		out = append(out, od.file)
	}
	for _, od := range r.ci {
		out = append(out, od.file)
	}
	slices.Sort(out)
	return out
}

// Aliases returns the aliases defined at the root, or nil when the file
// does not exist or does not parse.
func (r *Repo) Aliases() Aliases {
	return r.aliases
}
