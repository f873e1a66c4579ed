package registry_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/registry"
)

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
	kc := registry.ContainersKeychain(first, filepath.Join(dir, "missing.json"), second)
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
	got := registry.ContainersAuthFiles(func(k string) string { return env[k] }, "/home/me")
	want := []string{"/etc/auth.json", "/run/user/1000/containers/auth.json", "/home/me/.config/containers/auth.json"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %q, want %q", got, want)
	}
	env = map[string]string{"XDG_CONFIG_HOME": "/cfg"}
	got = registry.ContainersAuthFiles(func(k string) string { return env[k] }, "/home/me")
	if strings.Join(got, " ") != "/cfg/containers/auth.json" {
		t.Errorf("got %q", got)
	}
}
