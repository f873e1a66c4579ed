package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// keyPair writes a cosign key pair to dir and sets its password as cosign
// reads it; it returns the key files.
func keyPair(t *testing.T, dir, base string) (priv, pub string) {
	t.Helper()
	privPEM, pubPEM, err := sign.GenerateKeyPair([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	priv, pub = filepath.Join(dir, base+".key"), filepath.Join(dir, base+".pub")
	if err := os.WriteFile(priv, privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pubPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "secret")
	return priv, pub
}

// catalogRepo is a git repository holding the valid fixture catalog and a
// policy that publishes it to target, signed with a key.
func catalogRepo(t *testing.T, target string) (*changetest.Repo, string) {
	t.Helper()
	files, err := changetest.ReadFiles(filepath.Join(repoRoot, validDir))
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]string{".catalogbot.yaml": "publish:\n  image: " + target + "\n  base: scratch\n  sign: key\n"}
	for p, data := range files {
		edits["catalog/"+p] = data
	}
	repo := changetest.NewRepo(t)
	return repo, repo.Commit("catalog", edits)
}

var signedLine = regexp.MustCompile(`(?m)^signature: (signed|already signed)\n(sha256:[0-9a-f]{64}) (published|unchanged)\n$`)

func TestPublishSignedAndVerify(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	target := reg.Ref("team/catalog:latest")
	keys := t.TempDir()
	priv, pub := keyPair(t, keys, "cosign")
	repo, commit := catalogRepo(t, target)
	rekor := signtest.NewRekor(t)
	publishArgs := []string{"publish", "--repo", repo.Dir, "--insecure-registry", reg.Host, "--rekor-url", rekor.URL}

	// The policy asks for a signature; without a key nothing is pushed.
	r := cli(t, nil, publishArgs...)
	if r.code == exitOK || !strings.Contains(r.stderr, "publish.sign is key, and the publisher has no signing key") {
		t.Fatalf("without --sign-key: exit %d, stderr %q", r.code, r.stderr)
	}
	if reg.Count("PUT", "manifests") != 0 {
		t.Fatal("pushed without the signature the policy asks for")
	}

	r = cli(t, nil, append(publishArgs, "--sign-key", priv)...)
	m := signedLine.FindStringSubmatch(r.stdout)
	if r.code != exitOK || m == nil || m[1] != "signed" || m[3] != "published" {
		t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	digest := m[2]
	r = cli(t, nil, append(publishArgs, "--sign-key", priv)...)
	if m := signedLine.FindStringSubmatch(r.stdout); r.code != exitOK || m == nil || m[1] != "already signed" || m[3] != "unchanged" {
		t.Fatalf("publish again: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	r = cli(t, nil, "verify", target, "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host, "--rebuild", "--repo", repo.Dir)
	for _, want := range []string{
		"signature: " + reg.Ref("team/catalog@"+digest) + ", 1 signature(s) by the key " + pub,
		"approval: commit " + commit + ", policy .catalogbot.yaml (blob ",
		"approvals not recorded: ",
		"provenance: commit " + commit + " of " + repo.Dir + ", base scratch, built by " + sign.BuilderID,
		"rebuild: " + change.ShortSHA(commit) + " of " + repo.Dir,
		"gives " + digest,
		"transparency log: each entry verified with the log key " + rekor.KeyFile,
		"verified\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	if r.code != exitOK {
		t.Fatalf("verify: exit %d, stderr %q", r.code, r.stderr)
	}

	if n := len(rekor.Entries()); n != 3 {
		t.Fatalf("%d log entries, want 3 (the signature and two attestations)", n)
	}

	t.Run("the log's key from the log", func(t *testing.T) {
		r := cli(t, nil, "verify", target, "--key", pub, "--rekor-url", rekor.URL, "--insecure-registry", reg.Host)
		if r.code != exitOK || !strings.Contains(r.stdout, "transparency log: each entry verified with the key of "+rekor.URL) {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("no log key", func(t *testing.T) {
		r := cli(t, nil, "verify", target, "--key", pub, "--insecure-registry", reg.Host)
		if r.code != exitError || !strings.Contains(r.stderr, "no transparency log key given: its signatures are in a transparency log: pass the log's public key with --rekor-key FILE") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("another log's key", func(t *testing.T) {
		r := cli(t, nil, "verify", target, "--key", pub, "--rekor-key", signtest.NewRekor(t).KeyFile, "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "transparency log entry does not verify: the entry is in log ") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("the log off", func(t *testing.T) {
		off := reg.Ref("team/off:latest")
		r := cli(t, nil, append(publishArgs, "--sign-key", priv, "--image", off, "--tlog-upload=false")...)
		if r.code != exitOK {
			t.Fatalf("publish: exit %d, stderr %q", r.code, r.stderr)
		}
		r = cli(t, nil, "verify", off, "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "not in a transparency log (signed with the log off? verify with --insecure-ignore-tlog)") {
			t.Fatalf("verify: exit %d, stderr %q", r.code, r.stderr)
		}
		r = cli(t, nil, "verify", off, "--key", pub, "--insecure-ignore-tlog", "--insecure-registry", reg.Host)
		if r.code != exitOK || !strings.Contains(r.stdout, "transparency log: not checked (--insecure-ignore-tlog)") {
			t.Fatalf("verify --insecure-ignore-tlog: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("the log down", func(t *testing.T) {
		// The upload fails before the tag moves: nothing is published.
		down := signtest.NewRekor(t)
		down.Fail = true
		image := reg.Ref("team/down:latest")
		r := cli(t, nil, "publish", "--repo", repo.Dir, "--insecure-registry", reg.Host, "--rekor-url", down.URL, "--sign-key", priv, "--image", image)
		if r.code == exitOK || !strings.Contains(r.stderr, "transparency log "+down.URL+": 500 Internal Server Error") {
			t.Fatalf("publish: exit %d, stderr %q", r.code, r.stderr)
		}
		ref, _ := name.ParseReference(image, name.Insecure)
		if _, err := remote.Head(ref); err == nil {
			t.Fatal("the tag was pushed though the log refused the signature")
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		_, otherPub := keyPair(t, keys, "other")
		r := cli(t, nil, "verify", target, "--key", otherPub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "catalogbot: not verified: "+reg.Ref("team/catalog@"+digest)+": no signature verifies with the key given") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("a catalog directory in the repository", func(t *testing.T) {
		// The path is recorded from the repository's root, where the
		// rebuild finds it.
		dir := reg.Ref("team/dir:latest")
		r := cli(t, nil, "publish", "--catalog", filepath.Join(repo.Dir, "catalog"), "--image", dir, "--base", "scratch",
			"--insecure-registry", reg.Host, "--sign-key", priv, "--rekor-url", rekor.URL)
		if r.code != exitOK {
			t.Fatalf("publish: exit %d, stderr %q", r.code, r.stderr)
		}
		r = cli(t, nil, "verify", dir, "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host, "--rebuild", "--repo", repo.Dir)
		if r.code != exitOK || !strings.Contains(r.stdout, "rebuild: "+change.ShortSHA(commit)) {
			t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("rebuild of a dirty work tree", func(t *testing.T) {
		// Published from uncommitted changes, the image is not what the
		// recorded commit builds.
		dirty := reg.Ref("team/dirty:latest")
		file := filepath.Join(repo.Dir, "catalog", "cert-rotator", "catalog.yaml")
		was, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(was, "# not committed\n"...), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(file, was, 0o644)
		r := cli(t, nil, append(publishArgs, "--sign-key", priv, "--image", dirty)...)
		if r.code != exitOK {
			t.Fatalf("publish: exit %d, stderr %q", r.code, r.stderr)
		}
		r = cli(t, nil, "verify", dirty, "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host, "--rebuild", "--repo", repo.Dir)
		if r.code != exitInvalid || !regexp.MustCompile(`not verified: rebuilding `+change.ShortSHA(commit)+` on scratch gives sha256:[0-9a-f]{64}, not sha256:`).MatchString(r.stderr) {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("tampered attestation", func(t *testing.T) {
		// Someone with write access to the registry claims other
		// approvers; the envelope's signature no longer matches.
		d, err := name.NewDigest(reg.Ref("team/catalog@" + digest))
		if err != nil {
			t.Fatal(err)
		}
		signtest.TamperAttestation(t, sign.Tag(d, sign.AttestationSuffix), func(st map[string]any) {
			st["predicate"].(map[string]any)["approvalsRecorded"] = true
		})
		r := cli(t, nil, "verify", d.String(), "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "catalogbot: not verified: "+d.String()+": attestation does not verify: no valid "+sign.ApprovalPredicateType+" attestation") ||
			!strings.Contains(r.stderr, "its DSSE signature does not match its content: altered, or signed with another key") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("moved tag", func(t *testing.T) {
		registrytest.Push(t, target, registrytest.RandomImage(t))
		r := cli(t, nil, "verify", target, "--key", pub, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "catalogbot: not verified: "+target+" names sha256:") ||
			!strings.Contains(r.stderr, "which has no signature: was the tag moved") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

func TestVerifyUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify"}, "verify takes one image"},
		{[]string{"verify", "r.example/c:v1"}, "verify needs --key, or --certificate-identity"},
		{[]string{"verify", "r.example/c:v1", "--key", "k", "--certificate-identity", "i"}, "not both"},
		{[]string{"verify", "r.example/c:v1", "--certificate-identity", "i", "--certificate-oidc-issuer", "o"}, "--ca-roots"},
		{[]string{"verify", "r.example/c:v1", "--key", "k", "--rebuild"}, "--rebuild needs the git repository"},
		{[]string{"verify", "r.example/c:v1", "--key", "k", "--rekor-key", "r", "--rekor-url", "http://127.0.0.1:1"}, "--rekor-key or --rekor-url, not both"},
		{[]string{"verify", "r.example/c:v1", "--key", "k", "--rekor-key", "r", "--insecure-ignore-tlog"}, "--insecure-ignore-tlog skips the log"},
		{[]string{"publish", "--catalog", validDir, "--image", "r.example/c:v1", "--sign-key", "k", "--sign-keyless"}, "give one of --sign-key and --sign-keyless"},
	} {
		r := cli(t, nil, tc.args...)
		if r.code != exitError || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestPublishKeylessAndVerify signs in a GitHub Actions job's environment
// with a certificate from a fake Fulcio, and verifies by identity.
func TestPublishKeylessAndVerify(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	target := reg.Ref("team/catalog:latest")
	fulcio := signtest.NewFulcio(t)
	env := signtest.ActionsEnv(t)
	for _, k := range []string{"ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"} {
		t.Setenv(k, env(k))
	}
	roots := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(roots, fulcio.RootsPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	rekor := signtest.NewRekor(t)
	r := cli(t, nil, "publish", "--catalog", validDir, "--image", target, "--base", "scratch", "--insecure-registry", reg.Host,
		"--sign-keyless", "--fulcio-url", fulcio.URL, "--rekor-url", rekor.URL)
	if m := signedLine.FindStringSubmatch(r.stdout); r.code != exitOK || m == nil || m[1] != "signed" {
		t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	verify := func(identity string) result {
		return cli(t, nil, "verify", target, "--ca-roots", roots, "--certificate-identity", identity,
			"--certificate-oidc-issuer", signtest.ActionsIssuer, "--rekor-key", rekor.KeyFile, "--insecure-registry", reg.Host)
	}
	if r := verify(signtest.Identity); r.code != exitOK || !strings.Contains(r.stdout, "by the identity "+signtest.Identity) {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := verify("https://github.com/evil/fork/.github/workflows/x.yaml@refs/heads/main"); r.code != exitInvalid || !strings.Contains(r.stderr, "certificate identity") {
		t.Fatalf("verify another identity: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestPublishRevRecordsRev: publish --repo DIR --rev REV builds REV, and its
// attestations record REV, not the commit DIR has checked out, so that
// verify --rebuild rebuilds what was published.
func TestPublishRevRecordsRev(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	target := reg.Ref("team/catalog:latest")
	priv, pub := keyPair(t, t.TempDir(), "cosign")
	repo, published := catalogRepo(t, target)
	file := "catalog/cert-rotator/catalog.yaml"
	was, err := os.ReadFile(filepath.Join(repo.Dir, file))
	if err != nil {
		t.Fatal(err)
	}
	// The release branch's tip is the commit published; main, checked
	// out, moves on.
	repo.Branch("release", published)
	repo.Checkout("main")
	head := repo.Commit("later", map[string]string{file: string(was) + "# later\n"})

	r := cli(t, nil, "publish", "--repo", repo.Dir, "--rev", published, "--insecure-registry", reg.Host, "--sign-key", priv, "--tlog-upload=false")
	if r.code != exitOK {
		t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = cli(t, nil, "verify", target, "--key", pub, "--insecure-ignore-tlog", "--insecure-registry", reg.Host, "--rebuild", "--repo", repo.Dir, "--branch", "release")
	for _, want := range []string{
		"approval: commit " + published,
		"provenance: commit " + published,
		"rebuild: " + change.ShortSHA(published) + " of " + repo.Dir,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, head) || r.code != exitOK {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestVerifyProvesTheTag: a tag that serves a signed image is verified only
// when the image is that tag's newest publication: another catalog's
// signed image under the tag, or an older publication of the same catalog,
// is refused; and the repository and catalog asked for are checked. A
// change reverted, published again, verifies.
func TestVerifyProvesTheTag(t *testing.T) {
	isolateCredentials(t)
	reg := registrytest.New(t)
	priv, pub := keyPair(t, t.TempDir(), "cosign")
	files, err := changetest.ReadFiles(filepath.Join(repoRoot, validDir))
	if err != nil {
		t.Fatal(err)
	}
	edits := map[string]string{".catalogbot.yaml": "catalogs:\n  - each: catalogs/*\npublish:\n  image: \"" + reg.Ref("team/index:{catalog}") + "\"\n  base: scratch\n  sign: key\n"}
	for p, data := range files {
		edits["catalogs/v1/"+p] = data
		if strings.HasPrefix(p, "cert-rotator/") {
			edits["catalogs/v2/"+p] = data
		}
	}
	repo := changetest.NewRepo(t)
	first := repo.Commit("catalogs", edits)
	publishAll := func() {
		t.Helper()
		r := cli(t, nil, "publish", "--repo", repo.Dir, "--insecure-registry", reg.Host, "--sign-key", priv, "--tlog-upload=false")
		if r.code != exitOK {
			t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	publishAll()
	v1, v2 := reg.Ref("team/index:v1"), reg.Ref("team/index:v2")
	verify := func(image string, args ...string) result {
		t.Helper()
		return cli(t, nil, append([]string{"verify", image, "--key", pub, "--insecure-ignore-tlog", "--insecure-registry", reg.Host}, args...)...)
	}

	r := verify(v1, "--repository", repo.Dir, "--catalog", "v1", "--rebuild", "--repo", repo.Dir)
	for _, want := range []string{
		"catalog: catalog v1 of " + repo.Dir + ", published to " + v1,
		"newest: no later signed publication of " + v1,
		"rebuild: " + change.ShortSHA(first) + " of " + repo.Dir + ", catalog v1 from catalogs/v1, gives sha256:",
		"branch: " + change.ShortSHA(first) + " is the tip of main",
		"verified\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify stdout does not say %q:\n%s", want, r.stdout)
		}
	}
	if r.code != exitOK {
		t.Fatalf("verify: exit %d, stderr %q", r.code, r.stderr)
	}
	firstV1 := headOf(t, v1)

	t.Run("an image published elsewhere", func(t *testing.T) {
		// Published with --image to a target the policy does not name,
		// the image still rebuilds from its recorded commit and catalog.
		elsewhere := reg.Ref("mirror/index:v1")
		r := cli(t, nil, "publish", "--repo", repo.Dir, "--catalog", "v1", "--image", elsewhere, "--insecure-registry", reg.Host, "--sign-key", priv, "--tlog-upload=false")
		if r.code != exitOK {
			t.Fatalf("publish: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		r = verify(elsewhere, "--rebuild", "--repo", repo.Dir)
		if r.code != exitOK || !strings.Contains(r.stdout, "rebuild: "+change.ShortSHA(first)+" of "+repo.Dir+", catalog v1 from catalogs/v1, gives sha256:") {
			t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another repository", []string{"--repository", "example/other"}, "was published from " + repo.Dir + ", not from example/other"},
		{"another catalog", []string{"--catalog", "v2"}, "is catalog v1, not v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := verify(v1, tc.args...)
			if r.code != exitInvalid || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, tc.want)
			}
		})
	}

	t.Run("another catalog's image under the tag", func(t *testing.T) {
		moveTag(t, v1, headOf(t, v2))
		defer moveTag(t, v1, firstV1)
		r := verify(v1)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "was published to "+v2+" (catalog v2), not under the tag v1: another catalog's image") {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	// A change to v1, published: the tag moves on.
	file := "catalogs/v1/cert-rotator/catalog.yaml"
	second := repo.Commit("change v1", map[string]string{file: edits[file] + "# changed\n"})
	publishAll()
	secondV1 := headOf(t, v1)
	if secondV1 == firstV1 {
		t.Fatal("the change did not change the image")
	}

	t.Run("rolled back", func(t *testing.T) {
		moveTag(t, v1, firstV1)
		defer moveTag(t, v1, secondV1)
		r := verify(v1)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "the tag was moved back to an older publication") ||
			!strings.Contains(r.stderr, "serves "+firstV1+" (commit "+first) || !strings.Contains(r.stderr, secondV1+" (commit "+second) {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("behind the branch", func(t *testing.T) {
		// The registry's newer publication is gone too: the branch's tip
		// still tells.
		moveTag(t, v1, firstV1)
		defer moveTag(t, v1, secondV1)
		deleteTag(t, reg.Ref("team/index:"+strings.Replace(secondV1, ":", "-", 1)+".att"))
		r := verify(v1, "--rebuild", "--repo", repo.Dir)
		if r.code != exitInvalid || !strings.Contains(r.stderr, "the tip "+change.ShortSHA(second)+" of main publishes "+secondV1+", not "+firstV1) {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	// The change reverted and published: the first image is the newest
	// again, and verifies.
	third := repo.Commit("revert v1", map[string]string{file: edits[file]})
	publishAll()
	if got := headOf(t, v1); got != firstV1 {
		t.Fatalf("the revert published %s, want %s", got, firstV1)
	}
	r = verify(v1, "--rebuild", "--repo", repo.Dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "approval: commit "+third) {
		t.Fatalf("verify after the revert: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// v2 never changed: its commit is behind the tip, which publishes it
	// unchanged.
	r = verify(v2, "--rebuild", "--repo", repo.Dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "branch: the tip "+change.ShortSHA(third)+" of main publishes the same image") {
		t.Fatalf("verify v2: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// headOf is the digest the tag ref names.
func headOf(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return d.Digest.String()
}

// moveTag points the tag ref at digest, as anyone who can write to the
// registry can.
func moveTag(t *testing.T, ref, digest string) {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(tag.Context().Digest(digest))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Tag(tag, desc); err != nil {
		t.Fatal(err)
	}
}

// deleteTag deletes the tag ref from the registry.
func deleteTag(t *testing.T, ref string) {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Delete(tag); err != nil {
		t.Fatal(err)
	}
}
