package sign_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

func TestKeylessSignAndVerify(t *testing.T) {
	fulcio := signtest.NewFulcio(t)
	ctx := context.Background()
	s, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Keyless() || len(fulcio.Requests) != 1 {
		t.Fatalf("keyless signer: cert %q, %d requests", s.Certificate(), len(fulcio.Requests))
	}
	img := publishSigned(t, s)
	ok := sign.VerifyOptions{IgnoreLog: true, Identity: signtest.Identity, Issuer: signtest.ActionsIssuer, Roots: fulcio.Roots, PredicateTypes: both}
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
			`certificate identity "` + signtest.Identity + `", want "https://github.com/evil/fork`},
		{"another issuer", func(o *sign.VerifyOptions) { o.Issuer = "https://accounts.google.com" },
			`certificate OIDC issuer "` + signtest.ActionsIssuer + `", want "https://accounts.google.com"`},
		{"another root", func(o *sign.VerifyOptions) { o.Roots = signtest.NewFulcio(t).Roots },
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
	fulcio := signtest.NewFulcio(t)
	_, err = sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL, Token: "not-a-jwt"})
	if err == nil || !strings.Contains(err.Error(), "OIDC token: not a JWT") {
		t.Fatalf("a bad token: %v", err)
	}
	_, err = sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL + "/elsewhere", Token: signtest.ActionsToken()})
	if err == nil || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("a wrong Fulcio: %v", err)
	}
}

// TestKeylessSignedByForeignCA: a registry writer who signs the digest
// first, with a certificate from a CA of their own that names the same
// identity and issuer, does not make the publisher's "already signed"
// true; a signature by the publisher's own Fulcio does.
func TestKeylessSignedByForeignCA(t *testing.T) {
	ctx := context.Background()
	ours := signtest.NewFulcio(t)
	signer, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: ours.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: signtest.NewFulcio(t).URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	img := publishSigned(t, theirs)
	if ok, err := sign.SignedBy(ctx, img.digest, signer); err != nil || ok {
		t.Fatalf("SignedBy with the foreign CA's signature alone = %v, %v; want false", ok, err)
	}
	if err := sign.SignImage(ctx, signer, img.digest); err != nil {
		t.Fatal(err)
	}
	if ok, err := sign.SignedBy(ctx, img.digest, signer); err != nil || !ok {
		t.Fatalf("SignedBy with the publisher's own signature = %v, %v; want true", ok, err)
	}
	// Another certificate of the same Fulcio, for the same identity, is
	// the same signer's: a publish run again does not sign again.
	again, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: ours.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sign.SignedBy(ctx, img.digest, again); err != nil || !ok {
		t.Fatalf("SignedBy with a new certificate of the same Fulcio = %v, %v; want true", ok, err)
	}
}
