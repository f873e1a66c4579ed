package main

import (
	"cmp"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/policy/publishing"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// verifyFlags are the command line of verify.
type verifyFlags struct {
	key      string
	identity string
	issuer   string
	caRoots  string
	rebuild  bool
	repo     string
	// repository, catalog and branch are what the image must be: the
	// catalog of that repository, published from that branch.
	repository string
	catalog    string
	branch     string
	set        map[string]bool
	insecure   []string
	// rekorKey, rekorURL and ignoreTlog say how the transparency log
	// entries are checked: with the log's key from a file or from the
	// log, or not at all.
	rekorKey   string
	rekorURL   string
	ignoreTlog bool
}

func newVerifyCmd(a *app) *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify IMAGE [--repository OWNER/NAME] [--catalog NAME] (--key KEY | --certificate-identity ID --certificate-oidc-issuer URL --ca-roots FILE) (--rekor-key FILE | --rekor-url URL | --insecure-ignore-tlog) [--rebuild --repo DIR [--branch BRANCH]]",
		Short: "Verify a published catalog image's signature, attestations and, with --rebuild, its digest",
		Long: `Verify the catalog image IMAGE (a tag is resolved to the digest it names
now) as publish --sign-key or --sign-keyless signed it: its signature
(the sha256-<hex>.sig tag, as cosign stores it) with the public key --key
(cosign.pub, or a KMS key named as --sign-key names it, such as
hashivault://NAME, whose public key the KMS gives), or for a keyless
signature with a Fulcio certificate for --certificate-identity (a
workflow's ref, such as
https://github.com/OWNER/REPO/.github/workflows/publish.yaml@refs/heads/main)
issued for --certificate-oidc-issuer and chaining to the roots in
--ca-roots; then its two attestations (the .att tag): the approval record
and the SLSA provenance, signed alike and about that digest.

Each signature and attestation must carry its Rekor transparency log
entry (publish uploads them unless --tlog-upload=false), as cosign
requires: the log's signed entry timestamp is checked offline with the
log's public key, --rekor-key (a PEM file), or the key the log at
--rekor-url serves; and the entry must record this signature, payload and
key or certificate. For a keyless signature, the certificate must have
been valid when the log integrated the entry, which is what lets it verify
after the short-lived certificate expired. The key of sigstore's public log
is not built in: pass it (rekor.pub of sigstore's trusted root) or
--rekor-url https://rekor.sigstore.dev. --insecure-ignore-tlog skips the
log, for images signed with it off; a keyless certificate is then checked
at the time of verifying (see docs/security.md).

A signature says who signed the image, not that it is the one IMAGE should
serve: whoever can write to the registry can point a tag at another image
the same signer signed. So the approval attestation must record IMAGE's
repository and tag as the target it was published to (another catalog's
image under this tag is refused); with --repository, the catalog
repository it was published from (OWNER/NAME, or as recorded); with
--catalog, the catalog's name. And no later signed publication of the same
target may exist in the registry: a tag moved back to an older one is a
rollback, and is refused.

With --rebuild, the commit the provenance records is read from the git
repository --repo, and built as it was published (the catalog the
publication records, by name, wherever it was pushed, or the recorded
path; on the recorded base pinned to its digest, for the recorded
platforms and SOURCE_DATE_EPOCH), without pushing: the digest
must be the one verified. References of an assembled catalog are resolved
anew; one that moved is named. The commit must be on --branch (default:
the branch --repo has checked out): its tip, or an older commit whose
catalog the tip publishes unchanged (the tip is rebuilt to tell).

Output: what was verified, one line each, then "verified".

Exit status: 0 verified, 1 not verified (unsigned, signed by another key
or identity, an attestation missing, altered or about another image, a
log entry missing, altered or of another signature, an image published
to another target, from another repository or catalog, a later
publication of the target, a rebuild that gives another digest, a commit
not on the branch or behind its tip; the reason is printed), 2 usage
(such as no log key for an image whose signatures are in a log), registry
or I/O error.`,
		Example: `  catalogbot verify quay.io/example/catalog:latest --key cosign.pub --rekor-key rekor.pub
  catalogbot verify quay.io/example/catalog:latest --key cosign.pub --rekor-url https://rekor.sigstore.dev
  catalogbot verify quay.io/example/catalog:latest --key hashivault://catalog-signing --insecure-ignore-tlog
  catalogbot verify quay.io/example/catalog:v4.20 --repository example/catalog --catalog v4.20 --key cosign.pub --rekor-key rekor.pub
  catalogbot verify quay.io/example/catalog:latest --key cosign.pub --rekor-key rekor.pub --rebuild --repo . --branch main
  catalogbot verify quay.io/example/catalog@sha256:... --ca-roots fulcio.pem --rekor-key rekor.pub \
      --certificate-identity https://github.com/example/catalog/.github/workflows/publish.yaml@refs/heads/main \
      --certificate-oidc-issuer https://token.actions.githubusercontent.com`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd.CommandPath(), "verify takes one image, got %d arguments", len(args))
			}
			switch {
			case f.key != "" && (f.identity != "" || f.issuer != ""):
				return usageErrorf(cmd.CommandPath(), "give --key, or --certificate-identity and --certificate-oidc-issuer, not both")
			case f.key == "" && (f.identity == "" || f.issuer == "" || f.caRoots == ""):
				return usageErrorf(cmd.CommandPath(), "verify needs --key, or --certificate-identity, --certificate-oidc-issuer and --ca-roots")
			case f.rebuild && f.repo == "":
				return usageErrorf(cmd.CommandPath(), "--rebuild needs the git repository: --repo DIR")
			case f.repo != "" && !f.rebuild:
				return usageErrorf(cmd.CommandPath(), "--repo is for --rebuild")
			case f.branch != "" && !f.rebuild:
				return usageErrorf(cmd.CommandPath(), "--branch is for --rebuild")
			case f.rekorKey != "" && f.rekorURL != "":
				return usageErrorf(cmd.CommandPath(), "give the log's key with --rekor-key or --rekor-url, not both")
			case f.ignoreTlog && (f.rekorKey != "" || f.rekorURL != ""):
				return usageErrorf(cmd.CommandPath(), "--insecure-ignore-tlog skips the log: it takes no --rekor-key or --rekor-url")
			}
			return checkInsecureFlags(cmd.CommandPath(), f.insecure)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			defer a.showWaiting()()
			f.set = map[string]bool{"catalog": cmd.Flags().Changed("catalog")}
			return a.runVerify(cmd.Context(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "the signer's public `KEY`: a file (cosign.pub), or the KMS key (scheme://...) publish --sign-key named")
	fl.StringVar(&f.identity, "certificate-identity", "", "for a keyless signature: the certificate's identity `ID`")
	fl.StringVar(&f.issuer, "certificate-oidc-issuer", "", "for a keyless signature: the certificate's OIDC issuer `URL`")
	fl.StringVar(&f.caRoots, "ca-roots", "", "for a keyless signature: the Fulcio root certificates, PEM `FILE`")
	fl.BoolVar(&f.rebuild, "rebuild", false, "rebuild the recorded commit on the recorded base and compare the digest")
	fl.StringVar(&f.repo, "repo", "", "the git repository `DIR` holding the recorded commit, for --rebuild")
	fl.StringVar(&f.repository, "repository", "", "the catalog repository the image must be published from: `OWNER/NAME` (or as the attestation records it)")
	fl.StringVar(&f.catalog, "catalog", "", "the catalog the image must be, by its `NAME` in the repository's policy (\"\" for a repository's one catalog)")
	fl.StringVar(&f.branch, "branch", "", "with --rebuild: the `BRANCH` the recorded commit must be on, at its tip or published unchanged by it (default: the branch --repo has checked out)")
	fl.StringVar(&f.rekorKey, "rekor-key", "", "the Rekor transparency log's public key, PEM `FILE`, that checks each signature's log entry offline")
	fl.StringVar(&f.rekorURL, "rekor-url", "", "the Rekor transparency log `URL` whose public key (GET /api/v1/log/publicKey) checks the log entries")
	fl.BoolVar(&f.ignoreTlog, "insecure-ignore-tlog", false, "skip the transparency log, for an image signed with --tlog-upload=false (as cosign's flag)")
	fl.StringArrayVar(&f.insecure, "insecure-registry", nil, insecureUsage)
	return cmd
}

func (a *app) runVerify(ctx context.Context, image string, f verifyFlags) error {
	var nopts []name.Option
	if host, _, _ := strings.Cut(image, "/"); slices.Contains(f.insecure, host) {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.ParseReference(image, nopts...)
	if err != nil {
		return fmt.Errorf("image %q: %w", image, err)
	}
	o := sign.VerifyOptions{
		Identity: f.identity, Issuer: f.issuer,
		PredicateTypes: []string{sign.ApprovalPredicateType, sign.ProvenancePredicateType},
		Remote:         []remote.Option{remote.WithAuthFromKeychain(registry.DefaultKeychain()), remote.WithUserAgent(a.userAgent())},
		IgnoreLog:      f.ignoreTlog,
	}
	switch {
	case f.rekorKey != "":
		data, err := os.ReadFile(f.rekorKey)
		if err != nil {
			return err
		}
		key, err := cryptoutils.UnmarshalPEMToPublicKey(data)
		if err != nil {
			return fmt.Errorf("%s: not a PEM public key: %w", f.rekorKey, err)
		}
		o.LogKeys = []crypto.PublicKey{key}
	case f.rekorURL != "":
		key, err := (&sign.Rekor{URL: f.rekorURL}).PublicKey(ctx)
		if err != nil {
			return err
		}
		o.LogKeys = []crypto.PublicKey{key}
	}
	switch {
	case sign.IsKMSRef(f.key):
		// The KMS gives the public key; the signatures are checked
		// here with it, as with a key file.
		if o.Key, err = sign.KMSPublicKey(ctx, f.key); err != nil {
			return err
		}
	case f.key != "":
		data, err := os.ReadFile(f.key)
		if err != nil {
			return err
		}
		if o.Key, err = cryptoutils.UnmarshalPEMToPublicKey(data); err != nil {
			return fmt.Errorf("%s: not a PEM public key: %w", f.key, err)
		}
	default:
		data, err := os.ReadFile(f.caRoots)
		if err != nil {
			return err
		}
		certs, err := cryptoutils.UnmarshalCertificatesFromPEM(data)
		if err != nil || len(certs) == 0 {
			return fmt.Errorf("%s: no PEM certificates", f.caRoots)
		}
		o.Roots = x509.NewCertPool()
		for _, c := range certs {
			o.Roots.AddCert(c)
		}
	}
	v, err := sign.Verify(ctx, ref, o)
	if errors.Is(err, sign.ErrNoLogKey) {
		// The public log's key is not built in (it rotates, and comes
		// with sigstore's trusted root): say what to pass.
		return fmt.Errorf("%w: pass the log's public key with --rekor-key FILE (for sigstore's public log, rekor.pub of its trusted root), or --rekor-url URL to ask the log for it (--rekor-url %s), or --insecure-ignore-tlog to skip the log", err, sign.DefaultRekorURL)
	}
	if errors.Is(err, sign.ErrUnsigned) || errors.Is(err, sign.ErrNotVerified) || errors.Is(err, sign.ErrAttestation) {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: %v\n", err)
		return errInvalid
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "signature: %s, %d signature(s) by the %s\n", v.Digest, v.Signatures, signerOf(f))
	fmt.Fprintf(a.stdout, "transparency log: %s\n", logOf(f))

	rec, prov, err := sign.ReadPublication(v)
	if err != nil {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: %v\n", err)
		return errInvalid
	}
	if v.Attestations[sign.ProvenancePredicateType] == nil {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: no provenance attestation\n")
		return errInvalid
	}
	p := prov.BuildDefinition.ExternalParameters
	fmt.Fprintf(a.stdout, "approval: %s\n", describeApproval(rec.Approval))
	fmt.Fprintf(a.stdout, "provenance: commit %s of %s, base %s, built by %s\n",
		orUnknown(p.Source.Commit), orUnknown(p.Source.Repository), baseOf(p), orUnknown(prov.RunDetails.Builder.ID))
	fmt.Fprintf(a.stdout, "catalog: %s of %s, published to %s%s\n", catalogName(rec.Catalog(p)),
		orUnknown(cmp.Or(rec.Approval.Repository, p.Source.Repository)), orUnknown(rec.Target(p)), publishedAt(rec))

	// The signer is trusted; now the image must be the publication
	// IMAGE asked about, and the newest of it.
	claims := sign.Claims{Repository: f.repository, Catalog: f.catalog, CheckCatalog: f.set["catalog"]}
	if err := sign.CheckPublication(ref, rec, p, claims, nopts...); err != nil {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: %v\n", err)
		return errInvalid
	}
	newer, err := sign.NewerPublications(ctx, ref, rec, p, o)
	if err != nil {
		return err
	}
	if len(newer) > 0 {
		n := newer[0]
		fmt.Fprintf(a.stderr, "catalogbot: not verified: %s serves %s (commit %s%s), and %s (commit %s%s) was published to it later, signed alike: the tag was moved back to an older publication\n",
			ref, v.Digest.DigestStr(), orUnknown(rec.Approval.Commit), publishedAt(rec), n.Digest.DigestStr(), orUnknown(n.Approval.Commit), publishedAt(n))
		return errInvalid
	}
	fmt.Fprintf(a.stdout, "newest: no later signed publication of %s in %s\n", orUnknown(rec.Target(p)), ref.Context())
	if f.repository == "" {
		// The key may sign for several repositories: say what was not
		// asked.
		fmt.Fprintf(a.stdout, "repository: not checked (--repository OWNER/NAME refuses another repository's publication)\n")
	}

	if f.rebuild {
		// The catalog rebuilt is the one the publication records,
		// whatever target it was pushed to: the approval's, else the
		// provenance's (an older provenance may not name it).
		p.Catalog = rec.Catalog(p)
		if err := a.verifyRebuild(ctx, v.Digest, p, f); err != nil {
			return err
		}
	}
	fmt.Fprintln(a.stdout, "verified")
	return nil
}

func catalogName(s string) string {
	if s == "" {
		return "the repository's one catalog"
	}
	return "catalog " + s
}

func publishedAt(r sign.Record) string {
	if r.Published.IsZero() {
		return ""
	}
	return ", at " + r.Published.UTC().Format(time.RFC3339)
}

// verifyRebuild rebuilds the recorded commit as provenance p says and
// compares the digest with the verified one; then checks the commit is on
// the branch: its tip, or behind a tip that publishes the same image.
func (a *app) verifyRebuild(ctx context.Context, digest name.Digest, p sign.ProvenanceParameters, f verifyFlags) error {
	if p.Source.Commit == "" {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: the provenance records no commit to rebuild (published outside a git work tree)\n")
		return errInvalid
	}
	repo, err := git.PlainOpenWithOptions(f.repo, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return fmt.Errorf("open git repository %s: %w", f.repo, err)
	}
	res, what, err := a.rebuildAt(ctx, repo, p.Source.Commit, p, f)
	if err != nil {
		return err
	}
	if res.Status == publish.Invalid {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: the catalog at %s does not validate\n", change.ShortSHA(p.Source.Commit))
		return errInvalid
	}
	if res.Digest != digest.DigestStr() {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: rebuilding %s on %s gives %s, not %s (%s)\n",
			change.ShortSHA(p.Source.Commit), baseOf(p), res.Digest, digest.DigestStr(), what)
		for _, d := range publish.DriftSince(p.Refs, p.BaseName, p.BaseDigest, res) {
			fmt.Fprintf(a.stderr, "catalogbot: moved since the build: %s\n", d)
		}
		return errInvalid
	}
	fmt.Fprintf(a.stdout, "rebuild: %s of %s, %s, gives %s\n", change.ShortSHA(p.Source.Commit), f.repo, what, res.Digest)

	branch, tip, err := branchTip(repo, f.branch)
	if err != nil {
		return err
	}
	if tip == p.Source.Commit {
		fmt.Fprintf(a.stdout, "branch: %s is the tip of %s\n", change.ShortSHA(tip), branch)
		return nil
	}
	on, err := isAncestor(repo, p.Source.Commit, tip)
	if err != nil {
		return err
	}
	if !on {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: the recorded commit %s is not on %s (tip %s)\n", change.ShortSHA(p.Source.Commit), branch, change.ShortSHA(tip))
		return errInvalid
	}
	// A commit behind the tip is current when the tip publishes the same
	// image: a push that did not change the catalog publishes nothing.
	res, _, err = a.rebuildAt(ctx, repo, tip, p, f)
	if err != nil {
		return err
	}
	atTip := res.Digest
	if res.Status == publish.Invalid {
		atTip = "a catalog that does not validate"
	}
	if atTip != digest.DigestStr() {
		fmt.Fprintf(a.stderr, "catalogbot: not verified: the tip %s of %s publishes %s, not %s of %s: the tag serves an older publication (or the tip is not published yet)\n",
			change.ShortSHA(tip), branch, orUnknown(atTip), digest.DigestStr(), change.ShortSHA(p.Source.Commit))
		return errInvalid
	}
	fmt.Fprintf(a.stdout, "branch: the tip %s of %s publishes the same image\n", change.ShortSHA(tip), branch)
	return nil
}

// rebuildAt builds the catalog provenance p records from commit, as it was
// published, and says what was built: the catalog and its roots or
// reference list.
func (a *app) rebuildAt(ctx context.Context, repo *git.Repository, commit string, p sign.ProvenanceParameters, f verifyFlags) (*publish.Result, string, error) {
	tree, err := change.TreeFS(repo, commit)
	if err != nil {
		return nil, "", fmt.Errorf("the commit %s in %s: %w", commit, f.repo, err)
	}
	src, opts, err := publishing.RebuildInput(tree, p)
	if err != nil {
		return nil, "", fmt.Errorf("rebuild %s: %w", change.ShortSHA(commit), err)
	}
	what := catalogName(p.Catalog) + " from " + strings.Join(src.Roots, ", ")
	if src.ReferenceList != "" {
		what = catalogName(p.Catalog) + " assembled from " + src.ReferenceList
	}
	what = checks.VisibleLine(what)
	opts.InsecureRegistries = f.insecure
	opts.Keychain = registry.DefaultKeychain()
	opts.UserAgent = a.userAgent()
	opts.Validate = a.validate
	res, err := publish.Publish(ctx, src, opts)
	if err != nil {
		return nil, what, a.publishError(ctx, err, false)
	}
	return res, what, nil
}

// branchTip is the branch named (the one checked out for "") and its tip.
func branchTip(repo *git.Repository, branch string) (string, string, error) {
	if branch == "" {
		head, err := repo.Head()
		if err != nil {
			return "", "", fmt.Errorf("the branch checked out: %w", err)
		}
		if !head.Name().IsBranch() {
			return "", "", errors.New("no branch is checked out (a detached HEAD); name one with --branch")
		}
		return head.Name().Short(), head.Hash().String(), nil
	}
	tip, err := change.Resolve(repo, "refs/heads/"+branch)
	if err != nil {
		if tip, err = change.Resolve(repo, branch); err != nil {
			return "", "", fmt.Errorf("--branch %s: %w", branch, err)
		}
	}
	return branch, tip, nil
}

// isAncestor says whether commit is tip or one of its ancestors.
func isAncestor(repo *git.Repository, commit, tip string) (bool, error) {
	c, err := repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return false, fmt.Errorf("the recorded commit %s: %w", commit, err)
	}
	t, err := repo.CommitObject(plumbing.NewHash(tip))
	if err != nil {
		return false, err
	}
	return c.IsAncestor(t)
}

func signerOf(f verifyFlags) string {
	if f.key != "" {
		return "key " + f.key
	}
	return fmt.Sprintf("identity %s of %s", f.identity, f.issuer)
}

func logOf(f verifyFlags) string {
	switch {
	case f.ignoreTlog:
		return "not checked (--insecure-ignore-tlog)"
	case f.rekorKey != "":
		return "each entry verified with the log key " + f.rekorKey
	}
	return "each entry verified with the key of " + f.rekorURL
}

func describeApproval(appr sign.Approval) string {
	s := fmt.Sprintf("commit %s, policy %s", orUnknown(appr.Commit), orUnknown(appr.Policy.Path))
	if appr.Policy.Blob != "" {
		s += " (blob " + change.ShortSHA(appr.Policy.Blob) + ")"
	}
	if !appr.ApprovalsRecorded {
		return s + ", approvals not recorded: " + appr.Note
	}
	prs := 0
	for _, p := range appr.Packages {
		prs += len(p.PullRequests)
	}
	return s + fmt.Sprintf(", %d package(s) changed by %d pull request(s), %d check(s) passed", len(appr.Packages), prs, len(appr.Checks))
}

func baseOf(p sign.ProvenanceParameters) string {
	if p.BaseName == "" {
		return p.Base
	}
	return p.BaseName + "@" + p.BaseDigest
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
