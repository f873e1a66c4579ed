package signtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// Vault is a fake HashiCorp Vault on loopback serving the transit engine
// endpoints sigstore's hashivault provider calls: read a key's public key
// (GET /v1/transit/keys/NAME), sign a digest with it (PUT or POST
// /v1/transit/sign/NAME/sha2-256; the client writes with PUT) and verify
// a signature of a digest (/v1/transit/verify/NAME/sha2-256, which
// cosign's verify --key hashivault://NAME asks). Requests must carry
// Token.
type Vault struct {
	URL, Token string

	mu    sync.Mutex
	keys  map[string]*ecdsa.PrivateKey
	signs int
}

// NewVault starts a fake Vault and sets $VAULT_ADDR and $VAULT_TOKEN to it,
// as the provider reads them (Env is the same for a child process).
func NewVault(t *testing.T) *Vault {
	t.Helper()
	v := &Vault{Token: "test-token", keys: map[string]*ecdsa.PrivateKey{}}
	srv := httptest.NewServer(http.HandlerFunc(v.serve))
	t.Cleanup(srv.Close)
	v.URL = srv.URL
	t.Setenv("VAULT_ADDR", srv.URL)
	t.Setenv("VAULT_TOKEN", v.Token)
	return v
}

// Env is the environment that points a process at the Vault.
func (v *Vault) Env() []string {
	return []string{"VAULT_ADDR=" + v.URL, "VAULT_TOKEN=" + v.Token}
}

// NewKey creates the transit key name (ECDSA P-256) and returns its public
// key as PEM.
func (v *Vault) NewKey(t *testing.T, name string) []byte {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	v.keys[name] = priv
	v.mu.Unlock()
	pub, err := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// Signs is the number of signatures the Vault made.
func (v *Vault) Signs() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.signs
}

func (v *Vault) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"errors": []string{msg}})
	}
	if r.Header.Get("X-Vault-Token") != v.Token {
		fail(http.StatusForbidden, "permission denied")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/transit/")
	if !ok {
		fail(http.StatusNotFound, "no handler for route "+r.URL.Path)
		return
	}
	op, rest, _ := strings.Cut(rest, "/")
	name, hash, _ := strings.Cut(rest, "/")
	v.mu.Lock()
	priv := v.keys[name]
	v.mu.Unlock()
	if priv == nil {
		// Vault answers a read of a missing key with 404 and no
		// errors, a write with an error.
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errors":[]}`))
			return
		}
		fail(http.StatusBadRequest, "signing key not found")
		return
	}
	switch {
	case op == "keys" && r.Method == http.MethodGet:
		pub, _ := cryptoutils.MarshalPublicKeyToPEM(priv.Public())
		reply(w, map[string]any{
			"type":           "ecdsa-p256",
			"latest_version": 1,
			"keys":           map[string]any{"1": map[string]any{"name": "P-256", "public_key": string(pub)}},
		})
	case op == "sign" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		var req struct {
			Input     string `json:"input"`
			Prehashed bool   `json:"prehashed"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		digest, err := base64.StdEncoding.DecodeString(req.Input)
		// Only what a signer over SHA-256 sends: the digest, hashed.
		if err != nil || !req.Prehashed || hash != "sha2-256" || len(digest) != 32 {
			fail(http.StatusBadRequest, "want a prehashed sha2-256 digest")
			return
		}
		sig, err := ecdsa.SignASN1(rand.Reader, priv, digest)
		if err != nil {
			fail(http.StatusInternalServerError, err.Error())
			return
		}
		v.mu.Lock()
		v.signs++
		v.mu.Unlock()
		reply(w, map[string]any{"signature": "vault:v1:" + base64.StdEncoding.EncodeToString(sig), "key_version": 1})
	case op == "verify" && (r.Method == http.MethodPut || r.Method == http.MethodPost):
		var req struct {
			Input     string `json:"input"`
			Prehashed bool   `json:"prehashed"`
			Signature string `json:"signature"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fail(http.StatusBadRequest, err.Error())
			return
		}
		digest, err := base64.StdEncoding.DecodeString(req.Input)
		if err != nil || !req.Prehashed || hash != "sha2-256" || len(digest) != 32 {
			fail(http.StatusBadRequest, "want a prehashed sha2-256 digest")
			return
		}
		sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(req.Signature, "vault:v1:"))
		if err != nil {
			fail(http.StatusBadRequest, "signature: "+err.Error())
			return
		}
		reply(w, map[string]any{"valid": ecdsa.VerifyASN1(&priv.PublicKey, digest, sig)})
	default:
		fail(http.StatusMethodNotAllowed, "unsupported operation "+r.Method+" "+op)
	}
}

func reply(w http.ResponseWriter, data map[string]any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": data})
}
