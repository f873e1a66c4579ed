package sign

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// DefaultFulcioURL is the public-good Fulcio instance.
const DefaultFulcioURL = "https://fulcio.sigstore.dev"

// KeylessOptions configure a keyless signer.
type KeylessOptions struct {
	// FulcioURL is the certificate authority; "" means DefaultFulcioURL.
	FulcioURL string
	// Token is the OIDC identity token for Fulcio; "" means the GitHub
	// Actions workflow's (GitHubActionsToken).
	Token string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Getenv reads the Actions environment; nil means os.Getenv.
	Getenv func(string) string
}

// Keyless makes a signer for one publish: an ephemeral P-256 key and the
// certificate Fulcio issues for it in exchange for an OIDC identity token
// (Fulcio's v2 REST API, POST /api/v2/signingCert). The key never leaves
// the process. No transparency log entry is made: a verifier checks the
// certificate against the time it verifies at, so the signature verifies
// only while the certificate is valid (see docs/security.md).
func Keyless(ctx context.Context, o KeylessOptions) (*Signer, error) {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.FulcioURL == "" {
		o.FulcioURL = DefaultFulcioURL
	}
	token := o.Token
	if token == "" {
		var err error
		if token, err = GitHubActionsToken(ctx, o.Client, o.Getenv); err != nil {
			return nil, err
		}
	}
	s, _, err := newEphemeral()
	if err != nil {
		return nil, err
	}
	body, err := fulcioRequest(s, token)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(o.FulcioURL, "/")+"/api/v2/signingCert", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := o.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fulcio: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("fulcio: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("fulcio %s: %s: %s", o.FulcioURL, resp.Status, strings.TrimSpace(string(data)))
	}
	var out struct {
		Embedded *struct {
			Chain struct {
				Certificates []string `json:"certificates"`
			} `json:"chain"`
		} `json:"signedCertificateEmbeddedSct"`
		Detached *struct {
			Chain struct {
				Certificates []string `json:"certificates"`
			} `json:"chain"`
		} `json:"signedCertificateDetachedSct"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("fulcio: answer: %w", err)
	}
	var chain []string
	switch {
	case out.Embedded != nil:
		chain = out.Embedded.Chain.Certificates
	case out.Detached != nil:
		chain = out.Detached.Chain.Certificates
	}
	if len(chain) == 0 {
		return nil, errors.New("fulcio: the answer holds no certificate")
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM([]byte(chain[0]))
	if err != nil || len(certs) != 1 {
		return nil, errors.New("fulcio: the leaf is not one PEM certificate")
	}
	if err := cryptoutils.EqualKeys(certs[0].PublicKey, s.PublicKey()); err != nil {
		return nil, errors.New("fulcio: the certificate is for another key")
	}
	s.cert = []byte(chain[0])
	s.chain = []byte(strings.Join(chain[1:], ""))
	return s, nil
}

// fulcioRequest is the body of a v2 signingCert request: the token, the
// public key, and the proof that the caller holds the private key, a
// signature over the token's subject (its email claim when it has one).
func fulcioRequest(s *Signer, token string) ([]byte, error) {
	subject, err := tokenSubject(token)
	if err != nil {
		return nil, err
	}
	proof, err := s.sv.SignMessage(bytes.NewReader([]byte(subject)))
	if err != nil {
		return nil, err
	}
	pub, err := s.PublicKeyPEM()
	if err != nil {
		return nil, err
	}
	type publicKey struct {
		Algorithm string `json:"algorithm"`
		Content   string `json:"content"`
	}
	var req struct {
		Credentials struct {
			OIDCIdentityToken string `json:"oidcIdentityToken"`
		} `json:"credentials"`
		PublicKeyRequest struct {
			PublicKey         publicKey `json:"publicKey"`
			ProofOfPossession string    `json:"proofOfPossession"`
		} `json:"publicKeyRequest"`
	}
	req.Credentials.OIDCIdentityToken = token
	req.PublicKeyRequest.PublicKey = publicKey{Algorithm: "ECDSA", Content: string(pub)}
	req.PublicKeyRequest.ProofOfPossession = base64.StdEncoding.EncodeToString(proof)
	return json.Marshal(req)
}

// tokenSubject reads the subject Fulcio asks the proof of possession for
// from a JWT's claims (unverified: Fulcio verifies the token).
func tokenSubject(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", errors.New("OIDC token: not a JWT")
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return "", fmt.Errorf("OIDC token claims: %w", err)
	}
	var claims struct {
		Sub   string `json:"sub"`
		Email string `json:"email"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return "", fmt.Errorf("OIDC token claims: %w", err)
	}
	if claims.Email != "" {
		return claims.Email, nil
	}
	if claims.Sub == "" {
		return "", errors.New("OIDC token: no sub claim")
	}
	return claims.Sub, nil
}

// GitHubActionsToken asks the Actions runtime for the workflow's OIDC
// token with the audience "sigstore". The workflow needs `permissions:
// id-token: write`, which sets ACTIONS_ID_TOKEN_REQUEST_URL and
// ACTIONS_ID_TOKEN_REQUEST_TOKEN.
func GitHubActionsToken(ctx context.Context, client *http.Client, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if client == nil {
		client = http.DefaultClient
	}
	reqURL, bearer := getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if reqURL == "" || bearer == "" {
		return "", errors.New("keyless signing needs the GitHub Actions OIDC token: run in a workflow with `permissions: id-token: write`")
	}
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", fmt.Errorf("ACTIONS_ID_TOKEN_REQUEST_URL: %w", err)
	}
	q := u.Query()
	q.Set("audience", "sigstore")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("the Actions OIDC token: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the Actions OIDC token: %s", resp.Status)
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil || out.Value == "" {
		return "", errors.New("the Actions OIDC token: no token in the answer")
	}
	return out.Value, nil
}
