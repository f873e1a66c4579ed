package webhook

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// hmacHex computes the signature independently of Sign, so that a bug in
// Sign cannot hide one in VerifySignature.
func hmacHex(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestVerifySignature(t *testing.T) {
	secret := []byte("0123456789abcdef-current")
	old := []byte("0123456789abcdef-previous")
	body := readPayload(t, "pull_request.opened.12.json")
	good := "sha256=" + hmacHex(secret, body)
	altered := append([]byte(nil), body...)
	altered[len(altered)/2] ^= 1
	sha1mac := hmac.New(sha1.New, secret)
	sha1mac.Write(body)

	tests := []struct {
		name    string
		secrets [][]byte
		header  string
		body    []byte
		want    error
	}{
		{"good", [][]byte{secret}, good, body, nil},
		{"wrong secret", [][]byte{[]byte("0123456789abcdef-wrong")}, good, body, errBadSignature},
		{"rotation: second secret matches", [][]byte{old, secret}, good, body, nil},
		{"rotation: first secret matches", [][]byte{secret, old}, good, body, nil},
		{"rotation: neither matches", [][]byte{old, []byte("0123456789abcdef-other")}, good, body, errBadSignature},
		{"sha1 signature only", [][]byte{secret}, "sha1=" + hex.EncodeToString(sha1mac.Sum(nil)), body, errMalformedSignature},
		{"no header", [][]byte{secret}, "", body, errNoSignature},
		{"no prefix", [][]byte{secret}, hmacHex(secret, body), body, errMalformedSignature},
		{"upper-case prefix", [][]byte{secret}, "SHA256=" + hmacHex(secret, body), body, errMalformedSignature},
		{"not hex", [][]byte{secret}, "sha256=" + strings.Repeat("zz", 32), body, errMalformedSignature},
		{"short", [][]byte{secret}, good[:len(good)-2], body, errMalformedSignature},
		{"trailing data", [][]byte{secret}, good + "00", body, errMalformedSignature},
		{"body altered by one bit", [][]byte{secret}, good, altered, errBadSignature},
		{"body truncated by one byte", [][]byte{secret}, good, body[:len(body)-1], errBadSignature},
		{"empty body signed", [][]byte{secret}, "sha256=" + hmacHex(secret, nil), nil, nil},
		{"empty body, signature of another", [][]byte{secret}, good, nil, errBadSignature},
		{"no secrets", nil, good, body, errNoSecret},
		{"only an empty secret", [][]byte{{}}, "sha256=" + hmacHex(nil, body), body, errBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := verifySignature(tc.secrets, tc.header, tc.body); !errors.Is(err, tc.want) {
				t.Fatalf("VerifySignature = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSignMatchesGitHub(t *testing.T) {
	// The example from GitHub's "Validating webhook deliveries" page.
	got := sign([]byte("It's a Secret to Everybody"), []byte("Hello, World!"))
	want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// sign returns the X-Hub-Signature-256 value GitHub sends for body under
// secret. The tests use it to make deliveries.
func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return signaturePrefix + hex.EncodeToString(mac.Sum(nil))
}
