package sign_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/catalogbot/catalogbot/publisher/sign"
)

const (
	actionsIssuer = "https://token.actions.githubusercontent.com"
	workflowRef   = "example/catalog/.github/workflows/publish.yaml@refs/heads/main"
	identity      = "https://github.com/" + workflowRef
)

// fakeFulcio is a certificate authority on loopback that answers Fulcio's
// v2 signingCert request the way Fulcio does for a GitHub Actions token:
// it checks the proof of possession and issues a code-signing certificate
// naming the workflow and the issuer. It trusts the token's claims, which
// the real Fulcio verifies against the issuer.
type fakeFulcio struct {
	*httptest.Server
	roots *x509.CertPool
	// requests holds the decoded request bodies.
	requests []map[string]any
}

func newFakeFulcio(t *testing.T) *fakeFulcio {
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
	f := &fakeFulcio{roots: x509.NewCertPool()}
	f.roots.AddCert(ca)
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
			URIs:            []*url.URL{san},
			ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}, Value: issuer}},
		}
		leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, pub, caKey)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var raw map[string]any
		b, _ := json.Marshal(req)
		_ = json.Unmarshal(b, &raw)
		f.requests = append(f.requests, raw)
		leafPEM, _ := cryptoutils.MarshalCertificateToPEM(&x509.Certificate{Raw: leafDER})
		caPEM, _ := cryptoutils.MarshalCertificateToPEM(ca)
		json.NewEncoder(w).Encode(map[string]any{"signedCertificateEmbeddedSct": map[string]any{
			"chain": map[string]any{"certificates": []string{string(leafPEM), string(caPEM)}},
		}})
	}))
	t.Cleanup(f.Close)
	return f
}

// actionsToken is an (unsigned) token with the claims of a GitHub Actions
// OIDC token that Fulcio reads.
func actionsToken() string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]string{
		"iss": actionsIssuer, "aud": "sigstore", "sub": "repo:example/catalog:ref:refs/heads/main",
		"job_workflow_ref": workflowRef,
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

// fakeActions is the Actions runtime's token endpoint.
func fakeActions(t *testing.T) func(string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer runtime-token" || r.URL.Query().Get("audience") != "sigstore" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"value": actionsToken()})
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{
		"ACTIONS_ID_TOKEN_REQUEST_URL":   srv.URL + "/token?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "runtime-token",
	}
	return func(k string) string { return env[k] }
}

func TestKeylessSignAndVerify(t *testing.T) {
	fulcio := newFakeFulcio(t)
	ctx := context.Background()
	s, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL, Getenv: fakeActions(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Keyless() || len(fulcio.requests) != 1 {
		t.Fatalf("keyless signer: cert %q, %d requests", s.Certificate(), len(fulcio.requests))
	}
	img := publishSigned(t, s)
	ok := sign.VerifyOptions{Identity: identity, Issuer: actionsIssuer, Roots: fulcio.roots, PredicateTypes: both}
	v, err := sign.Verify(ctx, img.tag, ok)
	if err != nil {
		t.Fatal(err)
	}
	if v.Signatures != 1 || len(v.Attestations) != 2 {
		t.Fatalf("verified %+v", v)
	}

	for _, tc := range []struct {
		name string
		edit func(*sign.VerifyOptions)
		want string
	}{
		{"another identity", func(o *sign.VerifyOptions) {
			o.Identity = "https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main"
		},
			`certificate identity "` + identity + `", want "https://github.com/evil/fork`},
		{"another issuer", func(o *sign.VerifyOptions) { o.Issuer = "https://accounts.google.com" },
			`certificate OIDC issuer "` + actionsIssuer + `", want "https://accounts.google.com"`},
		{"another root", func(o *sign.VerifyOptions) { o.Roots = newFakeFulcio(t).roots },
			"certificate: x509: certificate signed by unknown authority"},
		{"expired certificate", func(o *sign.VerifyOptions) { o.Now = func() time.Time { return time.Now().Add(time.Hour) } },
			"certificate has expired or is not yet valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			_, err := sign.Verify(ctx, img.tag, o)
			wantErr(t, err, sign.ErrNotVerified, tc.want)
		})
	}
}

func TestKeylessErrors(t *testing.T) {
	ctx := context.Background()
	_, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: "http://127.0.0.1:1", Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "permissions: id-token: write") {
		t.Fatalf("without the Actions environment: %v", err)
	}
	fulcio := newFakeFulcio(t)
	_, err = sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL, Token: "not-a-jwt"})
	if err == nil || !strings.Contains(err.Error(), "OIDC token: not a JWT") {
		t.Fatalf("a bad token: %v", err)
	}
	_, err = sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL + "/elsewhere", Token: actionsToken()})
	if err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("a wrong Fulcio: %v", err)
	}
}
