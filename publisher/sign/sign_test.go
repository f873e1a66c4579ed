package sign_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// newKey is a cosign key pair, encrypted as cosign generate-key-pair
// writes it, loaded back through LoadKey.
func newKey(t *testing.T) *sign.Signer {
	t.Helper()
	priv, _, err := sign.GenerateKeyPair([]byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("generated key is not an encrypted sigstore key:\n%s", priv)
	}
	s, err := sign.LoadKey("cosign.key", priv, []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadKey(t *testing.T) {
	priv, _, err := sign.GenerateKeyPair([]byte("right"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, password string
		data           []byte
		want           string
	}{
		{"right password", "right", priv, ""},
		{"wrong password", "wrong", priv, "cosign.key: cannot decrypt the key (is COSIGN_PASSWORD its password?)"},
		{"not PEM", "", []byte("hello"), "cosign.key: not a PEM private key"},
		{"a public key", "", []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"), "unknown private key PEM file type: PUBLIC KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sign.LoadKey("cosign.key", tc.data, []byte(tc.password))
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// signed is an image in a fresh registry, signed and attested by s.
type signed struct {
	reg    *registrytest.Registry
	tag    name.Tag
	digest name.Digest
	signer *sign.Signer
}

func publishSigned(t *testing.T, s *sign.Signer) signed {
	t.Helper()
	reg := registrytest.New(t)
	tag, err := name.NewTag(reg.Ref("team/catalog:v1"))
	if err != nil {
		t.Fatal(err)
	}
	h := registrytest.Push(t, tag.String(), registrytest.RandomImage(t))
	d := tag.Context().Digest(h.String())
	ctx := context.Background()
	if err := sign.SignImage(ctx, s, d); err != nil {
		t.Fatal(err)
	}
	for _, pt := range []string{sign.ApprovalPredicateType, sign.ProvenancePredicateType} {
		st, err := sign.NewStatement(d, pt, map[string]any{"commit": "abc123"})
		if err != nil {
			t.Fatal(err)
		}
		if err := sign.Attest(ctx, s, d, st); err != nil {
			t.Fatal(err)
		}
	}
	return signed{reg: reg, tag: tag, digest: d, signer: s}
}

var both = []string{sign.ApprovalPredicateType, sign.ProvenancePredicateType}

func TestSignAndVerify(t *testing.T) {
	s := newKey(t)
	img := publishSigned(t, s)
	ctx := context.Background()

	for _, ref := range []name.Reference{img.tag, img.digest} {
		v, err := sign.Verify(ctx, ref, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey(), PredicateTypes: both})
		if err != nil {
			t.Fatalf("verify %s: %v", ref, err)
		}
		if v.Digest != img.digest || v.Signatures != 1 || len(v.Attestations) != 2 {
			t.Fatalf("verify %s = %+v", ref, v)
		}
		var pred map[string]string
		if err := json.Unmarshal(v.Attestations[sign.ApprovalPredicateType].Predicate, &pred); err != nil || pred["commit"] != "abc123" {
			t.Fatalf("approval predicate = %s (%v)", v.Attestations[sign.ApprovalPredicateType].Predicate, err)
		}
	}

	// The storage is cosign's: the tag scheme, the payload media type
	// and the annotation.
	sigImg, err := remote.Image(sign.Tag(img.digest, "sig"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := sigImg.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || len(m.Layers) != 1 || m.Layers[0].MediaType != sign.SimpleSigningMediaType || m.Layers[0].Annotations[sign.AnnSignature] == "" {
		t.Fatalf("signature manifest = %+v", m)
	}
	if want := "sha256-" + strings.TrimPrefix(img.digest.DigestStr(), "sha256:") + ".sig"; sign.Tag(img.digest, "sig").TagStr() != want {
		t.Fatalf("tag = %s, want %s", sign.Tag(img.digest, "sig").TagStr(), want)
	}

	// A second signature is added, not put in the place of the first.
	if err := sign.SignImage(ctx, s, img.digest); err != nil {
		t.Fatal(err)
	}
	v, err := sign.Verify(ctx, img.digest, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey()})
	if err != nil || v.Signatures != 2 {
		t.Fatalf("after a second signature: %+v, %v", v, err)
	}
}

func TestVerifyFailures(t *testing.T) {
	s := newKey(t)
	ctx := context.Background()

	t.Run("wrong key", func(t *testing.T) {
		img := publishSigned(t, s)
		other := newKey(t)
		_, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{IgnoreLog: true, Key: other.PublicKey()})
		wantErr(t, err, sign.ErrNotVerified, "no signature verifies with the key given (1 found)", "does not match the key")
	})

	t.Run("moved tag", func(t *testing.T) {
		img := publishSigned(t, s)
		// Someone pushes another image under the signed tag.
		registrytest.Push(t, img.tag.String(), registrytest.RandomImage(t))
		_, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey()})
		wantErr(t, err, sign.ErrUnsigned, img.tag.String()+" names sha256:", "was the tag moved")
	})

	t.Run("signature copied to another image", func(t *testing.T) {
		img := publishSigned(t, s)
		h := registrytest.Push(t, img.tag.String(), registrytest.RandomImage(t))
		other := img.tag.Context().Digest(h.String())
		sigs, err := remote.Image(sign.Tag(img.digest, "sig"))
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(sign.Tag(other, "sig"), sigs); err != nil {
			t.Fatal(err)
		}
		_, err = sign.Verify(ctx, img.tag, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey()})
		wantErr(t, err, sign.ErrNotVerified, "the signature is for "+img.digest.DigestStr()+", not "+h.String())
	})

	t.Run("tampered attestation", func(t *testing.T) {
		img := publishSigned(t, s)
		signtest.TamperAttestation(t, sign.Tag(img.digest, "att"), func(st map[string]any) {
			st["predicate"] = map[string]any{"commit": "evil"}
		})
		_, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey(), PredicateTypes: both})
		wantErr(t, err, sign.ErrAttestation, "no valid "+sign.ApprovalPredicateType+" attestation",
			"its DSSE signature does not match its content: altered, or signed with another key")
	})

	t.Run("attestation missing", func(t *testing.T) {
		reg := registrytest.New(t)
		tag, _ := name.NewTag(reg.Ref("team/catalog:v1"))
		h := registrytest.Push(t, tag.String(), registrytest.RandomImage(t))
		d := tag.Context().Digest(h.String())
		if err := sign.SignImage(ctx, s, d); err != nil {
			t.Fatal(err)
		}
		_, err := sign.Verify(ctx, tag, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey(), PredicateTypes: both})
		wantErr(t, err, sign.ErrAttestation, "no valid "+sign.ApprovalPredicateType+", "+sign.ProvenancePredicateType+" attestation")
	})

	t.Run("attestation about another image", func(t *testing.T) {
		img := publishSigned(t, s)
		h := registrytest.Push(t, img.tag.String(), registrytest.RandomImage(t))
		other := img.tag.Context().Digest(h.String())
		if err := sign.SignImage(ctx, s, other); err != nil {
			t.Fatal(err)
		}
		atts, err := remote.Image(sign.Tag(img.digest, "att"))
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(sign.Tag(other, "att"), atts); err != nil {
			t.Fatal(err)
		}
		_, err = sign.Verify(ctx, other, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey(), PredicateTypes: both})
		wantErr(t, err, sign.ErrAttestation, "the statement is about another image, not "+h.String())
	})
}

func wantErr(t *testing.T, err, sentinel error, parts ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("err = %v, want %v", err, sentinel)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q\ndoes not say %q", err, p)
		}
	}
}
