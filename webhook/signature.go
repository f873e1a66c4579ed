package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// SignatureHeader is the only signature header accepted. GitHub's older
// X-Hub-Signature (HMAC-SHA1) is ignored: SHA-1 is not a signature we trust,
// and accepting either would let a downgrade pick the weaker one.
const SignatureHeader = "X-Hub-Signature-256"

const signaturePrefix = "sha256="

// Signature errors. None of them says which secret was tried or how close a
// guess came.
var (
	errNoSignature        = errors.New("missing " + SignatureHeader + " header")
	errMalformedSignature = errors.New(SignatureHeader + " is not sha256=<64 hex digits>")
	errBadSignature       = errors.New(SignatureHeader + " does not match the body under any configured webhook secret")
	errNoSecret           = errors.New("no webhook secret configured")
)

// verifySignature checks header, an X-Hub-Signature-256 value, against the
// HMAC-SHA256 of the raw body under each of secrets. More than one secret
// is how a secret is rotated: the new one is added, GitHub is switched over,
// then the old one is removed. Every secret is tried even after a match so
// that the time taken does not tell which one matched; each comparison is
// constant time (hmac.Equal).
func verifySignature(secrets [][]byte, header string, body []byte) error {
	if len(secrets) == 0 {
		return errNoSecret
	}
	if header == "" {
		return errNoSignature
	}
	hexSum, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok || len(hexSum) != 2*sha256.Size {
		return errMalformedSignature
	}
	want := make([]byte, sha256.Size)
	if _, err := hex.Decode(want, []byte(hexSum)); err != nil {
		return errMalformedSignature
	}
	match := false
	for _, secret := range secrets {
		if len(secret) == 0 {
			continue // an empty key would make a signature anyone can compute
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		if hmac.Equal(mac.Sum(nil), want) {
			match = true
		}
	}
	if !match {
		return errBadSignature
	}
	return nil
}
