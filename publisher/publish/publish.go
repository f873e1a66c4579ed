// Package publish is the one publish flow of catalogbot: the App on a push
// to the default branch, `catalogbot publish` and the scheduled
// `catalogbot rebuild` all go through Publish, so that the same commit gives
// the same image, and the same annotations, whichever of them publishes it.
//
// A source goes in: a catalog directory, a catalog.yaml reference list, or
// a repository tree with the reference list or catalog roots its policy
// names. The flow assembles the catalog when the source is a reference
// list, validates it with the same opm-parity validator as every check,
// builds the image, reads what the target holds and pushes only when the
// digest changed, saying what moved since the last publication (drift).
//
// A scheduled run exists because a catalog.yaml names its references by
// tag: when a referenced catalog image is re-pushed under the same tag, or
// the base image gets a security fix, nothing in the repository changes and
// no push event fires. The reproducible build makes a run with nothing
// moved a no-op ("unchanged").
//
// Every publish has a deadline (Options.Deadline, DefaultDeadline), so that
// a registry that accepts connections and never answers ends it rather than
// holding a schedule or the App's worker for the sum of every request's
// timeouts.
//
// The package knows nothing of policies, OWNERS or GitHub: a caller
// translates its configuration into a Source and Options.
package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/catalogfs"
	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/sign"

	"github.com/catalogbot/catalogbot/publisher/tmpdir"
)

// Source is what is published. Exactly one of Dir, List and Tree is set.
type Source struct {
	// Dir is a catalog directory, published as it is.
	Dir string
	// List is a parsed catalog.yaml reference list, assembled first.
	List *catalogyaml.File
	// Tree is a repository tree. When ReferenceList is set, that
	// catalog.yaml in Tree is read and assembled; otherwise the
	// directories Roots names (those that exist) are gathered into one
	// catalog, as the repository's checks see it.
	Tree          fs.FS
	ReferenceList string
	Roots         []string
}

func (s Source) check() error {
	n := 0
	for _, set := range []bool{s.Dir != "", s.List != nil, s.Tree != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return errors.New("publish: a source is a catalog directory, a reference list or a repository tree, exactly one of them")
	case s.Tree != nil && s.ReferenceList == "" && len(s.Roots) == 0:
		return errors.New("publish: a repository tree needs its reference list or its catalog roots")
	}
	return nil
}

// Options configure a publish.
type Options struct {
	// Image is the target: a registry reference or oci:DIR[:TAG].
	Image string
	// Catalog is the catalog's name in its repository, recorded in the
	// attestations with Image; "" for a repository's one catalog.
	Catalog string
	// Build configures the build (Base, OPMImage, Platforms, Epoch and
	// whatever else build.Options offers) and is passed to build.Build
	// whole. Publish sets its Insecure and Remote from the fields below,
	// and for an assembled catalog its References to the digests the
	// references resolved to; for a catalog directory the References
	// given are recorded.
	Build build.Options
	// CacheDir keeps rendered references across runs (assemble's cache).
	// Without one a temporary cache is used for the run: the cache is
	// what resolves every reference to a digest, which drift needs.
	CacheDir string
	// InsecureRegistries are reached over plain HTTP.
	InsecureRegistries []string
	// Keychain and Transport reach registries; nil means
	// registry.DefaultKeychain and go-containerregistry's transport.
	Keychain  authn.Keychain
	Transport http.RoundTripper
	// UserAgent is sent to registries.
	UserAgent string
	// Validate validates the catalog; nil means fbc.Validate.
	Validate func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error)
	// Progress is assemble's progress callback.
	Progress func(assemble.Event)
	// Signer, when set, signs the image pushed and attests it: the
	// approval attestation (Approval, with the digests filled in) and
	// SLSA provenance of the build (from Source and Builder). A target
	// that already holds the digest signed by Signer gets nothing new.
	// Signing needs a registry target.
	Signer *sign.Signer
	// Approval is the approval attestation's predicate; nil records
	// only what the flow knows, without approvals (ApprovalsRecorded
	// false), and says so.
	Approval *sign.Approval
	// Source is the commit published, recorded in the provenance.
	Source sign.Source
	// Builder identifies the publisher in the provenance.
	Builder sign.Builder
	// Now is the clock of the provenance's times; nil means time.Now.
	Now func() time.Time
	// BuildOnly stops after the build: the target is neither read nor
	// written, and the result is Built with the digest. Rebuilding a
	// published catalog to compare digests uses it.
	BuildOnly bool
	// OmitCatalogdAnnotations builds the image without the annotations
	// that record catalogd's view (build.AnnCatalogdSize and
	// AnnCatalogdDigest), as images were built before they existed: a
	// rebuild of such an image reproduces its digest. The view is still
	// computed and reported.
	OmitCatalogdAnnotations bool
	// Deadline bounds the whole publish, assembly, build and push
	// included (0: DefaultDeadline). Each request has its own timeouts
	// too; the deadline is what ends a run whose registry keeps
	// accepting connections and never answers, however many requests
	// it would make.
	Deadline time.Duration
}

// DefaultDeadline is the deadline of a publish that sets none: enough to
// assemble and push a catalog of a few hundred references, and short
// enough that a schedule's next run is not held up by a dead registry.
const DefaultDeadline = 15 * time.Minute

// DeadlineError is a publish that ran out of its deadline. Nothing was
// left half done at the target: the tag moves last, after the image is
// whole, and a run cut short before that leaves the tag as it was.
type DeadlineError struct {
	Deadline time.Duration
	// Err is what the publish was doing when the deadline passed.
	Err error
}

func (e *DeadlineError) Error() string {
	return fmt.Sprintf("publish did not finish within its deadline of %s: %v", e.Deadline, e.Err)
}

func (e *DeadlineError) Unwrap() error { return e.Err }

// Signature statuses (Result.Signature).
const (
	// Signed: a signature and the attestations were added.
	Signed = "signed"
	// AlreadySigned: the digest carried a signature by the signer; nothing
	// was added.
	AlreadySigned = "already signed"
)

// Status is what a publish did.
type Status string

const (
	// Published: the target had another digest, or none, and now has
	// the built one.
	Published Status = "published"
	// Unchanged: the target already had the built digest; nothing was
	// written.
	Unchanged Status = "unchanged"
	// Built: Options.BuildOnly; the image was built, not pushed.
	Built Status = "built"
	// Invalid: the reference list or the catalog does not validate;
	// nothing was built or written. Result.ListFindings or
	// Result.Findings holds why.
	Invalid Status = "invalid"
)

// Drift kinds.
const (
	DriftReference = "reference" // a reference's tag names another digest
	DriftAdded     = "added"     // a reference the last image did not record
	DriftRemoved   = "removed"   // a recorded reference no longer listed
	DriftBase      = "base"      // the base image resolves to another digest
)

// Drift is one input that moved since the last published image.
type Drift struct {
	Kind string
	// Name is the reference (its image as written) or the base's name.
	Name string
	// Was and Now are digests; empty when absent on that side.
	Was, Now string
}

func (d Drift) String() string {
	switch d.Kind {
	case DriftAdded:
		return fmt.Sprintf("reference %s added at %s", d.Name, d.Now)
	case DriftRemoved:
		return fmt.Sprintf("reference %s removed (was %s)", d.Name, d.Was)
	case DriftBase:
		return fmt.Sprintf("base %s moved: %s -> %s", d.Name, d.Was, d.Now)
	}
	return fmt.Sprintf("reference %s moved: %s -> %s", d.Name, d.Was, d.Now)
}

// Result is the outcome of a publish.
type Result struct {
	Status Status
	// Digest is the built image's digest (empty when Invalid).
	Digest string
	// Previous is the digest the target had before, empty if none.
	Previous string
	// References maps each reference to the digest it resolved to, or
	// holds Options.Build.References for a catalog directory.
	References map[string]string
	// Drift lists what moved against the previous image's annotations;
	// nil when there was no previous image or it carried none.
	Drift []Drift
	// ListFindings are the reference list's problems when a tree's
	// catalog.yaml does not parse (Status Invalid).
	ListFindings []checks.Finding
	// Findings is the validation result when the catalog is Invalid.
	Findings *fbc.Result
	// BaseName and BaseDigest are the base the image was built on, as
	// named and as resolved; both empty for scratch.
	BaseName   string
	BaseDigest string
	// Build is the build's own result, whole.
	Build *build.Result
	// Signature is Signed or AlreadySigned when Options.Signer is set,
	// else empty.
	Signature string
	// Catalogd is the catalog as catalogd will serve it at /api/v1/all
	// (fbc.Served), set once the catalog validated.
	Catalogd *fbc.ServedView
	// PreviousCatalogdSize is the size the previous image recorded for
	// catalogd's view, or -1 when it recorded none (no previous image,
	// or one built without the annotation).
	PreviousCatalogdSize int64
}

// Growth thresholds of catalogd's view that CatalogdWarning reports: every
// client of the catalog (operator-controller, the console) downloads the
// whole view, and large ones have made clients time out (operator-controller
// raised its timeout from 10 s to 5 min for them).
const (
	// GrowthRatio is the relative growth over the previous image that is
	// worth a warning ...
	GrowthRatio = 1.25
	// GrowthMinBytes is the least absolute growth worth one, so that a
	// small catalog doubling is not.
	GrowthMinBytes = 1 << 20
)

// CatalogdWarning says, when catalogd's view grew by more than GrowthRatio
// and GrowthMinBytes over the previous image's, by how much; else "".
func (r *Result) CatalogdWarning() string {
	if r.Catalogd == nil || r.PreviousCatalogdSize <= 0 {
		return ""
	}
	was, now := r.PreviousCatalogdSize, r.Catalogd.Size
	if now-was < GrowthMinBytes || float64(now) < float64(was)*GrowthRatio {
		return ""
	}
	return fmt.Sprintf("catalogd's view grew from %s to %s (+%.0f%%): every client of the catalog downloads it whole at /api/v1/all, and large catalogs have made clients time out",
		ByteSize(was), ByteSize(now), (float64(now)/float64(was)-1)*100)
}

// ByteSize formats n bytes in binary units, as the check run shows sizes.
func ByteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Base is the resolved base as name@digest, or "scratch" for none. A base
// named by digest is that digest already.
func (r *Result) Base() string {
	switch {
	case r.BaseName == "":
		return build.BaseScratch
	case strings.Contains(r.BaseName, "@"):
		return r.BaseName
	}
	return r.BaseName + "@" + r.BaseDigest
}

// Publish publishes src to o.Image: assembles it when it is a reference
// list, validates it, builds the catalog image and pushes it unless the
// target holds it already. An invalid catalog is reported in the result,
// with a nil error, and nothing is pushed; so is a tree's reference list
// that does not parse. A List must have been parsed without findings.
func Publish(ctx context.Context, src Source, o Options) (*Result, error) {
	if o.Deadline <= 0 {
		o.Deadline = DefaultDeadline
	}
	dctx, cancel := context.WithTimeout(ctx, o.Deadline)
	defer cancel()
	res, err := publish(dctx, src, o)
	if err != nil && errors.Is(dctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, &DeadlineError{Deadline: o.Deadline, Err: err}
	}
	return res, err
}

func publish(ctx context.Context, src Source, o Options) (*Result, error) {
	if err := src.check(); err != nil {
		return nil, err
	}
	if o.Image == "" && !o.BuildOnly {
		return nil, errors.New("publish: no target image")
	}
	if o.Validate == nil {
		o.Validate = fbc.Validate
	}
	if o.Keychain == nil {
		o.Keychain = registry.DefaultKeychain()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	started := o.Now()
	if o.Signer != nil && !o.BuildOnly && strings.HasPrefix(o.Image, build.LayoutPrefix) {
		return nil, fmt.Errorf("publish: signing needs a registry target; %s is an OCI layout", o.Image)
	}
	tmp, err := tmpdir.Make("", tmpdir.Prefix+"publish-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	res := &Result{}
	dir, list := src.Dir, src.List
	if src.Tree != nil {
		if src.ReferenceList != "" {
			data, err := fs.ReadFile(src.Tree, src.ReferenceList)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", src.ReferenceList, err)
			}
			f, findings := catalogyaml.Parse(src.ReferenceList, data)
			if len(findings) > 0 {
				res.Status, res.ListFindings = Invalid, findings
				return res, nil
			}
			list = f
		} else {
			dir = filepath.Join(tmp, "catalog")
			if err := gatherRoots(src.Tree, src.Roots, dir); err != nil {
				return nil, err
			}
		}
	}
	refs := o.Build.References
	if list != nil {
		if dir, refs, err = assembleList(ctx, list, tmp, o); err != nil {
			return nil, err
		}
	}
	res.References = refs

	// For an assembled catalog the root is the assembled directory, so
	// that the image's /configs holds <reference>/index.yaml.
	vres, err := o.Validate(ctx, os.DirFS(dir), fbc.Options{})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if !vres.Valid() {
		res.Status, res.Findings = Invalid, vres
		return res, nil
	}
	// What catalogd will serve is a function of the files validated,
	// computed once here for the annotations, the attestation and the
	// report.
	view, err := fbc.Served(ctx, os.DirFS(dir), io.Discard)
	if err != nil {
		return nil, fmt.Errorf("catalogd's view of the catalog: %w", err)
	}
	res.Catalogd, res.PreviousCatalogdSize = &view, -1

	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(o.Keychain)}
	if o.Transport != nil {
		ropts = append(ropts, remote.WithTransport(o.Transport))
	}
	if o.UserAgent != "" {
		ropts = append(ropts, remote.WithUserAgent(o.UserAgent))
	}
	bopts := o.Build
	bopts.References, bopts.Insecure, bopts.Remote = refs, o.InsecureRegistries, ropts
	if !o.OmitCatalogdAnnotations {
		bopts.Catalogd = res.Catalogd
	}
	img, err := build.Build(ctx, dir, bopts)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	res.Build = img
	res.Digest = img.Digest.String()
	res.BaseName, res.BaseDigest = img.BaseName, img.BaseDigest
	if o.BuildOnly {
		res.Status = Built
		return res, nil
	}

	// The previous image is read before the push replaces it.
	prev, err := readPublished(ctx, o.Image, o.InsecureRegistries, ropts)
	if err != nil {
		return nil, fmt.Errorf("read the published image %s: %w", o.Image, err)
	}
	if prev != nil {
		res.Previous = prev.Digest
		if n, err := strconv.ParseInt(prev.Annotations[build.AnnCatalogdSize], 10, 64); err == nil && n >= 0 {
			res.PreviousCatalogdSize = n
		}
		anns := prev.Annotations
		if len(refs) == 0 {
			// A catalog published without references says nothing
			// about the ones the last image recorded.
			anns = maps.Clone(anns)
			delete(anns, build.AnnReferences)
		}
		res.Drift = compare(anns, refs, img.BaseName, img.BaseDigest)
		if prev.Digest == res.Digest {
			res.Status = Unchanged
			return res, signAndAttest(ctx, res, o, started, ropts)
		}
	}
	// The image is signed once it is in the registry by digest and
	// before its tag moves: a signature (or its transparency log upload)
	// that fails leaves the tag where it was.
	pushed, err := build.Push(ctx, img, o.Image, build.PushOptions{Insecure: o.InsecureRegistries, Remote: ropts,
		BeforeTag: func() error { return signAndAttest(ctx, res, o, started, ropts) }})
	if err != nil {
		return nil, err
	}
	res.Status = Published
	if pushed.Unchanged {
		// Nothing was written, nor signed: the tag named the digest.
		res.Status = Unchanged
		return res, signAndAttest(ctx, res, o, started, ropts)
	}
	return res, nil
}

// signAndAttest signs the published digest and attests its approvals and
// provenance when o.Signer is set, unless the digest is signed by it
// already: an unchanged catalog gets no new signature. A new image is
// signed before its tag moves (build.PushOptions.BeforeTag); one the tag
// names already is signed in place.
func signAndAttest(ctx context.Context, res *Result, o Options, started time.Time, ropts []remote.Option) error {
	if o.Signer == nil {
		return nil
	}
	var nopts []name.Option
	if host, _, _ := strings.Cut(o.Image, "/"); slices.Contains(o.InsecureRegistries, host) {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.ParseReference(o.Image, nopts...)
	if err != nil {
		return fmt.Errorf("image %q: %w", o.Image, err)
	}
	digest := ref.Context().Digest(res.Digest)
	signed, err := sign.SignedBy(ctx, digest, o.Signer, ropts...)
	if err != nil {
		return fmt.Errorf("read the signatures of %s: %w", digest, err)
	}
	// The tag moved back to an image signed before (a change reverted):
	// the image keeps its signature, and gets an approval of this
	// publication, so that the newest attestation of the target is this
	// one and a verifier takes the tag for current, not rolled back.
	moved := res.Previous != "" && res.Previous != res.Digest
	if signed && !moved {
		res.Signature = AlreadySigned
		return nil
	}
	approval := sign.Approval{
		Repository: o.Source.Repository,
		Commit:     o.Source.Commit,
		Note:       "published outside the App: the commit and the policy are recorded, the approvals are not known",
	}
	if o.Approval != nil {
		approval = *o.Approval
	}
	if approval.Packages == nil {
		approval.Packages = []sign.Package{}
	}
	if res.Previous != "" && res.Previous != res.Digest {
		prev := sign.Publication{Digest: res.Previous}
		if approval.Previous != nil {
			prev.Commit = approval.Previous.Commit
		}
		approval.Previous = &prev
	}
	approval.Catalog, approval.Image = o.Catalog, o.Image
	approval.Catalogd = res.Catalogd
	approval.Published = o.Now().UTC().Format(time.RFC3339Nano)
	// The publish validated the catalog before building it.
	approval.Checks = append(slices.Clone(approval.Checks), sign.Check{Name: "catalog validation", Conclusion: "success"})
	for _, s := range []struct {
		typ  string
		pred any
	}{
		{sign.ApprovalPredicateType, approval},
		{sign.ProvenancePredicateType, provenance(res, o, started)},
	} {
		st, err := sign.NewStatement(digest, s.typ, s.pred)
		if err != nil {
			return err
		}
		if err := sign.Attest(ctx, o.Signer, digest, st, ropts...); err != nil {
			return err
		}
	}
	if signed {
		res.Signature = AlreadySigned
		return nil
	}
	// The signature goes last: a verifier that finds it finds the
	// attestations beside it.
	if err := sign.SignImage(ctx, o.Signer, digest, ropts...); err != nil {
		return err
	}
	res.Signature = Signed
	return nil
}

// provenance is the SLSA provenance of the build: the source commit, the
// base by digest, the references by digest, and what else the build took,
// enough to rebuild the same digest.
func provenance(res *Result, o Options, started time.Time) sign.Provenance {
	params := sign.ProvenanceParameters{
		Source:     o.Source,
		Catalog:    o.Catalog,
		Image:      o.Image,
		Base:       o.Build.Base,
		BaseName:   res.BaseName,
		BaseDigest: res.BaseDigest,
		Platforms:  o.Build.Platforms,
		Refs:       res.References,
	}
	if !o.OmitCatalogdAnnotations {
		params.Catalogd = res.Catalogd
	}
	if params.Base == "" {
		params.Base = build.BaseOPM
	}
	// The zero time is the build's Unix epoch.
	if !o.Build.Epoch.IsZero() {
		params.Epoch = o.Build.Epoch.Unix()
	}
	if params.Base == build.BaseOPM {
		params.OPMImage = o.Build.OPMImage
	}
	var deps []sign.ResourceDescriptor
	if o.Source.Commit != "" {
		deps = append(deps, sign.ResourceDescriptor{URI: gitURI(o.Source.Repository), Digest: map[string]string{"gitCommit": o.Source.Commit}})
	}
	if res.BaseDigest != "" {
		alg, hex, _ := strings.Cut(res.BaseDigest, ":")
		deps = append(deps, sign.ResourceDescriptor{Name: "base", URI: "oci://" + res.Base(), Digest: map[string]string{alg: hex}})
	}
	for _, n := range slices.Sorted(maps.Keys(res.References)) {
		alg, hex, _ := strings.Cut(res.References[n], ":")
		deps = append(deps, sign.ResourceDescriptor{Name: n, URI: "oci://" + n, Digest: map[string]string{alg: hex}})
	}
	return sign.Provenance{
		BuildDefinition: sign.BuildDefinition{BuildType: sign.BuildType, ExternalParameters: params, ResolvedDependencies: deps},
		RunDetails: sign.RunDetails{
			Builder:  o.Builder,
			Metadata: sign.Metadata{StartedOn: started.UTC().Format(time.RFC3339), FinishedOn: o.Now().UTC().Format(time.RFC3339)},
		},
	}
}

// gitURI is a repository as SLSA names a git source: git+URL.
func gitURI(repo string) string {
	switch {
	case repo == "":
		return ""
	case strings.Contains(repo, "://"):
		return "git+" + repo
	}
	return "git+https://github.com/" + repo
}

// assembleList assembles list under tmp and returns the catalog directory
// and the digest every reference resolved to.
func assembleList(ctx context.Context, list *catalogyaml.File, tmp string, o Options) (string, map[string]string, error) {
	cache := o.CacheDir
	if cache == "" {
		cache = filepath.Join(tmp, "cache")
	}
	asm, err := assemble.New(assemble.Options{
		CacheDir:           cache,
		InsecureRegistries: o.InsecureRegistries,
		Keychain:           o.Keychain,
		Transport:          o.Transport,
		Progress:           o.Progress,
	})
	if err != nil {
		return "", nil, err
	}
	assembled, err := asm.Assemble(ctx, list, filepath.Join(tmp, "out"))
	if err != nil {
		return "", nil, err
	}
	refs := map[string]string{}
	for _, r := range assembled.References {
		refs[r.Image] = r.Digest
	}
	return assembled.Dir, refs, nil
}

// gatherRoots writes the catalog the roots of fsys make to dir: exactly
// the files the pull request check validated (catalogfs), so that one root
// can neither overlay nor hide another's. Only data is written: modes are
// fixed, links were resolved by the tree.
func gatherRoots(fsys fs.FS, roots []string, dir string) error {
	catalog, err := catalogfs.New(fsys, roots)
	if err != nil {
		return err
	}
	files, err := catalogfs.Files(catalog)
	if oe, ok := change.Unreadable(err); ok {
		return fmt.Errorf("read the catalog: %w", oe)
	}
	if err != nil {
		return fmt.Errorf("read the catalog: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range files {
		data, err := fs.ReadFile(catalog, p)
		if oe, ok := change.Unreadable(err); ok {
			// Its path in the catalog (p) finds nothing in the
			// repository: the object is named where git names it.
			return fmt.Errorf("read the catalog: %w", oe)
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Image is a published catalog image: its digest and the annotations of
// its manifest (or index).
type Image struct {
	Digest      string
	Annotations map[string]string
}

// readPublished reads the image the target names now, or nil when there is
// none. Only the manifest is read.
func readPublished(ctx context.Context, target string, insecure []string, ropts []remote.Option) (*Image, error) {
	var raw []byte
	var digest string
	if spec, ok := strings.CutPrefix(target, build.LayoutPrefix); ok {
		dir, tag := build.SplitLayout(spec)
		p, err := layout.FromPath(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		idx, err := p.ImageIndex()
		if err != nil {
			return nil, err
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		tagged := match.Annotation("org.opencontainers.image.ref.name", tag)
		i := slices.IndexFunc(m.Manifests, tagged)
		if i < 0 {
			return nil, nil
		}
		digest = m.Manifests[i].Digest.String()
		if raw, err = p.Bytes(m.Manifests[i].Digest); err != nil {
			return nil, err
		}
	} else {
		var nopts []name.Option
		if host, _, _ := strings.Cut(target, "/"); slices.Contains(insecure, host) {
			nopts = append(nopts, name.Insecure)
		}
		ref, err := name.ParseReference(target, nopts...)
		if err != nil {
			return nil, fmt.Errorf("image %q: %w", target, err)
		}
		// Bounded as the build's requests are: without a transport of
		// the caller's, go-containerregistry's default waits for a
		// silent registry's answer for ever.
		desc, err := remote.Get(ref, append(build.BoundedRemote(ropts, ref.Context().RegistryStr()), remote.WithContext(ctx))...)
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		digest, raw = desc.Digest.String(), desc.Manifest
	}
	// Manifests and indexes both keep annotations at the top level.
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", digest, err)
	}
	return &Image{Digest: digest, Annotations: m.Annotations}, nil
}

// compare lists what moved between the annotations of a published image
// and the current inputs, references first (sorted), then the base. An
// image without catalogbot's annotations gives no drift: there is nothing
// to compare against.
func compare(anns map[string]string, refs map[string]string, baseName, baseDigest string) []Drift {
	var drift []Drift
	if s, ok := anns[build.AnnReferences]; ok {
		var was map[string]string
		if err := json.Unmarshal([]byte(s), &was); err == nil {
			names := make([]string, 0, len(was)+len(refs))
			for n := range was {
				names = append(names, n)
			}
			for n := range refs {
				if _, ok := was[n]; !ok {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			for _, n := range names {
				w, inWas := was[n]
				now, inNow := refs[n]
				switch {
				case !inWas:
					drift = append(drift, Drift{Kind: DriftAdded, Name: n, Now: now})
				case !inNow:
					drift = append(drift, Drift{Kind: DriftRemoved, Name: n, Was: w})
				case w != now:
					drift = append(drift, Drift{Kind: DriftReference, Name: n, Was: w, Now: now})
				}
			}
		}
	}
	// A base given by another name is a change of configuration, not
	// drift; only the same name resolving elsewhere is reported.
	if w := anns[build.AnnBaseDigest]; w != "" && anns[build.AnnBaseName] == baseName && w != baseDigest {
		drift = append(drift, Drift{Kind: DriftBase, Name: baseName, Was: w, Now: baseDigest})
	}
	return drift
}

// DriftSince lists what moved between the inputs an earlier build
// recorded (its references and base, as resolved then) and those of res:
// why a rebuild of the same commit gave another digest.
func DriftSince(refs map[string]string, baseName, baseDigest string, res *Result) []Drift {
	anns := map[string]string{build.AnnBaseName: baseName, build.AnnBaseDigest: baseDigest}
	if len(refs) > 0 {
		data, err := json.Marshal(refs)
		if err == nil {
			anns[build.AnnReferences] = string(data)
		}
	}
	return compare(anns, res.References, res.BaseName, res.BaseDigest)
}
