package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// DefaultRekorURL is the public-good Rekor transparency log, where cosign
// uploads by default.
const DefaultRekorURL = "https://rekor.sigstore.dev"

// AnnBundle is the annotation of a signature or attestation layer that
// holds its transparency log entry, as cosign writes it (Bundle).
const AnnBundle = "dev.sigstore.cosign/bundle"

// The Rekor entry kinds cosign makes: hashedrekord for an image signature,
// dsse (cosign 2's default --rekor-entry-type) for an attestation.
const (
	kindHashedRekord = "hashedrekord"
	kindDSSE         = "dsse"
	entryVersion     = "0.0.1"
)

// ErrLog: a signature's transparency log entry is missing, does not verify
// with the log's key, or records another signature.
var ErrLog = errors.New("transparency log entry does not verify")

// Rekor is a Rekor transparency log that signatures are uploaded to
// (Signer.WithLog). Only the two calls a signer needs are made, over
// Rekor's REST API v1: the entry is built with Rekor's own models.
type Rekor struct {
	// URL is the log, such as DefaultRekorURL.
	URL string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
}

// Bundle is a transparency log entry as cosign keeps it in the AnnBundle
// annotation: the log's signed entry timestamp (SET) over Payload, which
// verifies offline with the log's public key.
type Bundle struct {
	SignedEntryTimestamp []byte
	Payload              BundlePayload
}

// BundlePayload is what the SET signs: the entry's body (base64 of the
// canonical JSON entry), when the log integrated it (Unix seconds), its
// index, and the log's ID (the hex SHA-256 of its DER public key).
type BundlePayload struct {
	Body           string `json:"body"`
	IntegratedTime int64  `json:"integratedTime"`
	LogIndex       int64  `json:"logIndex"`
	LogID          string `json:"logID"`
}

func (r *Rekor) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return http.DefaultClient
}

func (r *Rekor) endpoint(path string) string {
	return strings.TrimSuffix(r.URL, "/") + path
}

// hashedRekordEntry is the entry of an image signature: the payload's
// SHA-256, the signature and the signer's public key or certificate PEM.
func hashedRekordEntry(payload, sig, pubPEM []byte) models.ProposedEntry {
	sum := sha256.Sum256(payload)
	alg, hexSum, version := models.HashedrekordV001SchemaDataHashAlgorithmSha256, hex.EncodeToString(sum[:]), entryVersion
	return &models.Hashedrekord{
		APIVersion: &version,
		Spec: models.HashedrekordV001Schema{
			Data: &models.HashedrekordV001SchemaData{Hash: &models.HashedrekordV001SchemaDataHash{Algorithm: &alg, Value: &hexSum}},
			Signature: &models.HashedrekordV001SchemaSignature{
				Content:   strfmt.Base64(sig),
				PublicKey: &models.HashedrekordV001SchemaSignaturePublicKey{Content: strfmt.Base64(pubPEM)},
			},
		},
	}
}

// dsseEntry is the entry of an attestation: the whole envelope and the
// signer's public key or certificate PEM; the log keeps their hashes.
func dsseEntry(envelope, pubPEM []byte) models.ProposedEntry {
	env, version := string(envelope), entryVersion
	return &models.DSSE{
		APIVersion: &version,
		Spec: models.DSSEV001Schema{
			ProposedContent: &models.DSSEV001SchemaProposedContent{Envelope: &env, Verifiers: []strfmt.Base64{pubPEM}},
		},
	}
}

// upload adds entry to the log and returns the log's answer as a bundle.
// An entry the log already holds (409, the same signature uploaded
// again) is read back from where the log says it is.
func (r *Rekor) upload(ctx context.Context, entry models.ProposedEntry) (*Bundle, error) {
	body, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	resp, data, err := r.do(ctx, http.MethodPost, r.endpoint("/api/v1/log/entries"), "application/json", body, 4<<20)
	if err != nil {
		return nil, r.errorf("%w", err)
	}
	switch {
	case resp.StatusCode == http.StatusConflict && resp.Header.Get("Location") != "":
		return r.get(ctx, resp.Header.Get("Location"))
	case resp.StatusCode != http.StatusCreated:
		return nil, r.errorf("%s: %s", resp.Status, strings.TrimSpace(string(data)))
	}
	return r.bundle(data)
}

// get reads an entry back from its location (an absolute path or URL).
func (r *Rekor) get(ctx context.Context, location string) (*Bundle, error) {
	if strings.HasPrefix(location, "/") {
		location = r.endpoint(location)
	}
	resp, data, err := r.do(ctx, http.MethodGet, location, "application/json", nil, 4<<20)
	if err != nil {
		return nil, r.errorf("%w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, r.errorf("read the existing entry %s: %s", location, resp.Status)
	}
	return r.bundle(data)
}

// bundle is the one entry of a log answer ({uuid: entry}) as a bundle.
func (r *Rekor) bundle(data []byte) (*Bundle, error) {
	var le models.LogEntry
	if err := json.Unmarshal(data, &le); err != nil {
		return nil, r.errorf("the answer: %w", err)
	}
	var entries []models.LogEntryAnon
	for _, e := range le {
		entries = append(entries, e)
	}
	if len(entries) != 1 {
		return nil, r.errorf("the answer holds %d entries, want 1", len(entries))
	}
	e := entries[0]
	body, _ := e.Body.(string)
	if body == "" || e.IntegratedTime == nil || e.LogIndex == nil || e.LogID == nil || e.Verification == nil || len(e.Verification.SignedEntryTimestamp) == 0 {
		return nil, r.errorf("the entry lacks its body, time, index, log ID or signed entry timestamp")
	}
	return &Bundle{
		SignedEntryTimestamp: e.Verification.SignedEntryTimestamp,
		Payload:              BundlePayload{Body: body, IntegratedTime: *e.IntegratedTime, LogIndex: *e.LogIndex, LogID: *e.LogID},
	}, nil
}

// do makes one request of the log, a JSON body when body is not nil,
// and reads at most limit bytes of the answer.
func (r *Rekor) do(ctx context.Context, method, url, accept string, body []byte, limit int64) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	resp, err := r.client().Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, nil, err
	}
	return resp, data, nil
}

func (r *Rekor) errorf(format string, args ...any) error {
	return fmt.Errorf("transparency log %s: "+format, append([]any{r.URL}, args...)...)
}

// PublicKey asks the log for its public key (GET /api/v1/log/publicKey),
// the key its SETs verify with. Trusting what a log serves is trusting the
// connection to it: a key file given out of band is stronger.
func (r *Rekor) PublicKey(ctx context.Context) (crypto.PublicKey, error) {
	resp, data, err := r.do(ctx, http.MethodGet, r.endpoint("/api/v1/log/publicKey"), "application/x-pem-file", nil, 1<<20)
	if err != nil {
		return nil, r.errorf("public key: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, r.errorf("public key: %s", resp.Status)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, r.errorf("public key: not a PEM public key: %w", err)
	}
	return pub, nil
}

// LogID is the ID of the log whose public key is pub, as Rekor and cosign
// compute it: the hex SHA-256 of the DER (PKIX) key.
func LogID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:]), nil
}

// SETMessage is what a log signs as the signed entry timestamp: the
// payload as canonical JSON (RFC 8785: keys sorted, no white space, no
// HTML escaping). Its values are a base64 string, a hex string and two
// integers, which Go's encoder writes as RFC 8785 does once keys are
// sorted (a map) and HTML escaping is off.
func SETMessage(p BundlePayload) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"body": p.Body, "integratedTime": p.IntegratedTime, "logIndex": p.LogIndex, "logID": p.LogID}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// verifySET checks b's SET with the key of the log b names, among keys.
func verifySET(b *Bundle, keys []crypto.PublicKey) error {
	var key *ecdsa.PublicKey
	for _, k := range keys {
		if id, err := LogID(k); err == nil && id == b.Payload.LogID {
			key, _ = k.(*ecdsa.PublicKey)
			if key == nil {
				return fmt.Errorf("the key of log %s is not an ECDSA key", short(b.Payload.LogID))
			}
		}
	}
	if key == nil {
		return fmt.Errorf("the entry is in log %s, whose key was not given", short(b.Payload.LogID))
	}
	msg, err := SETMessage(b.Payload)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(msg)
	if !ecdsa.VerifyASN1(key, sum[:], b.SignedEntryTimestamp) {
		return errors.New("the log's signed entry timestamp does not match the entry (altered, or signed by another log)")
	}
	return nil
}

// entryBody is a log entry's body, kind first: the spec is read by kind.
type entryBody struct {
	Kind       string          `json:"kind"`
	APIVersion string          `json:"apiVersion"`
	Spec       json.RawMessage `json:"spec"`
}

// checkEntry checks that the entry body records this layer: for an image
// signature (sig non-nil) a hashedrekord of the payload's hash, this
// signature and this key or certificate; for an attestation a dsse entry
// of this envelope and key or certificate. signerPEM is the PEM key or
// certificate the layer verified with.
func checkEntry(b *Bundle, payload, sig []byte, signerPEM []byte) error {
	raw, err := base64.StdEncoding.DecodeString(b.Payload.Body)
	if err != nil {
		return fmt.Errorf("entry body: %w", err)
	}
	var e entryBody
	if err := json.Unmarshal(raw, &e); err != nil {
		return fmt.Errorf("entry body: %w", err)
	}
	sum := sha256.Sum256(payload)
	wantHash := hex.EncodeToString(sum[:])
	want := kindDSSE
	if sig != nil {
		want = kindHashedRekord
	}
	if e.Kind != want || e.APIVersion != entryVersion {
		return fmt.Errorf("the entry is a %s %s, want %s %s", e.Kind, e.APIVersion, want, entryVersion)
	}
	var hash *string
	var alg *string
	var entryKey []byte
	switch want {
	case kindHashedRekord:
		var s models.HashedrekordV001Schema
		if err := json.Unmarshal(e.Spec, &s); err != nil || s.Data == nil || s.Data.Hash == nil || s.Signature == nil || s.Signature.PublicKey == nil {
			return errors.New("entry body: not a complete hashedrekord")
		}
		if !bytes.Equal(s.Signature.Content, sig) {
			return errors.New("the entry records another signature")
		}
		alg, hash, entryKey = s.Data.Hash.Algorithm, s.Data.Hash.Value, s.Signature.PublicKey.Content
	case kindDSSE:
		var s models.DSSEV001Schema
		if err := json.Unmarshal(e.Spec, &s); err != nil || s.EnvelopeHash == nil || len(s.Signatures) != 1 || s.Signatures[0].Verifier == nil {
			return errors.New("entry body: not a dsse entry of one signature")
		}
		alg, hash, entryKey = s.EnvelopeHash.Algorithm, s.EnvelopeHash.Value, *s.Signatures[0].Verifier
	}
	if alg == nil || hash == nil || *alg != "sha256" || *hash != wantHash {
		return errors.New("the entry records another payload")
	}
	if !samePEM(entryKey, signerPEM) {
		return errors.New("the entry records another key or certificate")
	}
	return nil
}

// samePEM compares two PEM blocks by their DER, as cosign does: line
// breaks and headers aside.
func samePEM(a, b []byte) bool {
	da, db := firstPEM(a), firstPEM(b)
	return da != nil && bytes.Equal(da, db)
}

// checkBundle verifies the layer's bundle: its SET with one of keys, and
// that its entry records this layer's payload, signature (nil for an
// attestation) and signer. It returns when the log integrated the entry.
func checkBundle(l layerEntry, sig, signerPEM []byte, keys []crypto.PublicKey) (time.Time, error) {
	raw := l.annotations[AnnBundle]
	if raw == "" {
		return time.Time{}, errors.New("not in a transparency log (signed with the log off? verify with --insecure-ignore-tlog)")
	}
	var b Bundle
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return time.Time{}, fmt.Errorf("bundle annotation: %w", err)
	}
	if len(keys) == 0 {
		return time.Time{}, errNoLogKey
	}
	if err := verifySET(&b, keys); err != nil {
		return time.Time{}, err
	}
	if err := checkEntry(&b, l.body, sig, signerPEM); err != nil {
		return time.Time{}, err
	}
	return time.Unix(b.Payload.IntegratedTime, 0), nil
}

// errNoLogKey: an entry to check and no log key to check it with.
var errNoLogKey = errors.New("the signatures are in a transparency log and no log key was given")

// firstPEM is the DER of the first PEM block of data, nil for none.
func firstPEM(data []byte) []byte {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil
	}
	return block.Bytes
}

// WithLog makes s upload each signature and attestation to log and keep
// the entry beside it, as cosign does by default; nil uploads nothing.
func (s *Signer) WithLog(log *Rekor) *Signer {
	if s != nil {
		s.log = log
	}
	return s
}

// Log is the transparency log s uploads to, nil for none.
func (s *Signer) Log() *Rekor { return s.log }

// signerPEM is what a log entry records as the signer: the certificate
// of a keyless signer, else the public key, PEM.
func (s *Signer) signerPEM() ([]byte, error) {
	if s.Keyless() {
		return s.cert, nil
	}
	return s.PublicKeyPEM()
}

// record uploads entry to s's log, checks that the entry the log made
// records this payload, signature and signer, and returns the bundle
// annotation's value; "" when s uploads nothing.
func (s *Signer) record(ctx context.Context, payload, sig []byte, entry func(pubPEM []byte) models.ProposedEntry) (string, error) {
	if s.log == nil {
		return "", nil
	}
	pubPEM, err := s.signerPEM()
	if err != nil {
		return "", err
	}
	b, err := s.log.upload(ctx, entry(pubPEM))
	if err != nil {
		return "", err
	}
	if err := checkEntry(b, payload, sig, pubPEM); err != nil {
		return "", s.log.errorf("the entry it made: %w", err)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return "", err
	}
	return string(raw), nil
}
