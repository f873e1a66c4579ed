package sign

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// A signature says who signed an image; it does not say the image is the
// one a tag should serve. Anyone who can write to the registry can point
// the tag at another image the same signer signed: an older publication of
// the same catalog (a rollback) or another catalog's (a swap). So a
// verifier checks what the approval attestation records against what it
// asked about (CheckPublication), and that no later signed publication of
// the same target exists (NewerPublications).

// ErrPublication: the image is signed, and is not the publication the
// reference asked about should serve.
var ErrPublication = errors.New("not the publication asked for")

// Claims are what a verifier expects of a publication besides its
// signer. Empty fields are not checked.
type Claims struct {
	// Repository is the catalog repository, OWNER/NAME (matched against
	// owner/name or a git URL that ends in it, without regard to case)
	// or as the attestation records it.
	Repository string
	// Catalog is the catalog's name; CheckCatalog says to compare it
	// even when "" (a repository's one catalog).
	Catalog      string
	CheckCatalog bool
}

// Record is what one signed publication records in its approval
// attestation.
type Record struct {
	Digest   name.Digest
	Approval Approval
	// Published is Approval.Published read, zero when not recorded.
	Published time.Time
}

// ReadPublication reads the approval attestation and the provenance v
// holds.
func ReadPublication(v *Verified) (Record, Provenance, error) {
	out := Record{Digest: v.Digest}
	var prov Provenance
	st := v.Attestations[ApprovalPredicateType]
	if st == nil {
		return out, prov, fmt.Errorf("%w: no approval attestation", ErrAttestation)
	}
	if err := json.Unmarshal(st.Predicate, &out.Approval); err != nil {
		return out, prov, fmt.Errorf("%w: the approval attestation does not parse: %v", ErrAttestation, err)
	}
	if pst := v.Attestations[ProvenancePredicateType]; pst != nil {
		if err := json.Unmarshal(pst.Predicate, &prov); err != nil {
			return out, prov, fmt.Errorf("%w: the provenance does not parse: %v", ErrAttestation, err)
		}
	}
	if out.Approval.Published != "" {
		t, err := time.Parse(time.RFC3339Nano, out.Approval.Published)
		if err != nil {
			return out, prov, fmt.Errorf("%w: the approval's time %q does not parse", ErrAttestation, out.Approval.Published)
		}
		out.Published = t
	}
	return out, prov, nil
}

// Target is the image the publication was pushed to: the approval's,
// else, for an attestation older than that field, the provenance's.
func (p Record) Target(prov ProvenanceParameters) string {
	return cmp.Or(p.Approval.Image, prov.Image)
}

// Catalog is the catalog's name the publication records.
func (p Record) Catalog(prov ProvenanceParameters) string {
	return cmp.Or(p.Approval.Catalog, prov.Catalog)
}

// CheckPublication checks that the publication verified under ref was
// published to ref's repository (and tag, when ref names one), and from
// the repository and catalog c claims. nopts read the recorded target as
// ref was read (name.Insecure).
func CheckPublication(ref name.Reference, p Record, prov ProvenanceParameters, c Claims, nopts ...name.Option) error {
	target := p.Target(prov)
	if target == "" {
		return fmt.Errorf("%w: the attestations record no target, so nothing says the image is %s's", ErrPublication, ref)
	}
	recorded, err := name.ParseReference(target, nopts...)
	if err != nil {
		return fmt.Errorf("%w: the image was published to %q, not %s", ErrPublication, target, ref.Context())
	}
	if recorded.Context().Name() != ref.Context().Name() {
		return fmt.Errorf("%w: %s was published to %s (catalog %s), not to %s: another catalog's image", ErrPublication, p.Digest.DigestStr(), target, orNone(p.Catalog(prov)), ref.Context())
	}
	if tag, ok := ref.(name.Tag); ok {
		if rt, ok := recorded.(name.Tag); !ok || rt.TagStr() != tag.TagStr() {
			return fmt.Errorf("%w: %s was published to %s (catalog %s), not under the tag %s: another catalog's image", ErrPublication, p.Digest.DigestStr(), target, orNone(p.Catalog(prov)), tag.TagStr())
		}
	}
	if c.Repository != "" {
		rec := p.Approval.Repository
		if rec == "" || !SameRepository(rec, c.Repository) || prov.Source.Repository != "" && !SameRepository(prov.Source.Repository, c.Repository) {
			return fmt.Errorf("%w: %s was published from %s, not from %s", ErrPublication, p.Digest.DigestStr(), cmp.Or(rec, "(no repository recorded)"), c.Repository)
		}
	}
	if c.CheckCatalog && p.Catalog(prov) != c.Catalog {
		return fmt.Errorf("%w: %s is catalog %s, not %s", ErrPublication, p.Digest.DigestStr(), orNone(p.Catalog(prov)), orNone(c.Catalog))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(the repository's one catalog)"
	}
	return s
}

// SameRepository says whether the repository an attestation records is
// want: the same string, or for want OWNER/NAME, owner/name or a git URL
// (https://HOST/OWNER/NAME[.git], git@HOST:OWNER/NAME[.git]) that ends in
// it, without regard to case as GitHub compares names.
func SameRepository(recorded, want string) bool {
	if strings.EqualFold(recorded, want) {
		return true
	}
	if strings.Count(want, "/") != 1 {
		return false
	}
	var path string
	switch {
	case strings.Contains(recorded, "://"):
		_, rest, _ := strings.Cut(recorded, "://")
		_, path, _ = strings.Cut(rest, "/")
	case strings.HasPrefix(recorded, "git@"):
		_, path, _ = strings.Cut(recorded, ":")
	default:
		return false
	}
	path = strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git")
	return strings.EqualFold(path, want)
}

// MaxPublications bounds how many signed images of a repository
// NewerPublications reads.
const MaxPublications = 200

// NewerPublications lists the signed publications of p's target, in the
// registry repository of ref, attested later than p, newest first:
// each a digest with an approval attestation o verifies that records the
// same target. A tag that serves p while one of them exists was moved
// back. Images whose attestations do not verify are passed over: anyone
// who can write to the registry can add those. A publication that records
// no time was attested by an older catalogbot, before every one that
// does: those are all later.
func NewerPublications(ctx context.Context, ref name.Reference, p Record, prov ProvenanceParameters, o VerifyOptions) ([]Record, error) {
	ropts := append(slices.Clone(o.Remote), remote.WithContext(ctx))
	tags, err := remote.List(ref.Context(), ropts...)
	if err != nil {
		return nil, fmt.Errorf("list the tags of %s: %w", ref.Context(), err)
	}
	o.PredicateTypes = []string{ApprovalPredicateType}
	want := p.Target(prov)
	var out []Record
	read := 0
	for _, t := range slices.Backward(tags) {
		hex, ok := strings.CutSuffix(t, "."+AttestationSuffix)
		if !ok || !strings.HasPrefix(hex, "sha256-") {
			continue
		}
		d := ref.Context().Digest("sha256:" + strings.TrimPrefix(hex, "sha256-"))
		if d.DigestStr() == p.Digest.DigestStr() {
			continue
		}
		if read++; read > MaxPublications {
			break
		}
		v, err := Verify(ctx, d, o)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		other, oprov, err := ReadPublication(v)
		if err != nil || !sameTarget(other.Target(oprov.BuildDefinition.ExternalParameters), want) || !other.Published.After(p.Published) {
			continue
		}
		out = append(out, other)
	}
	slices.SortFunc(out, func(a, b Record) int { return b.Published.Compare(a.Published) })
	return out, nil
}

// sameTarget says whether two recorded targets name one image: the same
// repository and tag, however written (quay.io/a/b is quay.io/a/b:latest).
func sameTarget(a, b string) bool {
	if a == b {
		return true
	}
	ra, err := name.ParseReference(a, name.Insecure)
	if err != nil {
		return false
	}
	rb, err := name.ParseReference(b, name.Insecure)
	if err != nil {
		return false
	}
	return ra.Context().Name() == rb.Context().Name() && ra.Identifier() == rb.Identifier()
}
