package cosigncheck_test

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// cosignBin is cmd/cosign built for this run, "" when it could not be.
var (
	cosignBin string
	whyNot    string
)

func TestMain(m *testing.M) {
	// Started by cosign or catalogbot as the fake KMS plugin of
	// TestKMSPlugin, the binary answers the plugin call instead.
	signtest.ServeKMSPlugin()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if cosignBin = os.Getenv("CATALOGBOT_TEST_COSIGN"); cosignBin != "" {
		fmt.Fprintf(os.Stderr, "cosigncheck: using cosign %s (CATALOGBOT_TEST_COSIGN)\n", cosignBin)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "catalogbot-cosigncheck-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	bin := filepath.Join(dir, "cosign")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/sigstore/cosign/v2/cmd/cosign")
	if out, err := cmd.CombinedOutput(); err != nil {
		whyNot = fmt.Sprintf("cosign could not be built here (%v); set CATALOGBOT_TEST_COSIGN to a cosign binary:\n%s", err, out)
	} else {
		cosignBin = bin
		fmt.Fprintf(os.Stderr, "cosigncheck: built cosign in %s\n", time.Since(start).Round(100*time.Millisecond))
	}
	return m.Run()
}

// cosign runs the cosign binary in dir with only loopback reachable: any
// request it would make elsewhere (a TUF root, a transparency log) goes to
// a proxy that is not there and fails, instead of leaving the machine.
func cosign(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	if cosignBin == "" {
		t.Skip(whyNot)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cosignBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
		"TUF_ROOT=" + filepath.Join(dir, ".sigstore"),
	}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// published is the valid fixture catalog published and signed by s to a
// fresh registry; it returns the image by digest.
func published(t *testing.T, s *sign.Signer) string {
	t.Helper()
	reg := registrytest.New(t)
	target := reg.Ref("team/catalog:latest")
	res, err := publish.Publish(context.Background(), publish.Source{Dir: "../../../testdata/catalogs/valid"}, publish.Options{
		Image:    target,
		Build:    build.Options{Base: build.BaseScratch},
		Keychain: authn.NewMultiKeychain(),
		Signer:   s,
		Source:   sign.Source{Repository: "example/catalog", Commit: "0123456789abcdef0123456789abcdef01234567", Path: "catalog"},
		Builder:  sign.Builder{ID: "https://github.com/catalogbot/catalogbot/cmd/catalogbot"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signature != publish.Signed {
		t.Fatalf("publish: %s, signature %q", res.Status, res.Signature)
	}
	return reg.Ref("team/catalog@" + res.Digest)
}

// httpFlags let cosign reach the loopback registry; registryFlags also
// skip the transparency log, for images signed with it off.
var (
	httpFlags     = []string{"--allow-insecure-registry", "--allow-http-registry"}
	registryFlags = append(slices.Clone(httpFlags), "--insecure-ignore-tlog")
)

// verifyAll runs cosign verify and verify-attestation for both predicates
// with the verification flags given, skipping the transparency log.
func verifyAll(t *testing.T, dir, image string, flags ...string) {
	t.Helper()
	verifyAllEnv(t, dir, image, nil, append(flags, "--insecure-ignore-tlog")...)
}

// verifyAllEnv is verifyAll with the environment env, checking the log
// unless flags say not to.
func verifyAllEnv(t *testing.T, dir, image string, env []string, flags ...string) {
	t.Helper()
	args := append(append([]string{"verify"}, flags...), httpFlags...)
	if out, err := cosign(t, dir, env, append(args, image)...); err != nil {
		t.Fatalf("cosign verify: %v\n%s", err, out)
	} else if !strings.Contains(out, image[strings.Index(image, "@")+1:]) {
		t.Errorf("cosign verify does not name the digest:\n%s", out)
	}
	for _, typ := range []string{"slsaprovenance1", sign.ApprovalPredicateType} {
		args := append(append([]string{"verify-attestation", "--type", typ}, flags...), httpFlags...)
		if out, err := cosign(t, dir, env, append(args, image)...); err != nil {
			t.Fatalf("cosign verify-attestation --type %s: %v\n%s", typ, err, out)
		}
	}
}

// TestCosignKey: a key pair made by cosign generate-key-pair signs with
// catalogbot, and cosign verifies the signature and both attestations;
// with another key it does not.
func TestCosignKey(t *testing.T) {
	dir := t.TempDir()
	if out, err := cosign(t, dir, []string{"COSIGN_PASSWORD=correct horse"}, "generate-key-pair"); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	t.Setenv("COSIGN_PASSWORD", "correct horse")
	s, err := sign.LoadKeyFile(filepath.Join(dir, "cosign.key"))
	if err != nil {
		t.Fatal(err)
	}
	image := published(t, s)
	verifyAll(t, dir, image, "--key", "cosign.pub")

	// The check can fail: another key is refused, by cosign and by
	// catalogbot alike.
	_, otherPub, err := sign.GenerateKeyPair([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.pub"), otherPub, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cosign(t, dir, nil, append(append([]string{"verify", "--key", "other.pub"}, registryFlags...), image)...); err == nil {
		t.Fatalf("cosign verify accepted another key:\n%s", out)
	}
}

// TestCatalogbotKey: a key pair catalogbot generates is one cosign reads,
// both to verify with and to sign with.
func TestCatalogbotKey(t *testing.T) {
	dir := t.TempDir()
	priv, pub, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range map[string][]byte{"cosign.key": priv, "cosign.pub": pub} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sign.LoadKey("cosign.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	image := published(t, s)
	verifyAll(t, dir, image, "--key", "cosign.pub")

	// cosign signs another image with the same key; catalogbot
	// verifies cosign's signature.
	host, _, _ := strings.Cut(image, "/")
	h := registrytest.Push(t, host+"/team/other:v1", registrytest.RandomImage(t))
	other := host + "/team/other@" + h.String()
	out, err := cosign(t, dir, []string{"COSIGN_PASSWORD=pw"}, "sign", "--key", "cosign.key", "--tlog-upload=false", "-y",
		"--allow-insecure-registry", "--allow-http-registry", other)
	if err != nil {
		t.Fatalf("cosign sign: %v\n%s", err, out)
	}
	ref, err := name.ParseReference(other)
	if err != nil {
		t.Fatal(err)
	}
	v, err := sign.Verify(context.Background(), ref, sign.VerifyOptions{IgnoreLog: true, Key: s.PublicKey()})
	if err != nil {
		t.Fatalf("catalogbot does not verify cosign's signature: %v", err)
	}
	if v.Signatures != 1 {
		t.Errorf("catalogbot verified %d signatures of cosign's, want 1", v.Signatures)
	}
}

// TestKMSPlugin: catalogbot signs with a key that stays in a KMS, reached
// through sigstore's plugin protocol; cosign verifies with the exported
// public key, and with the KMS reference through the same plugin.
func TestKMSPlugin(t *testing.T) {
	if cosignBin == "" {
		t.Skip(whyNot)
	}
	dir := t.TempDir()
	kms := signtest.KMSPlugin(t, "testkms")
	ref, pubPEM := kms.NewKey(t, "k")
	if err := os.WriteFile(filepath.Join(dir, "kms.pub"), pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sign.LoadKMS(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	image := published(t, s)
	verifyAll(t, dir, image, "--key", "kms.pub")

	args := append(append([]string{"verify", "--key", ref}, registryFlags...), image)
	if out, err := cosign(t, dir, kms.Env(), args...); err != nil {
		t.Fatalf("cosign verify --key %s: %v\n%s", ref, err, out)
	}
	// cosign checked the signature through the plugin, not a copy of
	// the key.
	if !slices.Contains(kms.Calls(t), "k verifySignature") {
		t.Fatalf("cosign did not ask the plugin to verify; its calls: %q", kms.Calls(t))
	}
	other, _ := kms.NewKey(t, "other")
	args = append(append([]string{"verify", "--key", other}, registryFlags...), image)
	if out, err := cosign(t, dir, kms.Env(), args...); err == nil {
		t.Fatalf("cosign verify accepted another KMS key:\n%s", out)
	}
}

// TestVault: catalogbot signs with a key of Vault's transit engine (a
// fake on loopback); cosign verifies with the exported public key, and
// with hashivault://NAME through its own Vault provider, which asks Vault.
func TestVault(t *testing.T) {
	if cosignBin == "" {
		t.Skip(whyNot)
	}
	dir := t.TempDir()
	vault := signtest.NewVault(t)
	if err := os.WriteFile(filepath.Join(dir, "vault.pub"), vault.NewKey(t, "catalog"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sign.LoadKMS(context.Background(), "hashivault://catalog")
	if err != nil {
		t.Fatal(err)
	}
	image := published(t, s)
	verifyAll(t, dir, image, "--key", "vault.pub")
	args := append(append([]string{"verify", "--key", "hashivault://catalog"}, registryFlags...), image)
	if out, err := cosign(t, dir, vault.Env(), args...); err != nil {
		t.Fatalf("cosign verify --key hashivault://catalog: %v\n%s", err, out)
	}
	vault.NewKey(t, "other")
	args = append(append([]string{"verify", "--key", "hashivault://other"}, registryFlags...), image)
	if out, err := cosign(t, dir, vault.Env(), args...); err == nil {
		t.Fatalf("cosign verify accepted another Vault key:\n%s", out)
	}
}

// TestKeyless: a keyless signature, its certificate from a fake Fulcio
// for a GitHub Actions workflow, verifies with cosign's identity flags.
func TestKeyless(t *testing.T) {
	dir := t.TempDir()
	fulcio := signtest.NewFulcio(t)
	s, err := sign.Keyless(context.Background(), sign.KeylessOptions{FulcioURL: fulcio.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "roots.pem"), fulcio.RootsPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	image := published(t, s)
	verifyAll(t, dir, image, "--ca-roots", "roots.pem", "--insecure-ignore-sct",
		"--certificate-identity", signtest.Identity, "--certificate-oidc-issuer", signtest.ActionsIssuer)
	out, err := cosign(t, dir, nil, append(append([]string{"verify", "--ca-roots", "roots.pem", "--insecure-ignore-sct",
		"--certificate-identity", "https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main",
		"--certificate-oidc-issuer", signtest.ActionsIssuer}, registryFlags...), image)...)
	if err == nil {
		t.Fatalf("cosign verify accepted another identity:\n%s", out)
	}
}

// logEnv points cosign at the log key file as its only trusted Rekor key,
// the way cosign takes a private log's key.
func logEnv(keyFile string) []string {
	return []string{"SIGSTORE_REKOR_PUBLIC_KEY=" + keyFile}
}

// TestRekorKey: catalogbot signs with a key and uploads to a fake Rekor;
// cosign verifies the signature and both attestations with the log
// checked (no --insecure-ignore-tlog), trusting the log's key; with
// another log's key, or for an image signed with the log off, it refuses.
func TestRekorKey(t *testing.T) {
	dir := t.TempDir()
	priv, pub, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cosign.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sign.LoadKey("cosign.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	rekor := signtest.NewRekor(t)
	image := published(t, s.WithLog(&sign.Rekor{URL: rekor.URL}))
	verifyAllEnv(t, dir, image, logEnv(rekor.KeyFile), "--key", "cosign.pub")

	// catalogbot checks the same entries with the same key.
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := (&sign.Rekor{URL: rekor.URL}).PublicKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.Verify(context.Background(), ref, sign.VerifyOptions{Key: s.PublicKey(), LogKeys: []crypto.PublicKey{logKey},
		PredicateTypes: []string{sign.ApprovalPredicateType, sign.ProvenancePredicateType}}); err != nil {
		t.Fatalf("catalogbot verify: %v", err)
	}

	verify := func(env []string, image string) (string, error) {
		return cosign(t, dir, env, append(append([]string{"verify", "--key", "cosign.pub"}, httpFlags...), image)...)
	}
	if out, err := verify(logEnv(signtest.NewRekor(t).KeyFile), image); err == nil {
		t.Fatalf("cosign verify accepted entries of another log:\n%s", out)
	}
	off := published(t, s.WithLog(nil))
	if out, err := verify(logEnv(rekor.KeyFile), off); err == nil {
		t.Fatalf("cosign verify accepted an image signed with the log off, without --insecure-ignore-tlog:\n%s", out)
	}
}

// TestRekorKeyless: a keyless signature uploaded to a fake Rekor verifies
// with cosign's identity flags and the log checked: cosign requires the
// log's integrated time to fall within the short-lived certificate's
// validity.
func TestRekorKeyless(t *testing.T) {
	dir := t.TempDir()
	fulcio := signtest.NewFulcio(t)
	rekor := signtest.NewRekor(t)
	s, err := sign.Keyless(context.Background(), sign.KeylessOptions{FulcioURL: fulcio.URL, Getenv: signtest.ActionsEnv(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "roots.pem"), fulcio.RootsPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	image := published(t, s.WithLog(&sign.Rekor{URL: rekor.URL}))
	verifyAllEnv(t, dir, image, logEnv(rekor.KeyFile), "--ca-roots", "roots.pem", "--insecure-ignore-sct",
		"--certificate-identity", signtest.Identity, "--certificate-oidc-issuer", signtest.ActionsIssuer)

	// A log that integrated the entry after the certificate expired.
	rekor.Now = func() time.Time { return time.Now().Add(time.Hour) }
	late := published(t, s)
	out, err := cosign(t, dir, logEnv(rekor.KeyFile), append(append([]string{"verify", "--ca-roots", "roots.pem", "--insecure-ignore-sct",
		"--certificate-identity", signtest.Identity, "--certificate-oidc-issuer", signtest.ActionsIssuer}, httpFlags...), late)...)
	if err == nil {
		t.Fatalf("cosign verify accepted an entry integrated after the certificate expired:\n%s", out)
	}
}
