package images_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/images/imagestest"
)

const (
	robot  = "robot$ci"
	secret = "s3cr3t-Pa55w0rd"
)

// writeAuthFile writes a containers auth.json with one entry.
func writeAuthFile(t *testing.T, dir, key, user, password string) string {
	t.Helper()
	path := filepath.Join(dir, "auth.json")
	doc := map[string]any{"auths": map[string]any{key: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password)),
	}}}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCredentials: a private registry is reached with the credentials from
// a containers auth file; without them, or with wrong ones, the image is
// unauthorized, never not_found. The secret shows nowhere: not in results,
// reports or the debug log.
func TestCredentials(t *testing.T) {
	reg := imagestest.New(t)
	reg.PushRandom(t, reg.Ref("private/app:v1"))
	reg.RequireBasic(robot, secret)

	tests := []struct {
		name     string
		keychain func(t *testing.T) authn.Keychain
		class    images.Class
	}{
		{"right credentials", func(t *testing.T) authn.Keychain {
			return images.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host, robot, secret))
		}, images.ClassOK},
		{"credentials for the repository", func(t *testing.T) authn.Keychain {
			return images.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host+"/private/app", robot, secret))
		}, images.ClassOK},
		{"wrong password", func(t *testing.T) authn.Keychain {
			return images.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host, robot, secret+"-old"))
		}, images.ClassUnauthorized},
		{"credentials for another repository", func(t *testing.T) authn.Keychain {
			return images.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host+"/other", robot, secret))
		}, images.ClassUnauthorized},
		{"no credentials", func(t *testing.T) authn.Keychain { return images.ContainersKeychain() }, images.ClassUnauthorized},
		{"unreadable auth file", func(t *testing.T) authn.Keychain {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(`{"auths": {"`+reg.Host+`": {"auth": "`+secret+`"`), 0o600)
			return images.ContainersKeychain(path)
		}, images.ClassUnauthorized},
		{"auth not base64", func(t *testing.T) authn.Keychain {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(`{"auths": {"`+reg.Host+`": {"auth": "`+secret+`!"}}}`), 0o600)
			return images.ContainersKeychain(path)
		}, images.ClassUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			o := options(newFakeClock(), &log)
			o.Keychain = tt.keychain(t)
			res := verifyOne(t, newVerifier(t, o), reg.Ref("private/app:v1"), images.KindBundle)
			t.Logf("%s: %s", res.Class, res.Message)
			if res.Class != tt.class {
				t.Errorf("class %s (%s), want %s", res.Class, res.Message, tt.class)
			}
			var out bytes.Buffer
			images.WriteText(&out, []images.Result{res}, nil)
			images.WriteJSON(&out, []images.Result{res}, nil)
			out.Write(log.Bytes())
			assertNoSecret(t, out.String())
		})
	}
}

// assertNoSecret fails if s holds the secret in any form a header or a
// config file would carry it.
func assertNoSecret(t *testing.T, s string) {
	t.Helper()
	for _, leak := range []string{secret, imagestest.BasicAuth(robot, secret), imagestest.BasicAuth(robot, secret+"-old"), "Authorization"} {
		if strings.Contains(s, leak) {
			t.Errorf("output contains %q:\n%s", leak, s)
		}
	}
}

// TestContainersKeychain covers the lookup rules of containers auth files.
func TestContainersKeychain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	first := write("first.json", `{"auths": {
		"quay.io/team": {"auth": "`+b64("team:1")+`"},
		"quay.io/team/app": {"auth": "`+b64("app:2")+`"},
		"https://index.docker.io/v1/": {"auth": "`+b64("hub:3")+`"},
		"registry.example.com:5000": {"identitytoken": "tok"}
	}}`)
	second := write("second.json", `{"auths": {"quay.io": {"auth": "`+b64("quay:4")+`"}, "quay.io/team": {"auth": "`+b64("shadowed:5")+`"}}}`)
	kc := images.ContainersKeychain(first, filepath.Join(dir, "missing.json"), second)
	tests := []struct {
		repo string
		want authn.AuthConfig
	}{
		{"quay.io/team/app", authn.AuthConfig{Username: "app", Password: "2"}},
		{"quay.io/team/app/sub", authn.AuthConfig{Username: "app", Password: "2"}},
		{"quay.io/team/other", authn.AuthConfig{Username: "team", Password: "1"}},
		{"quay.io/teamx/other", authn.AuthConfig{Username: "quay", Password: "4"}},
		{"docker.io/library/busybox", authn.AuthConfig{Username: "hub", Password: "3"}},
		{"busybox", authn.AuthConfig{Username: "hub", Password: "3"}},
		{"registry.example.com:5000/x", authn.AuthConfig{IdentityToken: "tok"}},
		{"ghcr.io/x/y", authn.AuthConfig{}},
	}
	for _, tt := range tests {
		repo, err := name.NewRepository(tt.repo)
		if err != nil {
			t.Fatal(err)
		}
		auth, err := kc.Resolve(repo)
		if err != nil {
			t.Fatalf("%s: %v", tt.repo, err)
		}
		got, err := auth.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if *got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.repo, *got, tt.want)
		}
	}
}

func TestContainersAuthFiles(t *testing.T) {
	env := map[string]string{"REGISTRY_AUTH_FILE": "/etc/auth.json", "XDG_RUNTIME_DIR": "/run/user/1000"}
	got := images.ContainersAuthFiles(func(k string) string { return env[k] }, "/home/me")
	want := []string{"/etc/auth.json", "/run/user/1000/containers/auth.json", "/home/me/.config/containers/auth.json"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	env = map[string]string{"XDG_CONFIG_HOME": "/cfg"}
	got = images.ContainersAuthFiles(func(k string) string { return env[k] }, "/home/me")
	if strings.Join(got, " ") != "/cfg/containers/auth.json" {
		t.Errorf("got %q", got)
	}
}
