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

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
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
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("private/app:v1"))
	reg.RequireBasic(robot, secret)

	tests := []struct {
		name     string
		keychain func(t *testing.T) authn.Keychain
		class    registry.Class
	}{
		{"right credentials", func(t *testing.T) authn.Keychain {
			return registry.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host, robot, secret))
		}, registry.ClassOK},
		{"credentials for the repository", func(t *testing.T) authn.Keychain {
			return registry.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host+"/private/app", robot, secret))
		}, registry.ClassOK},
		{"wrong password", func(t *testing.T) authn.Keychain {
			return registry.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host, robot, secret+"-old"))
		}, registry.ClassUnauthorized},
		{"credentials for another repository", func(t *testing.T) authn.Keychain {
			return registry.ContainersKeychain(writeAuthFile(t, t.TempDir(), reg.Host+"/other", robot, secret))
		}, registry.ClassUnauthorized},
		{"no credentials", func(t *testing.T) authn.Keychain { return registry.ContainersKeychain() }, registry.ClassUnauthorized},
		{"unreadable auth file", func(t *testing.T) authn.Keychain {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(`{"auths": {"`+reg.Host+`": {"auth": "`+secret+`"`), 0o600)
			return registry.ContainersKeychain(path)
		}, registry.ClassUnauthorized},
		{"auth not base64", func(t *testing.T) authn.Keychain {
			path := filepath.Join(t.TempDir(), "auth.json")
			os.WriteFile(path, []byte(`{"auths": {"`+reg.Host+`": {"auth": "`+secret+`!"}}}`), 0o600)
			return registry.ContainersKeychain(path)
		}, registry.ClassUnauthorized},
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
	for _, leak := range []string{secret, registrytest.BasicAuth(robot, secret), registrytest.BasicAuth(robot, secret+"-old"), "Authorization"} {
		if strings.Contains(s, leak) {
			t.Errorf("output contains %q:\n%s", leak, s)
		}
	}
}
