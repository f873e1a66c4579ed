// Package sign signs published catalog images and their attestations, and
// verifies them, in the form cosign stores them, so that `cosign verify`
// and `cosign verify-attestation` accept what catalogbot writes:
//
//   - a signature is a layer of the image tagged sha256-<hex>.sig in the
//     image's repository: the simple signing payload
//     (application/vnd.dev.cosign.simplesigning.v1+json) naming the
//     digest, with the base64 signature in the layer's
//     dev.cosignproject.cosign/signature annotation;
//   - an attestation is a layer of the image tagged sha256-<hex>.att: a
//     DSSE envelope (application/vnd.dsse.envelope.v1+json) around an
//     in-toto statement whose subject is the digest, with the statement's
//     predicateType in the layer's predicateType annotation.
//
// A Signer holds either a key (a cosign key pair file, LoadKey; or a key
// kept in a key management service, named as cosign names them, LoadKMS)
// or an ephemeral key with a Fulcio certificate (keyless, Keyless); a keyless
// signature carries its certificate and chain in the
// dev.sigstore.cosign/certificate and dev.sigstore.cosign/chain
// annotations. A signer given a Rekor transparency log (WithLog) uploads
// each signature (a hashedrekord entry) and attestation (a dsse entry) to
// it and keeps the log's answer in the dev.sigstore.cosign/bundle
// annotation, as cosign does by default, so that cosign verifies it
// offline against the log's public key; without a log, verifiers skip it
// (cosign's --insecure-ignore-tlog), see docs/security.md.
//
// Verify checks an image's signature with a public key or a certificate
// identity, and its log entries with the log's key, and returns its
// verified attestations; each failure says what is wrong (no signature,
// another key, an altered attestation or log entry, a tag that now names
// another digest). A signature does not say a tag should serve the image:
// CheckPublication holds what the approval records (the repository, the
// catalog, the target) against what was asked, and NewerPublications finds
// a later signed publication of the same target, which makes the tag a
// rollback.
//
// The predicates catalogbot attests are here too: Approval (who approved
// what went into the catalog, predicate type ApprovalPredicateType) and
// SLSA provenance v1 (ProvenancePredicateType).
package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/options"
)

// Signer signs payloads with one private key. A keyless signer also holds
// the certificate Fulcio issued for its ephemeral key.
type Signer struct {
	sv signature.SignerVerifier
	// pub is the public key read once, for a KMS key whose every read
	// is a request (or a plugin run); nil means ask sv.
	pub crypto.PublicKey
	// cert and chain are PEM; empty for a key pair.
	cert, chain []byte
	// log is the transparency log each signature goes to; nil for none.
	log *Rekor
}

// LoadKey reads a private key in the formats cosign reads: the encrypted
// PEM of `cosign generate-key-pair` ("ENCRYPTED SIGSTORE PRIVATE KEY", or
// the older "ENCRYPTED COSIGN PRIVATE KEY"), decrypted with password, or an
// unencrypted PKCS#8, SEC 1 or PKCS#1 PEM. file names the key in errors.
func LoadKey(file string, pemBytes, password []byte) (*Signer, error) {
	if !bytes.Contains(pemBytes, []byte("-----BEGIN ")) {
		return nil, fmt.Errorf("%s: not a PEM private key", file)
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		// The encrypted format fails authentication, not parsing, on
		// a wrong password; say which is likelier.
		if bytes.Contains(pemBytes, []byte("ENCRYPTED")) {
			return nil, fmt.Errorf("%s: cannot decrypt the key (is COSIGN_PASSWORD its password?): %w", file, err)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	sv, err := signature.LoadSignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &Signer{sv: sv}, nil
}

// LoadKeyFile reads the key file path with LoadKey, its password in
// $COSIGN_PASSWORD as cosign takes it (unset means none).
func LoadKeyFile(path string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	return LoadKey(path, data, []byte(os.Getenv("COSIGN_PASSWORD")))
}

// GenerateKeyPair makes an ECDSA P-256 key pair as `cosign
// generate-key-pair` does: the private key encrypted with password in an
// "ENCRYPTED SIGSTORE PRIVATE KEY" PEM, and the public key PEM.
func GenerateKeyPair(password []byte) (privPEM, pubPEM []byte, err error) {
	return cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(password))
}

// newEphemeral is a fresh P-256 signer, the key a keyless signature uses
// once.
func newEphemeral() (*Signer, *ecdsa.PrivateKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return &Signer{sv: sv}, priv, nil
}

// PublicKey is the signer's public key.
func (s *Signer) PublicKey() crypto.PublicKey {
	if s.pub != nil {
		return s.pub
	}
	pub, _ := s.sv.PublicKey()
	return pub
}

// PublicKeyPEM is the signer's public key as cosign writes cosign.pub.
func (s *Signer) PublicKeyPEM() ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(s.PublicKey())
}

// Certificate is the PEM certificate of a keyless signer, nil for a key.
func (s *Signer) Certificate() []byte { return s.cert }

// Keyless says whether the signer holds a certificate.
func (s *Signer) Keyless() bool { return len(s.cert) > 0 }

// signMessage signs msg within ctx: a KMS signer's request (or plugin
// process) ends with it.
func (s *Signer) signMessage(ctx context.Context, msg []byte) ([]byte, error) {
	if s == nil || s.sv == nil {
		return nil, errors.New("sign: no signer")
	}
	return s.sv.SignMessage(bytes.NewReader(msg), options.WithContext(ctx))
}
