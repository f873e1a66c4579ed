package signtest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"
)

// Rekor is a transparency log on loopback that answers Rekor's REST API v1
// as Rekor does for the two entry kinds cosign makes: POST
// /api/v1/log/entries takes a hashedrekord (v0.0.1) or dsse (v0.0.1)
// entry, checks its signature, stores the canonical entry Rekor would, and
// answers with it, its integrated time, index and log ID and the signed
// entry timestamp: the log's ECDSA signature over the SHA-256 of the
// canonical JSON of {body, integratedTime, logID, logIndex}. GET
// /api/v1/log/publicKey serves the log's public key. An entry made again
// is refused with 409 and its location, /api/v1/log/entries/UUID, where
// GET serves it. It keeps no Merkle
// tree: there are no inclusion proofs, which cosign does not need to
// verify offline.
type Rekor struct {
	*httptest.Server
	Key *ecdsa.PrivateKey
	// PublicKeyPEM is the log's public key, PEM; KeyFile holds it.
	PublicKeyPEM []byte
	KeyFile      string
	// Now is the integrated time of new entries; nil means time.Now.
	Now func() time.Time
	// Fail makes every upload fail with 500.
	Fail bool

	mu      sync.Mutex
	entries [][]byte
	// answers are the entries by UUID, as GET serves them.
	answers map[string][]byte
}

// NewRekor starts a fake log with a fresh P-256 key, written to a file in
// t's temporary directory.
func NewRekor(t *testing.T) *Rekor {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r := &Rekor{Key: key}
	if r.PublicKeyPEM, err = cryptoutils.MarshalPublicKeyToPEM(key.Public()); err != nil {
		t.Fatal(err)
	}
	r.KeyFile = filepath.Join(t.TempDir(), "rekor.pub")
	if err := os.WriteFile(r.KeyFile, r.PublicKeyPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// Entries are the canonical bodies of the entries made, in order.
func (r *Rekor) Entries() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.entries...)
}

func (r *Rekor) serve(w http.ResponseWriter, req *http.Request) {
	switch {
	case req.Method == http.MethodGet && req.URL.Path == "/api/v1/log/publicKey":
		w.Header().Set("Content-Type", "application/x-pem-file")
		w.Write(r.PublicKeyPEM)
	case req.Method == http.MethodGet && strings.HasPrefix(req.URL.Path, "/api/v1/log/entries/"):
		r.mu.Lock()
		answer, ok := r.answers[strings.TrimPrefix(req.URL.Path, "/api/v1/log/entries/")]
		r.mu.Unlock()
		if !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	case req.Method == http.MethodPost && req.URL.Path == "/api/v1/log/entries":
		if r.Fail {
			http.Error(w, `{"code":500,"message":"the log is down"}`, http.StatusInternalServerError)
			return
		}
		var e struct {
			Kind       string          `json:"kind"`
			APIVersion string          `json:"apiVersion"`
			Spec       json.RawMessage `json:"spec"`
		}
		if err := json.NewDecoder(req.Body).Decode(&e); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var spec any
		var err error
		switch {
		case e.Kind == "hashedrekord" && e.APIVersion == "0.0.1":
			spec, err = canonicalHashedRekord(e.Spec)
		case e.Kind == "dsse" && e.APIVersion == "0.0.1":
			spec, err = canonicalDSSE(e.Spec)
		default:
			err = fmt.Errorf("entry kind %s %s not served", e.Kind, e.APIVersion)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body := canonicalJSON(map[string]any{"apiVersion": e.APIVersion, "kind": e.Kind, "spec": spec})
		uuid := uuidOf(body)
		r.mu.Lock()
		_, exists := r.answers[uuid]
		r.mu.Unlock()
		if exists {
			w.Header().Set("Location", "/api/v1/log/entries/"+uuid)
			http.Error(w, `{"code":409,"message":"an equivalent entry already exists in the transparency log"}`, http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write(r.integrate(body))
	default:
		http.Error(w, "not found", http.StatusNotFound)
	}
}

// integrate appends body to the log and is the answer: {uuid: entry}.
func (r *Rekor) integrate(body []byte) []byte {
	r.mu.Lock()
	index := int64(len(r.entries))
	r.entries = append(r.entries, body)
	r.mu.Unlock()
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	der, _ := x509.MarshalPKIXPublicKey(r.Key.Public())
	id := sha256.Sum256(der)
	logID := hex.EncodeToString(id[:])
	b64 := base64.StdEncoding.EncodeToString(body)
	t := now().Unix()
	// What Rekor signs, with its keys in the canonical (sorted) order.
	set := canonicalJSON(map[string]any{"body": b64, "integratedTime": t, "logID": logID, "logIndex": index})
	sum := sha256.Sum256(set)
	sig, _ := ecdsa.SignASN1(rand.Reader, r.Key, sum[:])
	uuid := uuidOf(body)
	answer := canonicalJSON(map[string]any{uuid: map[string]any{
		"body": b64, "integratedTime": t, "logID": logID, "logIndex": index,
		"verification": map[string]any{"signedEntryTimestamp": base64.StdEncoding.EncodeToString(sig)},
	}})
	r.mu.Lock()
	if r.answers == nil {
		r.answers = map[string][]byte{}
	}
	r.answers[uuid] = answer
	r.mu.Unlock()
	return answer
}

// uuidOf names an entry by its content, so that the same entry made
// twice is found: Rekor names it by its Merkle leaf hash.
func uuidOf(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// canonicalJSON is v as RFC 8785 JSON for the values here (maps, strings
// without characters to escape, integers): encoding/json sorts map keys.
func canonicalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// verifierOf reads a PEM public key or certificate as Rekor does.
func verifierOf(pemBytes []byte) (signature.Verifier, error) {
	var pub crypto.PublicKey
	if certs, err := cryptoutils.UnmarshalCertificatesFromPEM(pemBytes); err == nil && len(certs) == 1 {
		pub = certs[0].PublicKey
	} else if pub, err = cryptoutils.UnmarshalPEMToPublicKey(pemBytes); err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
	}
	return signature.LoadVerifier(pub, crypto.SHA256)
}

// canonicalHashedRekord checks a hashedrekord's signature over its hash and
// is the spec Rekor stores: the same fields.
func canonicalHashedRekord(raw []byte) (any, error) {
	var s struct {
		Data struct {
			Hash struct {
				Algorithm string `json:"algorithm"`
				Value     string `json:"value"`
			} `json:"hash"`
		} `json:"data"`
		Signature struct {
			Content   []byte `json:"content"`
			PublicKey struct {
				Content []byte `json:"content"`
			} `json:"publicKey"`
		} `json:"signature"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	digest, err := hex.DecodeString(s.Data.Hash.Value)
	if err != nil || s.Data.Hash.Algorithm != "sha256" || len(digest) != sha256.Size {
		return nil, fmt.Errorf("hash: want a sha256")
	}
	ver, err := verifierOf(s.Signature.PublicKey.Content)
	if err != nil {
		return nil, err
	}
	if err := ver.VerifySignature(bytes.NewReader(s.Signature.Content), nil, options.WithDigest(digest)); err != nil {
		return nil, fmt.Errorf("the signature does not verify: %w", err)
	}
	return map[string]any{
		"data": map[string]any{"hash": map[string]any{"algorithm": "sha256", "value": s.Data.Hash.Value}},
		"signature": map[string]any{
			"content":   base64.StdEncoding.EncodeToString(s.Signature.Content),
			"publicKey": map[string]any{"content": base64.StdEncoding.EncodeToString(s.Signature.PublicKey.Content)},
		},
	}, nil
}

// canonicalDSSE checks a proposed DSSE envelope's signature and is the
// spec Rekor stores instead of the envelope: the hashes of the envelope
// and of its payload, and the signature with its verifier.
func canonicalDSSE(raw []byte) (any, error) {
	var s struct {
		ProposedContent struct {
			Envelope  string   `json:"envelope"`
			Verifiers [][]byte `json:"verifiers"`
		} `json:"proposedContent"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if len(s.ProposedContent.Verifiers) != 1 {
		return nil, fmt.Errorf("want one verifier")
	}
	ver, err := verifierOf(s.ProposedContent.Verifiers[0])
	if err != nil {
		return nil, err
	}
	env := []byte(s.ProposedContent.Envelope)
	if err := dsse.WrapVerifier(ver).VerifySignature(bytes.NewReader(env), nil); err != nil {
		return nil, fmt.Errorf("the envelope does not verify: %w", err)
	}
	var e struct {
		Payload    string `json:"payload"`
		Signatures []struct {
			Sig string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(env, &e); err != nil || len(e.Signatures) != 1 {
		return nil, fmt.Errorf("envelope: want one signature")
	}
	payload, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		return nil, err
	}
	envSum, paySum := sha256.Sum256(env), sha256.Sum256(payload)
	return map[string]any{
		"envelopeHash": map[string]any{"algorithm": "sha256", "value": hex.EncodeToString(envSum[:])},
		"payloadHash":  map[string]any{"algorithm": "sha256", "value": hex.EncodeToString(paySum[:])},
		"signatures": []any{map[string]any{
			"signature": e.Signatures[0].Sig,
			"verifier":  base64.StdEncoding.EncodeToString(s.ProposedContent.Verifiers[0]),
		}},
	}, nil
}
