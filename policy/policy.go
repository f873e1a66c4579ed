// Package policy reads a repository's policy file, .catalogbot.yaml, and
// decides whether a checked pull request may be merged. It also holds what
// the repository's layout means for everyone who reads it: which files
// judge pull requests (JudgesChanges), which file is the catalog.yaml
// reference list (Catalog.ReferenceListIn), the catalogs a tree holds and
// the image each is published to (Targets), and which targets the
// service's operator grants a repository (CheckTarget). How the publish
// section becomes the publish flow's options is policy/publishing's, so
// that reading a policy does not link the signing stack.
//
// Decide lists every reason against a merge as a Block: a Code from a
// closed set (Codes) that machines read, and a sentence for people. The
// GitHub App adds the codes of its own states (checking, queued,
// retrying, ...) from the same set, so that every open pull request can say
// why it waits.
//
// The policy file is read from the base commit of a pull request, never from
// its head: a pull request must not be able to relax the rules it is judged
// by. Callers therefore hand Load the base tree. What the conventions
// derive from the base's operators/ directory is kept by its git tree id,
// in the process and in Records (LoadFrom), and used only for that tree.
//
// Parsing is strict. A key the schema does not define, a value of the wrong
// type or a plain scalar that YAML 1.1 tools read as a boolean is an error
// with its file and line, because a misspelt key that is silently ignored
// leaves a rule off that the repository believes is on.
package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/owners"
)

// FileName is the policy file's path at the root of the repository.
const FileName = ".catalogbot.yaml"

// Merge methods, as the GitHub merge API names them.
const (
	MethodSquash = "squash"
	MethodMerge  = "merge"
	MethodRebase = "rebase"
)

// Publish bases besides an image reference.
const (
	// BaseOPM publishes on the opm image, for OLM v0's opm serve.
	BaseOPM = "opm"
	// BaseScratch publishes the catalog layer alone, for OLM v1 catalogd.
	BaseScratch = "scratch"
)

// DefaultHoldLabel is the label that holds a pull request, as in Prow.
const DefaultHoldLabel = "do-not-merge/hold"

// Policy is a repository's policy, defaults filled in.
type Policy struct {
	Catalog Catalog
	// CatalogSets are the catalogs list, when the repository holds
	// several catalogs; empty means one catalog, Catalog.Roots. Targets
	// resolves them against a tree.
	CatalogSets []CatalogSet `json:",omitempty"`
	// targets are the catalogs Resolved found.
	targets []Target
	// Owners are the approval options. Its ReferenceLists are left
	// nil: which file is the reference list depends on the trees
	// (Catalog.ReferenceListIn), and the review fills them in.
	Owners owners.Policy
	// Images is what image references must satisfy beyond existing.
	Images  images.Policy
	Merge   Merge
	Publish Publish
	// Limits bound the work one pull request check may cost.
	Limits Limits
	// Release says which releases a pull request may take away.
	Release Release
	// Propose are the bundle repositories whose releases catalogbot
	// propose adds to the catalog.
	Propose []Proposal `json:",omitempty"`
	// OLMv1 is how the OLM v1 readiness of the packages a change touches
	// is reported: OLMv1Report ("" too), OLMv1Warning or OLMv1Error.
	OLMv1 string `json:",omitempty"`

	// Conventions names a repository layout whose own files fill in
	// what the policy file leaves unsaid ("" for none): see
	// ConventionsOperatorPipelines.
	Conventions string `json:",omitempty"`
	// Origins say where each value that is not a default came from, by
	// dotted key ("publish.image"): "file:line", or OriginConventions.
	Origins map[string]string `json:"-"`
	// Notes are warnings about files the conventions read, which leave
	// the policy valid.
	Notes []checks.Finding `json:"-"`
	// Operators are the packages' ci.yaml files as the conventions read
	// them, for owners.Load (LoadOptions.Operators) to read no second
	// time; nil when the conventions did not read them. Shared, never
	// changed.
	Operators *owners.Operators `json:"-"`
}

// Catalog says where the catalog lives in the repository.
type Catalog struct {
	// Roots are the directories holding File-Based Catalogs, slash
	// separated and relative to the repository root. Each directory
	// directly below a root is one package.
	Roots []string
	// ReferenceList is the path of a catalog.yaml reference list, or ""
	// when the repository has none of its own choosing.
	ReferenceList string
	// Layout is LayoutPackageDirs (the default, also for "") or
	// LayoutFree.
	Layout string
	// Templates map catalog templates to the directories they render
	// to; a change must keep each pair in step.
	Templates []Template
}

// Template is one catalog template and the directory it renders to.
type Template struct {
	// Template is the template file's path, Output the catalog
	// directory its rendering is kept in; both relative to the
	// repository root.
	Template string
	Output   string
	// Type is the template's schema as the mapping names it
	// (olm.template.basic, olm.semver), "" when it does not.
	Type string `json:",omitempty"`
}

// Catalog layouts.
const (
	// LayoutPackageDirs keeps every blob of package P in <root>/P/: a
	// blob elsewhere is an error on the head of a change.
	LayoutPackageDirs = "packageDirs"
	// LayoutFree lets blobs sit anywhere under a root; a blob outside
	// its package's directory is a warning. Ownership still follows the
	// package.
	LayoutFree = "free"
	// LayoutDirectories makes each directory directly below a root the
	// home of one package, whatever the package's name, as operator
	// repositories name them by operator (catalogs/v4.22/konflux holds
	// konflux-operator). A directory of two packages, or a package in
	// two directories, is an error on the head of a change.
	LayoutDirectories = "directories"
)

// FreeLayout says whether the policy lets blobs sit outside their
// package's directory.
func (c Catalog) FreeLayout() bool { return c.Layout == LayoutFree }

// Merge says whether and how catalogbot merges pull requests that pass.
type Merge struct {
	Enabled bool
	// Method is MethodSquash, MethodMerge or MethodRebase.
	Method string
	// HoldLabel is the label that stops a merge, like a /hold comment.
	HoldLabel string
	// RequiredChecks are the check runs besides catalogbot's own that
	// must have succeeded on the checked head.
	RequiredChecks []RequiredCheck
}

// RequiredCheck is a check run that must have succeeded before a merge.
type RequiredCheck struct {
	// Name is the check run's name.
	Name string
	// App is the slug or the numeric id of the GitHub App that must
	// report the check, "" for any. Any App may name a check run as it
	// likes, so without it a required check proves only that something
	// able to write check runs said so.
	App string `json:",omitempty"`
}

// ReportedBy reports whether a run made by the App with this id and slug
// satisfies c's App. An App named by number matches the id only; one
// named by slug the slug only (GitHub's slugs are lower case, but a
// policy may not be).
func (c RequiredCheck) ReportedBy(id int64, slug string) bool {
	switch {
	case c.App == "":
		return true
	case isAppID(c.App):
		return c.App == strconv.FormatInt(id, 10)
	default:
		return slug != "" && strings.EqualFold(c.App, slug)
	}
}

// isAppID says whether s names an App by its numeric id.
func isAppID(s string) bool {
	n, err := strconv.ParseInt(s, 10, 64)
	return err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// HoldingLabel returns the label among labels that holds a pull request,
// or "" when none does. Labels match without regard to case, as GitHub's
// own label names do: "Do-Not-Merge/Hold" holds as "do-not-merge/hold"
// does.
func (m Merge) HoldingLabel(labels []string) string {
	if m.HoldLabel == "" {
		return ""
	}
	for _, l := range labels {
		if strings.EqualFold(l, m.HoldLabel) {
			return l
		}
	}
	return ""
}

// Publish says where the catalog image goes when the default branch moves.
type Publish struct {
	// Image is the reference the catalog image is pushed to, "" for none.
	Image string
	// Base is BaseOPM, BaseScratch or an image reference.
	Base string
	// OPMImage is the image BaseOPM stands for, "" for the publisher's
	// default (the opm image's latest tag). Pinned by digest, the base
	// no longer moves when opm releases.
	OPMImage string
	// Platforms are the platforms of the published image, such as
	// "linux/amd64"; empty means those of the base.
	Platforms []string
	// Sign is SignNone, SignKey or SignKeyless: whether the published
	// image is signed and attested, and how. The key and the Fulcio
	// instance are the publisher's configuration, never the
	// repository's.
	Sign string
}

// How the published image is signed (Publish.Sign).
const (
	// SignNone: not signed.
	SignNone = "none"
	// SignKey: with the publisher's cosign key (the App's
	// publish.signKey, the CLI's --sign-key).
	SignKey = "key"
	// SignKeyless: with a Fulcio certificate for the workflow's OIDC
	// identity (GitHub Actions).
	SignKeyless = "keyless"
)

// Default is the policy of a repository without a policy file: the catalog
// in catalog/, the author counts as an approver, approvals are bound to the
// commit they were given on, the image checks every catalog needs, and no
// merging or publishing.
func Default() *Policy {
	return &Policy{
		Catalog: Catalog{Roots: []string{"catalog"}},
		Images:  images.DefaultPolicy(),
		Merge:   Merge{Method: MethodSquash, HoldLabel: DefaultHoldLabel},
		Publish: Publish{Base: BaseOPM, Sign: SignNone},
		Limits:  defaultLimits(),
		Release: Release{Prunable: slices.Clone(defaultPrunable), Continuity: ContinuityWarning},
	}
}

// Load reads FileName from fsys, which must be the base commit's tree. An
// absent file gives Default with no findings. The error is for I/O only; a
// policy with findings is invalid, and callers should not check against it.
func Load(fsys fs.FS) (*Policy, []checks.Finding, error) {
	return LoadFrom(fsys, LoadOptions{})
}

// LoadOptions adjust Load; the zero value is Load's.
type LoadOptions struct {
	// Records keeps what the conventions derive from the tree (the
	// packages' ci.yaml files under operator-pipelines) across processes;
	// nil keeps it in this process only.
	Records Records
}

// LoadFrom is Load with options.
func LoadFrom(fsys fs.FS, o LoadOptions) (*Policy, []checks.Finding, error) {
	data, err := fs.ReadFile(fsys, FileName)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", FileName, err)
	}
	p, findings := loadWith(fsys, FileName, data, o)
	return p, findings, nil
}

// LoadWith is Load with the policy file's content given, and named name in
// findings, in place of the tree's own: to try a policy on a repository
// before committing it. The conventions it names still read fsys.
func LoadWith(fsys fs.FS, name string, data []byte) (*Policy, []checks.Finding) {
	return loadWith(fsys, name, data, LoadOptions{})
}

func loadWith(fsys fs.FS, name string, data []byte, o LoadOptions) (*Policy, []checks.Finding) {
	p, findings := Parse(name, data)
	if len(findings) == 0 && p.Conventions == ConventionsOperatorPipelines {
		findings = p.applyOperatorPipelines(fsys, o)
	}
	return p, findings
}

// Limits bound what one pull request check may read and wait for. The
// defaults are generous for real catalogs and small enough that a hostile
// pull request cannot tie the service up; a repository that needs more
// raises them in its policy.
type Limits struct {
	// Images is the most image references one check verifies.
	Images int
	// CatalogBytes is the most catalog content one check reads.
	CatalogBytes int64
	// FileBytes is the largest single file a check reads; a larger one
	// is a finding. GitHub itself refuses files over 100 MB.
	FileBytes int64
	// ReferenceTimeout bounds the time spent on one image reference,
	// retries included; CheckTimeout bounds a whole pull request check.
	ReferenceTimeout time.Duration
	CheckTimeout     time.Duration
}

// Default limits.
const (
	DefaultMaxImages        = 2000
	DefaultMaxCatalogBytes  = 512 << 20
	DefaultMaxFileBytes     = 100_000_000
	DefaultReferenceTimeout = 30 * time.Second
	DefaultCheckTimeout     = 5 * time.Minute
)

// defaultLimits returns the limits of a policy that sets none.
func defaultLimits() Limits {
	return Limits{
		Images:           DefaultMaxImages,
		CatalogBytes:     DefaultMaxCatalogBytes,
		FileBytes:        DefaultMaxFileBytes,
		ReferenceTimeout: DefaultReferenceTimeout,
		CheckTimeout:     DefaultCheckTimeout,
	}
}

// Release says which channels are pre-releases that a pull request may
// prune. Everything else that the base has released stays, unless the
// root approvers approve. It also says how much a bundle stranded between
// two consecutive catalogs of a versioned series matters.
type Release struct {
	// Prunable are path.Match patterns of channel names.
	Prunable []string
	// Continuity is how a bundle stranded between consecutive catalogs
	// of a versioned series is reported: ContinuityWarning,
	// ContinuityError or ContinuityIgnore.
	Continuity string
}

// The values of olmv1. Under report, the readiness is a section of the
// summary and never fails; under warning, the olmv1 check reports its
// findings as warnings; under error, the findings a change introduces fail
// it.
const (
	OLMv1Report  = "report"
	OLMv1Warning = "warning"
	OLMv1Error   = "error"
)

// The values of release.continuity.
const (
	ContinuityWarning = "warning"
	ContinuityError   = "error"
	ContinuityIgnore  = "ignore"
)

// defaultPrunable are the channel names that are pre-releases by
// convention.
var defaultPrunable = []string{"candidate*", "dev-preview*", "pre-ga*"}

// PrunableChannel says whether channel matches a Prunable pattern.
func (r Release) PrunableChannel(channel string) bool {
	for _, p := range r.Prunable {
		if ok, _ := path.Match(p, channel); ok {
			return true
		}
	}
	return false
}
