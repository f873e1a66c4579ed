package sign_test

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// BenchmarkSignAndAttest is what signing adds to a publish: the signature
// and the two attestations written to an in-process registry on loopback,
// and their verification, for a fresh digest each time.
func BenchmarkSignAndAttest(b *testing.B) {
	priv, _, err := sign.GenerateKeyPair(nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sign.LoadKey("k", priv, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := registrytest.New(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		tag, _ := name.NewTag(reg.Ref("team/catalog:v1"))
		d := tag.Context().Digest(reg.PushRandom(b, tag.String()).String())
		b.StartTimer()
		for _, pt := range both {
			st, err := sign.NewStatement(d, pt, map[string]string{"commit": "abc"})
			if err != nil {
				b.Fatal(err)
			}
			if err := sign.Attest(ctx, s, d, st); err != nil {
				b.Fatal(err)
			}
		}
		if err := sign.SignImage(ctx, s, d); err != nil {
			b.Fatal(err)
		}
		if _, err := sign.Verify(ctx, d, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey(), PredicateTypes: both}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadKey is the cost of opening a cosign key: scrypt, by design
// slow.
func BenchmarkLoadKey(b *testing.B) {
	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := sign.LoadKey("k", priv, []byte("pw")); err != nil {
			b.Fatal(err)
		}
	}
}
