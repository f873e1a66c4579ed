package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Failures of Verify, for errors.Is; the error's text says which image and
// why.
var (
	// ErrUnsigned: the digest has no signature at all.
	ErrUnsigned = errors.New("no signature")
	// ErrNotVerified: signatures exist, and none verifies with the key or
	// identity given.
	ErrNotVerified = errors.New("no signature verifies")
	// ErrAttestation: an attestation is missing, altered or not signed
	// by the signer.
	ErrAttestation = errors.New("attestation does not verify")
	// ErrNoLogKey: the signatures carry transparency log entries and
	// VerifyOptions holds no log key to check them with, nor IgnoreLog.
	ErrNoLogKey = errors.New("no transparency log key given")
)

// VerifyOptions say whose signature is accepted: a public key, or for
// keyless signatures a certificate identity and OIDC issuer under Roots.
type VerifyOptions struct {
	Key crypto.PublicKey
	// Identity is the certificate's subject (a URI such as a workflow
	// ref, or an email) and Issuer its OIDC issuer; Roots are the
	// trusted Fulcio roots.
	Identity, Issuer string
	Roots            *x509.CertPool
	// LogKeys are the public keys of the trusted transparency logs
	// (Rekor's): each signature and attestation must carry an entry of
	// one of them that records it. For a keyless signature, the
	// certificate is checked at the time the log integrated the entry,
	// which must fall within its validity.
	LogKeys []crypto.PublicKey
	// IgnoreLog skips the log, for images signed with it off (cosign's
	// --insecure-ignore-tlog): a keyless certificate is then checked at
	// Now.
	IgnoreLog bool
	// PredicateTypes are the attestations required; each must be present
	// and verify.
	PredicateTypes []string
	Remote         []remote.Option
	// Now is the time certificates are checked at; nil means time.Now.
	Now func() time.Time
}

// Verified is what Verify found.
type Verified struct {
	// Digest is the image verified: the reference given, resolved.
	Digest name.Digest
	// Signatures is the number of signatures that verified.
	Signatures int
	// Attestations are the verified statements, by predicate type (the
	// last one written when there are several).
	Attestations map[string]*Statement
}

// Verify resolves ref to a digest and checks that the digest carries a
// signature by the key or identity of o, and an attestation of each of
// o.PredicateTypes, signed alike, about that digest.
func Verify(ctx context.Context, ref name.Reference, o VerifyOptions) (*Verified, error) {
	if o.Key == nil && o.Identity == "" {
		return nil, errors.New("verify: give a public key, or a certificate identity and issuer")
	}
	if o.Key == nil && (o.Issuer == "" || o.Roots == nil) {
		return nil, errors.New("verify: a certificate identity needs its OIDC issuer and the Fulcio roots")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ropts := append(slices.Clone(o.Remote), remote.WithContext(ctx))
	digest, err := resolve(ref, ropts)
	if err != nil {
		return nil, err
	}
	v := &Verified{Digest: digest, Attestations: map[string]*Statement{}}

	sigs, err := readLayers(Tag(digest, SignatureSuffix), ropts)
	if err != nil {
		return nil, err
	}
	if len(sigs) == 0 {
		if _, isTag := ref.(name.Tag); isTag {
			return nil, fmt.Errorf("%s names %s, which has %w: was the tag moved to an image that was not published signed?", ref, digest.DigestStr(), ErrUnsigned)
		}
		return nil, fmt.Errorf("%s has %w (no %s tag)", digest, ErrUnsigned, Tag(digest, SignatureSuffix).TagStr())
	}
	var why []string
	for _, l := range sigs {
		if err := verifySignature(l, digest, o); err != nil {
			if errors.Is(err, errNoLogKey) {
				return nil, fmt.Errorf("%s: %w: its signatures are in a transparency log", digest, ErrNoLogKey)
			}
			why = append(why, fmt.Sprintf("layer %s: %v", short(l.digest.String()), err))
			continue
		}
		v.Signatures++
	}
	if v.Signatures == 0 {
		return nil, fmt.Errorf("%s: %w with the %s given (%d found): %s", digest, ErrNotVerified, o.what(), len(sigs), strings.Join(why, "; "))
	}

	if len(o.PredicateTypes) == 0 {
		return v, nil
	}
	atts, err := readLayers(Tag(digest, AttestationSuffix), ropts)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, l := range atts {
		st, err := verifyAttestation(l, digest, o)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s attestation in layer %s: %v", l.annotations[AnnPredicateType], short(l.digest.String()), err))
			continue
		}
		v.Attestations[st.PredicateType] = st
	}
	var missing []string
	for _, pt := range o.PredicateTypes {
		if v.Attestations[pt] == nil {
			missing = append(missing, pt)
		}
	}
	if len(missing) > 0 {
		detail := ""
		if len(bad) > 0 {
			detail = "; " + strings.Join(bad, "; ")
		}
		return nil, fmt.Errorf("%s: %w: no valid %s attestation%s", digest, ErrAttestation, strings.Join(missing, ", "), detail)
	}
	return v, nil
}

func (o VerifyOptions) what() string {
	if o.Key != nil {
		return "key"
	}
	return fmt.Sprintf("identity %q of issuer %q", o.Identity, o.Issuer)
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// resolve is ref's digest: itself, or what its tag names now.
func resolve(ref name.Reference, ropts []remote.Option) (name.Digest, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil
	}
	desc, err := remote.Head(ref, ropts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("resolve %s: %w", ref, err)
	}
	return ref.Context().Digest(desc.Digest.String()), nil
}

// check verifies one layer with verify, given the verifier of the key or
// certificate, and the layer's log entry unless o ignores the log. sig is
// the layer's signature, nil for an attestation (whose signature is in its
// envelope). With a key, the signature is checked first, so that another
// key says so; with a certificate, the entry first: the time it records
// is when the certificate must have been valid.
func (o VerifyOptions) check(l layerEntry, sig []byte, verify func(signature.Verifier) error) error {
	if o.Key != nil {
		ver, err := signature.LoadVerifier(o.Key, crypto.SHA256)
		if err != nil {
			return err
		}
		if err := verify(ver); err != nil {
			return err
		}
		if o.IgnoreLog {
			return nil
		}
		pub, err := cryptoutils.MarshalPublicKeyToPEM(o.Key)
		if err != nil {
			return err
		}
		if _, err := checkBundle(l, sig, pub, o.LogKeys); err != nil {
			return logError(err)
		}
		return nil
	}
	at := o.Now()
	if !o.IgnoreLog {
		var err error
		if at, err = checkBundle(l, sig, []byte(l.annotations[AnnCertificate]), o.LogKeys); err != nil {
			return logError(err)
		}
	}
	ver, err := o.certVerifier(l, at, !o.IgnoreLog)
	if err != nil {
		return err
	}
	return verify(ver)
}

// logError marks a log entry's failure with ErrLog, and says it is the
// log's.
func logError(err error) error {
	if errors.Is(err, errNoLogKey) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrLog, err)
}

// certVerifier is the verifier of the layer's certificate once the
// certificate checks out at time at: the log's integrated time when
// logged is set, else now.
func (o VerifyOptions) certVerifier(l layerEntry, at time.Time, logged bool) (signature.Verifier, error) {
	pemCert := l.annotations[AnnCertificate]
	if pemCert == "" {
		return nil, errors.New("signed with a key, not a certificate")
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(pemCert))
	if err != nil || len(certs) != 1 {
		return nil, fmt.Errorf("certificate annotation: not one PEM certificate")
	}
	cert := certs[0]
	if logged && (at.Before(cert.NotBefore) || at.After(cert.NotAfter)) {
		return nil, fmt.Errorf("the log integrated the entry at %s, outside the certificate's validity (%s to %s)",
			at.UTC().Format(time.RFC3339), cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))
	}
	inter := x509.NewCertPool()
	if chain, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(l.annotations[AnnChain])); err == nil {
		for _, c := range chain {
			inter.AddCert(c)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{
		Roots: o.Roots, Intermediates: inter, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}); err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	if ids := CertificateIdentities(cert); !slices.Contains(ids, o.Identity) {
		return nil, fmt.Errorf("certificate identity %q, want %q", strings.Join(ids, ", "), o.Identity)
	}
	if iss := CertificateIssuer(cert); iss != o.Issuer {
		return nil, fmt.Errorf("certificate OIDC issuer %q, want %q", iss, o.Issuer)
	}
	return signature.LoadVerifier(cert.PublicKey, crypto.SHA256)
}

func verifySignature(l layerEntry, digest name.Digest, o VerifyOptions) error {
	if l.annotations[AnnSignature] == "" {
		return errors.New("no signature annotation")
	}
	sig, err := base64.StdEncoding.DecodeString(l.annotations[AnnSignature])
	if err != nil {
		return fmt.Errorf("signature annotation: %w", err)
	}
	if err := o.check(l, sig, func(ver signature.Verifier) error {
		if err := ver.VerifySignature(bytes.NewReader(sig), bytes.NewReader(l.body)); err != nil {
			return fmt.Errorf("the signature does not match the %s (another key, or altered)", o.what())
		}
		return nil
	}); err != nil {
		return err
	}
	// The payload is signed; now it must name this digest, or it is
	// another image's signature copied here.
	var p payload.SimpleContainerImage
	if err := json.Unmarshal(l.body, &p); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	if got := p.Critical.Image.DockerManifestDigest; got != digest.DigestStr() {
		return fmt.Errorf("the signature is for %s, not %s", got, digest.DigestStr())
	}
	return nil
}

func verifyAttestation(l layerEntry, digest name.Digest, o VerifyOptions) (*Statement, error) {
	if err := o.check(l, nil, func(ver signature.Verifier) error {
		if err := dsse.WrapVerifier(ver).VerifySignature(bytes.NewReader(l.body), nil); err != nil {
			return fmt.Errorf("its DSSE signature does not match its content: altered, or signed with another %s", strings.Fields(o.what())[0])
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
	}
	if err := json.Unmarshal(l.body, &env); err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	if env.PayloadType != InTotoPayloadType {
		return nil, fmt.Errorf("payload type %q, want %q", env.PayloadType, InTotoPayloadType)
	}
	raw, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("envelope payload: %w", err)
	}
	var st Statement
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	alg, hex, _ := strings.Cut(digest.DigestStr(), ":")
	if !slices.ContainsFunc(st.Subject, func(s Subject) bool { return s.Digest[alg] == hex }) {
		return nil, fmt.Errorf("the statement is about another image, not %s", digest.DigestStr())
	}
	if ann := l.annotations[AnnPredicateType]; ann != "" && ann != st.PredicateType {
		return nil, fmt.Errorf("annotated as %s, signed as %s", ann, st.PredicateType)
	}
	return &st, nil
}

// Fulcio's certificate extensions naming the OIDC issuer: the first one
// as a raw string, its successor as a DER UTF8String.
var (
	oidIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
)

// CertificateIdentities are the subject alternative names of a Fulcio
// certificate: URIs (a workflow's ref for GitHub Actions) and emails.
func CertificateIdentities(cert *x509.Certificate) []string {
	var ids []string
	for _, u := range cert.URIs {
		ids = append(ids, u.String())
	}
	return append(ids, cert.EmailAddresses...)
}

// CertificateIssuer is the OIDC issuer a Fulcio certificate records.
func CertificateIssuer(cert *x509.Certificate) string {
	for _, ext := range cert.Extensions {
		switch {
		case ext.Id.Equal(oidIssuerV2):
			var s string
			if _, err := asn1.Unmarshal(ext.Value, &s); err == nil {
				return s
			}
		case ext.Id.Equal(oidIssuerV1):
			return string(ext.Value)
		}
	}
	return ""
}

// SignedBy says whether digest already carries a signature by s: one that
// verifies with s's key, or for a keyless s, one whose certificate chains
// to the root of the Fulcio that issued s's and names the same identity
// and issuer (a new certificate every run, the identity is what stays).
// Anyone who can write to the registry can put a signature beside the
// predictable digest before the publisher does, with a certificate from a
// CA of their own naming the same identity; one that does not chain is
// not s's, and s signs again. When s's chain holds no root, SignedBy
// cannot tell, and says false: signing twice costs a signature, trusting
// a stranger's costs the image's. It decides only whether to sign again;
// Verify is what checks a signature.
func SignedBy(ctx context.Context, digest name.Digest, s *Signer, ropts ...remote.Option) (bool, error) {
	layers, err := readLayers(Tag(digest, SignatureSuffix), append(slices.Clone(ropts), remote.WithContext(ctx)))
	if err != nil {
		return false, err
	}
	// Whether a signature is there, not whether its log entry verifies
	// (the signer holds no log key): a signer that logs wants an entry
	// beside it, or signs again.
	o := VerifyOptions{Key: s.PublicKey(), IgnoreLog: true}
	var ids []string
	var issuer string
	var roots, inter *x509.CertPool
	if s.Keyless() {
		certs, err := cryptoutils.UnmarshalCertificatesFromPEM(s.cert)
		if err != nil || len(certs) == 0 {
			return false, errors.New("sign: the signer's certificate does not parse")
		}
		ids, issuer = CertificateIdentities(certs[0]), CertificateIssuer(certs[0])
		if roots, inter = s.chainPools(); roots == nil {
			return false, nil
		}
	}
	for _, l := range layers {
		if s.log != nil && l.annotations[AnnBundle] == "" {
			continue
		}
		if s.Keyless() {
			certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(l.annotations[AnnCertificate]))
			if err != nil || len(certs) != 1 || !slices.Equal(CertificateIdentities(certs[0]), ids) || CertificateIssuer(certs[0]) != issuer {
				continue
			}
			if !chains(certs[0], l, roots, inter) {
				continue
			}
			o.Key = certs[0].PublicKey
		}
		if verifySignature(l, digest, o) == nil {
			return true, nil
		}
	}
	return false, nil
}

// chainPools are the roots and intermediates of the chain Fulcio gave s
// with its certificate: the self-signed certificates are roots, the rest
// intermediates. roots is nil when the chain holds no root.
func (s *Signer) chainPools() (roots, inter *x509.CertPool) {
	chain, err := cryptoutils.UnmarshalCertificatesFromPEM(s.chain)
	if err != nil {
		return nil, nil
	}
	inter = x509.NewCertPool()
	for _, c := range chain {
		if c.CheckSignatureFrom(c) == nil && bytes.Equal(c.RawIssuer, c.RawSubject) {
			if roots == nil {
				roots = x509.NewCertPool()
			}
			roots.AddCert(c)
			continue
		}
		inter.AddCert(c)
	}
	return roots, inter
}

// chains says whether cert, a signature layer l's, chains to roots for
// code signing, through inter or the intermediates l carries, at the time
// it was issued: an older publication's certificate has expired since, and
// still was Fulcio's.
func chains(cert *x509.Certificate, l layerEntry, roots, inter *x509.CertPool) bool {
	pool := inter.Clone()
	if chain, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(l.annotations[AnnChain])); err == nil {
		for _, c := range chain {
			pool.AddCert(c)
		}
	}
	_, err := cert.Verify(x509.VerifyOptions{
		Roots: roots, Intermediates: pool, CurrentTime: cert.NotBefore,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	})
	return err == nil
}
