//go:build e2e

package main

// The end-to-end credentials test runs Debian's docker-registry with
// htpasswd basic authentication on 127.0.0.1 and runs publish, rebuild and
// assemble against it with each source of credentials the keychain reads,
// then without any. What they push is read back with skopeo, which shares
// no code with catalogbot. Run it with make e2e.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

const (
	e2eUser     = "publisher"
	e2ePassword = "e2e-Pa55w0rd-not-to-be-printed"
)

// credentialSources set up one way of giving the commands the e2eUser's
// credentials for host, in a home isolateCredentials made.
var credentialSources = []struct {
	name  string
	setup func(t *testing.T, home, host string)
}{
	{"REGISTRY_AUTH_FILE", func(t *testing.T, home, host string) {
		t.Setenv("REGISTRY_AUTH_FILE", writeAuths(t, filepath.Join(home, "auth.json"), host))
	}},
	{"containers auth.json in XDG_CONFIG_HOME", func(t *testing.T, home, host string) {
		writeAuths(t, filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "containers", "auth.json"), host)
	}},
	{"docker config.json in DOCKER_CONFIG", func(t *testing.T, home, host string) {
		writeAuths(t, filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), host)
	}},
	{"docker credential helper", func(t *testing.T, home, host string) {
		bin := filepath.Join(home, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread -r server\nprintf '{\"ServerURL\":\"%%s\",\"Username\":\"%s\",\"Secret\":\"%s\"}' \"$server\"\n", e2eUser, e2ePassword)
		if err := os.WriteFile(filepath.Join(bin, "docker-credential-e2e"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		doc := map[string]any{"credHelpers": map[string]string{host: "e2e"}}
		writeJSONFile(t, filepath.Join(os.Getenv("DOCKER_CONFIG"), "config.json"), doc)
	}},
}

// TestE2ECredentials: publish, rebuild and assemble log in with each
// source of credentials, and without credentials fail with exit status 1,
// "unauthorized" and the registry named, never printing the password.
func TestE2ECredentials(t *testing.T) {
	htpasswd := filepath.Join(t.TempDir(), "htpasswd")
	hash, err := bcrypt.GenerateFromPassword([]byte(e2ePassword), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(htpasswd, []byte(e2eUser+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := registrytest.StartDockerRegistryAuth(t, htpasswd)
	login := remote.WithAuth(&authn.Basic{Username: e2eUser, Password: e2ePassword})
	for _, pkg := range []string{"cert-rotator", "kv-store-operator"} {
		ref, err := name.ParseReference(host + "/" + pkg + ":v1")
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, fixtureCatalogImage(t, validDir, pkg, "1"), login); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(t.TempDir(), "catalog.yaml")
	data := fmt.Sprintf("name: demo\nreferences:\n- name: cert\n  image: %[1]s/cert-rotator:v1\n- name: kv\n  image: %[1]s/kv-store-operator:v1\n", host)
	if err := os.WriteFile(list, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	commands := func(tag string) map[string][]string {
		return map[string][]string{
			"publish":  {"publish", "--catalog", validDir, "--image", host + "/e2e/catalog:publish-" + tag, "--base", "scratch"},
			"rebuild":  {"rebuild", list, "--image", host + "/e2e/catalog:rebuild-" + tag, "--base", "scratch"},
			"assemble": {"assemble", list, "-o", filepath.Join(t.TempDir(), "out")},
		}
	}

	for i, src := range credentialSources {
		t.Run(src.name, func(t *testing.T) {
			home := isolateCredentials(t)
			src.setup(t, home, host)
			for cmd, args := range commands(fmt.Sprint(i)) {
				r := cli(t, nil, args...)
				assertNoPassword(t, cmd, r)
				if r.code != exitOK {
					t.Fatalf("%s: exit %d\nstdout %s\nstderr %s", cmd, r.code, r.stdout, r.stderr)
				}
				if cmd == "assemble" {
					continue
				}
				digest := publishLineDigest(t, r.stdout)
				if got := skopeoDigest(t, flagValue(args, "--image")); got != digest {
					t.Errorf("%s: the registry has %s, %s printed %s", cmd, got, cmd, digest)
				}
			}
		})
	}

	t.Run("no credentials", func(t *testing.T) {
		isolateCredentials(t)
		for cmd, args := range commands("anonymous") {
			r := cli(t, nil, args...)
			t.Logf("%s: exit %d: %s", cmd, r.code, r.stderr)
			assertNoPassword(t, cmd, r)
			if r.code != exitInvalid || !strings.Contains(r.stderr, "unauthorized") || !strings.Contains(r.stderr, host) {
				t.Errorf("%s without credentials: exit %d, stderr %q; want 1, unauthorized and %s named", cmd, r.code, r.stderr, host)
			}
		}
	})
}

func writeAuths(t *testing.T, path, host string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(e2eUser + ":" + e2ePassword))
	return writeJSONFile(t, path, map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
}

func writeJSONFile(t *testing.T, path string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assertNoPassword fails if the password shows in a command's output, as
// it is or in the forms a header or a config file carries it.
func assertNoPassword(t *testing.T, cmd string, r result) {
	t.Helper()
	basic := base64.StdEncoding.EncodeToString([]byte(e2eUser + ":" + e2ePassword))
	for _, leak := range []string{e2ePassword, basic} {
		if strings.Contains(r.stdout, leak) || strings.Contains(r.stderr, leak) {
			t.Errorf("%s printed the password (%q):\nstdout %s\nstderr %s", cmd, leak, r.stdout, r.stderr)
		}
	}
}

// publishLineDigest is the digest of the last line publish and rebuild
// print.
func publishLineDigest(t *testing.T, stdout string) string {
	t.Helper()
	m := rebuildLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no digest line in %q", stdout)
	}
	return m[1]
}

// skopeoDigest is the digest skopeo reads for ref, logging in itself.
func skopeoDigest(t *testing.T, ref string) string {
	t.Helper()
	bin := registrytest.NeedProgram(t, "skopeo", "skopeo")
	cmd := exec.Command(bin, "inspect", "--tls-verify=false", "--no-tags", "--raw", "--creds", e2eUser+":"+e2ePassword, "docker://"+ref)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("skopeo inspect %s: %v\n%s", ref, err, stderr.String())
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(out))
}

// flagValue is the value given to flag in args, "" if none.
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
