package sign_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

func TestMain(m *testing.M) {
	signtest.ServeKMSPlugin()
	os.Exit(m.Run())
}

func TestIsKMSRef(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"hashivault://catalog", true},
		{"awskms:///arn:aws:kms:us-east-1:123:key/abc", true},
		{"gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k", true},
		{"my-hsm.v2://key", true},
		{"cosign.key", false},
		{"/etc/catalogbot/cosign.key", false},
		{"./keys/a://b", false},
		{"hashivault://", false},
		{"://key", false},
		{"1kms://key", false},
	} {
		if got := sign.IsKMSRef(tc.key); got != tc.want {
			t.Errorf("IsKMSRef(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestKMSPlugin signs through sigstore's plugin protocol: the key is the
// plugin's, and every signature is made by the plugin process.
func TestKMSPlugin(t *testing.T) {
	kms := signtest.KMSPlugin(t, "testkms")
	ref, pubPEM := kms.NewKey(t, "k")
	s, err := sign.LoadKMS(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := cryptoutils.EqualKeys(pub, s.PublicKey()); err != nil {
		t.Fatalf("the signer's public key is not the KMS key's: %v", err)
	}
	img := publishSigned(t, s)
	// The public key read once, at load; then one signature for the
	// image and one for each attestation.
	want := []string{"k publicKey", "k signMessage", "k signMessage", "k signMessage"}
	if calls := kms.Calls(t); !slices.Equal(calls, want) {
		t.Fatalf("the plugin's calls: %q, want %q", calls, want)
	}

	ctx := context.Background()
	kmsPub, err := sign.KMSPublicKey(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	for what, key := range map[string]any{"the KMS's public key": kmsPub, "the exported public key": pub} {
		if _, err := sign.Verify(ctx, img.digest, sign.VerifyOptions{IgnoreLog: true, Key: key, PredicateTypes: both}); err != nil {
			t.Errorf("verify with %s: %v", what, err)
		}
	}
	if ok, err := sign.SignedBy(ctx, img.digest, s); err != nil || !ok {
		t.Errorf("SignedBy = %v, %v; want true", ok, err)
	}

	other, _ := kms.NewKey(t, "other")
	otherPub, err := sign.KMSPublicKey(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.Verify(ctx, img.digest, sign.VerifyOptions{IgnoreLog: true, Key: otherPub}); !errors.Is(err, sign.ErrNotVerified) {
		t.Fatalf("verify with another KMS key: %v, want %v", err, sign.ErrNotVerified)
	}
}

// TestKMSPluginContext: signing ends with the publish's context, and with
// it the plugin process.
func TestKMSPluginContext(t *testing.T) {
	kms := signtest.KMSPlugin(t, "testkms")
	ref, _ := kms.NewKey(t, "k")
	s, err := sign.LoadKMS(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	tag, err := name.NewTag(reg.Ref("team/catalog:v1"))
	if err != nil {
		t.Fatal(err)
	}
	d := tag.Context().Digest(registrytest.Push(t, tag.String(), registrytest.RandomImage(t)).String())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sign.SignImage(ctx, s, d); !errors.Is(err, context.Canceled) {
		t.Fatalf("SignImage after the context ended: %v, want %v", err, context.Canceled)
	}
	st, err := sign.NewStatement(d, sign.ProvenancePredicateType, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sign.Attest(ctx, s, d, st); !errors.Is(err, context.Canceled) {
		t.Fatalf("Attest after the context ended: %v, want %v", err, context.Canceled)
	}
	// The push would fail too; what counts is that no plugin ran.
	if calls := kms.Calls(t); !slices.Equal(calls, []string{"k publicKey"}) {
		t.Fatalf("the plugin ran after the context ended: %q", calls)
	}
}

func TestLoadKMSErrors(t *testing.T) {
	kms := signtest.KMSPlugin(t, "testkms")
	kms.NewKey(t, "k")
	for _, tc := range []struct {
		ref  string
		want []string
	}{
		{"testkms://missing", []string{"signing key testkms://missing: reading its public key:", `no key "missing" in this KMS`}},
		{"nosuchkms://k", []string{"signing key nosuchkms://k: no KMS provider for nosuchkms://", "catalogbot has hashivault://, openbao:// built in", "an executable named sigstore-kms-nosuchkms on $PATH"}},
	} {
		_, err := sign.LoadKMS(context.Background(), tc.ref)
		if err == nil {
			t.Errorf("LoadKMS(%s) succeeded", tc.ref)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("LoadKMS(%s) = %v, want it to say %q", tc.ref, err, w)
			}
		}
	}
}

// TestVault signs with a key of HashiCorp Vault's transit engine, through
// the provider compiled in.
func TestVault(t *testing.T) {
	if !slices.Contains(sign.CompiledKMSSchemes(), "hashivault://") {
		t.Fatalf("hashivault:// is not compiled in: %q", sign.CompiledKMSSchemes())
	}
	vault := signtest.NewVault(t)
	pubPEM := vault.NewKey(t, "catalog")
	ctx := context.Background()
	s, err := sign.LoadKMS(ctx, "hashivault://catalog")
	if err != nil {
		t.Fatal(err)
	}
	img := publishSigned(t, s)
	if n := vault.Signs(); n != 3 {
		t.Fatalf("Vault signed %d times, want 3", n)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{IgnoreLog: true, Key: pub, PredicateTypes: both}); err != nil {
		t.Fatalf("verify with the Vault key's public key: %v", err)
	}

	t.Run("errors", func(t *testing.T) {
		_, err := sign.LoadKMS(ctx, "hashivault://missing")
		if err == nil || !strings.Contains(err.Error(), "signing key hashivault://missing: reading its public key:") {
			t.Errorf("a missing key: %v", err)
		}
		t.Setenv("VAULT_TOKEN", "wrong")
		_, err = sign.LoadKMS(ctx, "hashivault://catalog")
		if err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("a wrong token: %v", err)
		}
	})
}
