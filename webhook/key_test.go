package webhook

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPrivateKey: an RSA key (PKCS #1 or #8) is the App's key; any
// other key is refused with a message that says what it is and what to use
// instead, never the JWT library's advice to call another Go function, and
// never the key itself.
func TestReadPrivateKey(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	encode := func(typ string, der []byte, headers map[string]string) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Headers: headers, Bytes: der}))
	}
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	ecDER, err := x509.MarshalECPrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	const fix = "use the .pem file that the App's settings page gives"
	tests := []struct {
		name string
		pem  string
		want string // "" for accepted; else a part of the error
	}{
		{"RSA PKCS #1", encode("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey), nil), ""},
		{"RSA PKCS #8", encode("PRIVATE KEY", pkcs8(rsaKey), nil), ""},
		{"EC SEC 1", encode("EC PRIVATE KEY", ecDER, nil), "holds an EC (ECDSA) key; GitHub App keys are RSA: " + fix},
		{"EC PKCS #8", encode("PRIVATE KEY", pkcs8(ecKey), nil), "holds an EC (ECDSA) key; GitHub App keys are RSA"},
		{"Ed25519", encode("PRIVATE KEY", pkcs8(edKey), nil), "holds an Ed25519 key; GitHub App keys are RSA"},
		{"public key", encode("PUBLIC KEY", pubDER, nil), "holds a public key, not a private key"},
		{"encrypted", encode("RSA PRIVATE KEY", []byte("x"), map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00"}), "is encrypted"},
		{"damaged", encode("RSA PRIVATE KEY", []byte("not der"), nil), "its RSA PRIVATE KEY block does not parse as one"},
		{"PKCS #8 labelled PKCS #1", encode("RSA PRIVATE KEY", pkcs8(rsaKey), nil), "its RSA PRIVATE KEY block does not parse as one"},
		{"not PEM", "ssh-ed25519 AAAA", "is not PEM text"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".pem")
			if err := os.WriteFile(file, []byte(tc.pem), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, c := range []*Config{{PrivateKey: []byte(tc.pem)}, {PrivateKeyFile: file}} {
				got, err := c.ReadPrivateKey()
				source := EnvPrivateKey
				if c.PrivateKeyFile != "" {
					source = "private key file " + file
				}
				switch {
				case tc.want == "" && err != nil:
					t.Fatalf("%s: %v", source, err)
				case tc.want == "" && string(got) != tc.pem:
					t.Fatalf("%s: the key came back changed", source)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), source)):
					t.Fatalf("%s: error %v, want one naming it and saying %q", source, err, tc.want)
				case err != nil && (strings.Contains(err.Error(), "Parse") || strings.Contains(err.Error(), "BEGIN RSA PRIVATE KEY-----\n")):
					t.Fatalf("%s: the error speaks Go or quotes the key: %v", source, err)
				}
			}
		})
	}
}
