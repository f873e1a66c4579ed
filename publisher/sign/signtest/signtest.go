// Package signtest holds what tests of signing use: a fake Fulcio on
// loopback (NewFulcio) that issues certificates as Fulcio does for a
// GitHub Actions token, the Actions environment that hands a job its OIDC
// token (ActionsEnv, ActionsToken), an attacker's edit of a stored
// attestation (TamperAttestation), and two key management services: a
// sigstore KMS plugin played by the test binary itself (KMSPlugin,
// ServeKMSPlugin) and a fake HashiCorp Vault transit engine on loopback
// (NewVault).
package signtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// The identity of the workflow ActionsToken stands for.
const (
	ActionsIssuer = "https://token.actions.githubusercontent.com"
	WorkflowRef   = "example/catalog/.github/workflows/publish.yaml@refs/heads/main"
	Identity      = "https://github.com/" + WorkflowRef
)

// Fulcio is a certificate authority on loopback that answers Fulcio's
// v2 signingCert request the way Fulcio does for a GitHub Actions token:
// it checks the proof of possession and issues a code-signing certificate
// naming the workflow and the issuer. It trusts the token's claims, which
// the real Fulcio verifies against the issuer.
type Fulcio struct {
	*httptest.Server
	// Roots trust its root; RootsPEM is the root as PEM.
	Roots    *x509.CertPool
	RootsPEM []byte
	// Requests holds the decoded request bodies.
	Requests []map[string]any
}

func NewFulcio(t *testing.T) *Fulcio {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake fulcio root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	f := &Fulcio{Roots: x509.NewCertPool()}
	f.Roots.AddCert(ca)
	f.RootsPEM, _ = cryptoutils.MarshalCertificateToPEM(ca)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/signingCert" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		var req struct {
			Credentials struct {
				OIDCIdentityToken string `json:"oidcIdentityToken"`
			} `json:"credentials"`
			PublicKeyRequest struct {
				PublicKey struct {
					Algorithm string `json:"algorithm"`
					Content   string `json:"content"`
				} `json:"publicKey"`
				ProofOfPossession string `json:"proofOfPossession"`
			} `json:"publicKeyRequest"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		claims := jwtClaims(t, req.Credentials.OIDCIdentityToken)
		pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(req.PublicKeyRequest.PublicKey.Content))
		if err != nil || req.PublicKeyRequest.PublicKey.Algorithm != "ECDSA" {
			http.Error(w, "bad public key", http.StatusBadRequest)
			return
		}
		proof, _ := base64.StdEncoding.DecodeString(req.PublicKeyRequest.ProofOfPossession)
		sum := sha256.Sum256([]byte(claims["sub"]))
		if !ecdsa.VerifyASN1(pub.(*ecdsa.PublicKey), sum[:], proof) {
			http.Error(w, "proof of possession does not verify", http.StatusBadRequest)
			return
		}
		issuer, _ := asn1.MarshalWithParams(claims["iss"], "utf8")
		san, _ := url.Parse("https://github.com/" + claims["job_workflow_ref"])
		leafTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(2),
			NotBefore:    time.Now().Add(-time.Minute), NotAfter: time.Now().Add(10 * time.Minute),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
			URIs: []*url.URL{san},
			// Fulcio writes the issuer twice: raw in the first
			// extension (what cosign reads), DER in its successor.
			ExtraExtensions: []pkix.Extension{
				{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(claims["iss"])},
				{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}, Value: issuer},
			},
		}
		leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, pub, caKey)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var raw map[string]any
		b, _ := json.Marshal(req)
		_ = json.Unmarshal(b, &raw)
		f.Requests = append(f.Requests, raw)
		leafPEM, _ := cryptoutils.MarshalCertificateToPEM(&x509.Certificate{Raw: leafDER})
		caPEM, _ := cryptoutils.MarshalCertificateToPEM(ca)
		json.NewEncoder(w).Encode(map[string]any{"signedCertificateEmbeddedSct": map[string]any{
			"chain": map[string]any{"certificates": []string{string(leafPEM), string(caPEM)}},
		}})
	}))
	t.Cleanup(f.Close)
	return f
}

// ActionsToken is an (unsigned) token with the claims of a GitHub Actions
// OIDC token that Fulcio reads.
func ActionsToken() string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]string{
		"iss": ActionsIssuer, "aud": "sigstore", "sub": "repo:example/catalog:ref:refs/heads/main",
		"job_workflow_ref": WorkflowRef,
	}) + ".c2ln"
}

func jwtClaims(t *testing.T, token string) map[string]string {
	parts := strings.Split(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]string
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Error(err)
	}
	return c
}

// ActionsEnv is the environment of a GitHub Actions job with
// `id-token: write`: its token endpoint is a server on loopback that
// answers ActionsToken for the audience "sigstore".
func ActionsEnv(t *testing.T) func(string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer runtime-token" || r.URL.Query().Get("audience") != "sigstore" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"value": ActionsToken()})
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{
		"ACTIONS_ID_TOKEN_REQUEST_URL":   srv.URL + "/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "runtime-token",
	}
	return func(k string) string { return env[k] }
}

// TamperAttestation rewrites the statement in the first DSSE envelope of
// the attestations at tag (a sha256-<hex>.att tag), keeping its signature,
// and pushes the result in its place: what someone with write access to
// the registry, and without the key, can do.
func TamperAttestation(t *testing.T, tag name.Tag, edit func(map[string]any)) {
	t.Helper()
	EditFirstLayer(t, tag, func(l v1.Layer, _ map[string]string) v1.Layer {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var env map[string]any
		if err := json.NewDecoder(rc).Decode(&env); err != nil {
			t.Fatal(err)
		}
		raw, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
		var st map[string]any
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatal(err)
		}
		edit(st)
		raw, _ = json.Marshal(st)
		env["payload"] = base64.StdEncoding.EncodeToString(raw)
		body, _ := json.Marshal(env)
		mt, err := l.MediaType()
		if err != nil {
			t.Fatal(err)
		}
		return static.NewLayer(body, mt)
	})
}

// EditFirstLayer pushes in place of the image at tag one whose first
// layer is what edit makes of it, with the annotations edit leaves in
// anns, and whose other layers stay byte for byte as they were: what
// someone with push access to the repository can do to a signature or an
// attestation.
func EditFirstLayer(t *testing.T, tag name.Tag, edit func(l v1.Layer, anns map[string]string) v1.Layer) {
	t.Helper()
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	out := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for i, d := range m.Layers {
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		anns := d.Annotations
		if i == 0 {
			anns = maps.Clone(d.Annotations)
			if anns == nil {
				anns = map[string]string{}
			}
			l = edit(l, anns)
		}
		if out, err = mutate.Append(out, mutate.Addendum{Layer: l, Annotations: anns, MediaType: d.MediaType}); err != nil {
			t.Fatal(err)
		}
	}
	if err := remote.Write(tag, out); err != nil {
		t.Fatal(err)
	}
}
