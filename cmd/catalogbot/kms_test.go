package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// TestPublishKMSAndVerify signs with a key that stays in a KMS, reached
// through sigstore's plugin protocol (the fake plugin is this test binary,
// see TestMain) and through the Vault provider compiled in, and verifies
// with the KMS reference and with the exported public key.
func TestPublishKMSAndVerify(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	kms := signtest.KMSPlugin(t, "testkms")
	ref, pubPEM := kms.NewKey(t, "k")
	pub := filepath.Join(t.TempDir(), "kms.pub")
	if err := os.WriteFile(pub, pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	target := reg.Ref("team/catalog:latest")
	repo, _ := catalogRepo(t, target)
	publishArgs := []string{"publish", "--repo", repo.Dir, "--insecure-registry", reg.Host, "--tlog-upload=false"}

	r := cli(t, nil, append(publishArgs, "--sign-key", ref)...)
	m := signedLine.FindStringSubmatch(r.stdout)
	if r.code != exitOK || m == nil || m[1] != "signed" || m[3] != "published" {
		t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	digest := m[2]
	signs := 0
	for _, c := range kms.Calls(t) {
		if c == "k signMessage" {
			signs++
		}
	}
	if signs != 3 {
		t.Fatalf("the KMS plugin made %d signatures, want 3 (the image's and two attestations'); calls %q", signs, kms.Calls(t))
	}
	r = cli(t, nil, append(publishArgs, "--sign-key", ref)...)
	if m := signedLine.FindStringSubmatch(r.stdout); r.code != exitOK || m == nil || m[1] != "already signed" {
		t.Fatalf("publish again: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	for _, key := range []string{ref, pub} {
		r := cli(t, nil, "verify", target, "--key", key, "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitOK || !strings.Contains(r.stdout, "signature: "+reg.Ref("team/catalog@"+digest)+", 1 signature(s) by the key "+key+"\n") ||
			!strings.HasSuffix(r.stdout, "verified\n") {
			t.Fatalf("verify --key %s: exit %d, stdout %q, stderr %q", key, r.code, r.stdout, r.stderr)
		}
	}

	t.Run("another KMS key", func(t *testing.T) {
		other, _ := kms.NewKey(t, "other")
		r := cli(t, nil, "verify", target, "--key", other, "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "catalogbot: not verified: "+reg.Ref("team/catalog@"+digest)+": no signature verifies with the key given") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("a key the KMS does not have", func(t *testing.T) {
		r := cli(t, nil, "verify", target, "--key", "testkms://gone", "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitError || !strings.Contains(r.stderr, `signing key testkms://gone: reading its public key: plugin returned error: no key "gone" in this KMS`) {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("a scheme no provider serves", func(t *testing.T) {
		before := reg.Count("PUT", "manifests")
		r := cli(t, nil, append(publishArgs, "--sign-key", "awskms:///arn:aws:kms:us-east-1:123456789012:key/abc", "--image", reg.Ref("team/aws:latest"))...)
		if r.code != exitError || !strings.Contains(r.stderr, "no KMS provider for awskms://") ||
			!strings.Contains(r.stderr, "an executable named sigstore-kms-awskms on $PATH") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		if reg.Count("PUT", "manifests") != before {
			t.Fatal("pushed without the signature the policy asks for")
		}
	})

	t.Run("Vault", func(t *testing.T) {
		vault := signtest.NewVault(t)
		vault.NewKey(t, "catalog")
		image := reg.Ref("team/vault:latest")
		r := cli(t, nil, append(publishArgs, "--sign-key", "hashivault://catalog", "--image", image)...)
		if r.code != exitOK || vault.Signs() != 3 {
			t.Fatalf("publish: exit %d, %d signatures by Vault, stdout %q, stderr %q", r.code, vault.Signs(), r.stdout, r.stderr)
		}
		r = cli(t, nil, "verify", image, "--key", "hashivault://catalog", "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitOK || !strings.HasSuffix(r.stdout, "verified\n") {
			t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		r = cli(t, nil, "verify", image, "--key", ref, "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitInvalid {
			t.Fatalf("verify with the plugin's key: exit %d, stderr %q", r.code, r.stderr)
		}
	})
}
