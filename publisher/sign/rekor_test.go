package sign_test

import (
	"context"
	"crypto"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// logKey is the fake log's public key as a verifier takes it.
func logKey(t *testing.T, r *signtest.Rekor) crypto.PublicKey {
	t.Helper()
	pub, err := (&sign.Rekor{URL: r.URL}).PublicKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// editLayer rewrites the annotations of the first layer at tag, as someone
// with push access to the repository could.
func editLayer(t *testing.T, tag name.Tag, edit func(map[string]string)) {
	t.Helper()
	signtest.EditFirstLayer(t, tag, func(l v1.Layer, anns map[string]string) v1.Layer {
		edit(anns)
		return l
	})
}

func firstAnnotations(t *testing.T, tag name.Tag) map[string]string {
	t.Helper()
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return m.Layers[0].Annotations
}

func TestLogSignAndVerify(t *testing.T) {
	ctx := context.Background()
	rekor := signtest.NewRekor(t)
	s := newKey(t).WithLog(&sign.Rekor{URL: rekor.URL})
	img := publishSigned(t, s)

	// One entry per signature and attestation, of the kinds cosign
	// makes, and each layer keeps its entry.
	var kinds []string
	for _, e := range rekor.Entries() {
		var body struct{ Kind, APIVersion string }
		if err := json.Unmarshal(e, &body); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, body.Kind+" "+body.APIVersion)
	}
	if got := strings.Join(kinds, ", "); got != "hashedrekord 0.0.1, dsse 0.0.1, dsse 0.0.1" {
		t.Fatalf("log entries: %s", got)
	}
	for _, suffix := range []string{sign.SignatureSuffix, sign.AttestationSuffix} {
		var b sign.Bundle
		if err := json.Unmarshal([]byte(firstAnnotations(t, sign.Tag(img.digest, suffix))[sign.AnnBundle]), &b); err != nil || len(b.SignedEntryTimestamp) == 0 || b.Payload.Body == "" {
			t.Fatalf(".%s bundle = %+v (%v)", suffix, b, err)
		}
	}

	key := logKey(t, rekor)
	ok := sign.VerifyOptions{Key: s.PublicKey(), LogKeys: []crypto.PublicKey{key}, PredicateTypes: both}
	if v, err := sign.Verify(ctx, img.tag, ok); err != nil || v.Signatures != 1 || len(v.Attestations) != 2 {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	// The log's key is needed to check what it holds, unless the log is
	// ignored.
	_, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{Key: s.PublicKey()})
	wantErr(t, err, sign.ErrNoLogKey, "its signatures are in a transparency log")
	if _, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{Key: s.PublicKey(), IgnoreLog: true, PredicateTypes: both}); err != nil {
		t.Fatal(err)
	}

	t.Run("signed with the log off", func(t *testing.T) {
		img := publishSigned(t, newKey(t))
		_, err := sign.Verify(ctx, img.tag, sign.VerifyOptions{Key: img.signer.PublicKey(), LogKeys: ok.LogKeys})
		wantErr(t, err, sign.ErrNotVerified, "not in a transparency log (signed with the log off? verify with --insecure-ignore-tlog)")
	})
	t.Run("another log's key", func(t *testing.T) {
		o := ok
		o.LogKeys = []crypto.PublicKey{logKey(t, signtest.NewRekor(t))}
		_, err := sign.Verify(ctx, img.tag, o)
		wantErr(t, err, sign.ErrNotVerified, "transparency log entry does not verify: the entry is in log ", "whose key was not given")
	})

	for _, tc := range []struct {
		name string
		edit func(t *testing.T, img signed, anns map[string]string)
		want string
	}{
		{"tampered bundle", func(t *testing.T, _ signed, anns map[string]string) {
			var b sign.Bundle
			if err := json.Unmarshal([]byte(anns[sign.AnnBundle]), &b); err != nil {
				t.Fatal(err)
			}
			b.Payload.IntegratedTime -= 3600
			raw, _ := json.Marshal(b)
			anns[sign.AnnBundle] = string(raw)
		}, "the log's signed entry timestamp does not match the entry (altered, or signed by another log)"},
		{"an entry of another signature", func(t *testing.T, img signed, anns map[string]string) {
			// The same key signs another image through the same log:
			// its entry is genuine, and records another signature.
			other := publishSigned(t, s)
			anns[sign.AnnBundle] = firstAnnotations(t, sign.Tag(other.digest, sign.SignatureSuffix))[sign.AnnBundle]
		}, "transparency log entry does not verify: the entry records another signature"},
		{"an attestation's entry", func(t *testing.T, img signed, anns map[string]string) {
			anns[sign.AnnBundle] = firstAnnotations(t, sign.Tag(img.digest, sign.AttestationSuffix))[sign.AnnBundle]
		}, "the entry is a dsse 0.0.1, want hashedrekord 0.0.1"},
		{"no bundle", func(t *testing.T, img signed, anns map[string]string) {
			delete(anns, sign.AnnBundle)
		}, "not in a transparency log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := publishSigned(t, s)
			tag := sign.Tag(img.digest, sign.SignatureSuffix)
			editLayer(t, tag, func(anns map[string]string) { tc.edit(t, img, anns) })
			_, err := sign.Verify(ctx, img.tag, ok)
			wantErr(t, err, sign.ErrNotVerified, tc.want)
		})
	}

	t.Run("tampered attestation bundle", func(t *testing.T) {
		img := publishSigned(t, s)
		other := publishSigned(t, s)
		editLayer(t, sign.Tag(img.digest, sign.AttestationSuffix), func(anns map[string]string) {
			anns[sign.AnnBundle] = firstAnnotations(t, sign.Tag(other.digest, sign.AttestationSuffix))[sign.AnnBundle]
		})
		_, err := sign.Verify(ctx, img.tag, ok)
		wantErr(t, err, sign.ErrAttestation, "transparency log entry does not verify: the entry records another payload")
	})
}

func TestLogUploadFails(t *testing.T) {
	rekor := signtest.NewRekor(t)
	rekor.Fail = true
	s := newKey(t).WithLog(&sign.Rekor{URL: rekor.URL})
	reg := registrytest.New(t)
	tag, _ := name.NewTag(reg.Ref("team/catalog:v1"))
	d := tag.Context().Digest(registrytest.Push(t, tag.String(), registrytest.RandomImage(t)).String())
	err := sign.SignImage(context.Background(), s, d)
	if err == nil || !strings.Contains(err.Error(), "transparency log "+rekor.URL+": 500 Internal Server Error") {
		t.Fatalf("err = %v", err)
	}
	// Nothing was stored: a signature without its entry is not written.
	if _, err := remote.Image(sign.Tag(d, sign.SignatureSuffix)); err == nil {
		t.Fatal("a signature was stored though the upload failed")
	}
}

func TestLogKeyless(t *testing.T) {
	ctx := context.Background()
	fulcio := signtest.NewFulcio(t)
	rekor := signtest.NewRekor(t)
	s, err := sign.Keyless(ctx, sign.KeylessOptions{FulcioURL: fulcio.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	s.WithLog(&sign.Rekor{URL: rekor.URL})
	img := publishSigned(t, s)
	ok := sign.VerifyOptions{
		Identity: signtest.Identity, Issuer: signtest.ActionsIssuer, Roots: fulcio.Roots,
		LogKeys: []crypto.PublicKey{logKey(t, rekor)}, PredicateTypes: both,
		// Long after the certificate expired: the log's time is what
		// counts.
		Now: func() time.Time { return time.Now().Add(24 * time.Hour) },
	}
	if _, err := sign.Verify(ctx, img.tag, ok); err != nil {
		t.Fatal(err)
	}
	// Without the log, the expired certificate does not verify.
	o := ok
	o.LogKeys, o.IgnoreLog = nil, true
	_, err = sign.Verify(ctx, img.tag, o)
	wantErr(t, err, sign.ErrNotVerified, "certificate has expired or is not yet valid")

	// A log that integrated the entry after the certificate expired.
	rekor.Now = func() time.Time { return time.Now().Add(time.Hour) }
	late := publishSigned(t, s)
	_, err = sign.Verify(ctx, late.tag, ok)
	wantErr(t, err, sign.ErrNotVerified, "the log integrated the entry at ", "outside the certificate's validity")
}

func TestSETMessage(t *testing.T) {
	got, err := sign.SETMessage(sign.BundlePayload{Body: "eyJhIjoiPD4ifQ==", IntegratedTime: 1700000000, LogIndex: 42, LogID: "c0d23d6a"})
	if err != nil {
		t.Fatal(err)
	}
	// RFC 8785: keys sorted, no white space.
	if want := `{"body":"eyJhIjoiPD4ifQ==","integratedTime":1700000000,"logID":"c0d23d6a","logIndex":42}`; string(got) != want {
		t.Fatalf("SET message\n got %s\nwant %s", got, want)
	}
}
