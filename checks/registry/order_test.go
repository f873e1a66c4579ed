package registry_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks/registry"
)

// The sources TestKeychainOrder can set up; each gives its own user, so
// that the user found tells which source won.
const (
	srcAuthFile   = "auth-file"      // Keychain's own auth file
	srcRegistry   = "registry-auth"  // $REGISTRY_AUTH_FILE
	srcRuntime    = "runtime"        // $XDG_RUNTIME_DIR/containers/auth.json
	srcConfig     = "config"         // $XDG_CONFIG_HOME/containers/auth.json
	srcHomeConfig = "home-config"    // ~/.config/containers/auth.json
	srcDocker     = "docker"         // $DOCKER_CONFIG/config.json auths
	srcHomeDocker = "home-docker"    // ~/.docker/config.json auths
	srcHelper     = "helper"         // credHelpers in $DOCKER_CONFIG/config.json
	srcStore      = "store"          // credsStore in $DOCKER_CONFIG/config.json
	srcOther      = "other-registry" // $REGISTRY_AUTH_FILE, for another registry only
)

const orderHost = "registry.example.com:5000"

// TestKeychainOrder: the auth file given, or $REGISTRY_AUTH_FILE, beats the
// containers auth.json files, which beat docker's config.json; in docker's
// config a credential helper for the registry beats credsStore, which
// beats auths. A source without an entry for the registry is passed over.
func TestKeychainOrder(t *testing.T) {
	tests := []struct {
		name    string
		sources []string
		want    string // the user found; "" for anonymous
	}{
		{"nothing configured", nil, ""},
		{"all of them", []string{srcRegistry, srcRuntime, srcConfig, srcDocker, srcHelper}, srcRegistry},
		{"the App's auth file stands for REGISTRY_AUTH_FILE", []string{srcAuthFile, srcRegistry, srcRuntime}, srcAuthFile},
		{"runtime auth.json before the config one", []string{srcRuntime, srcConfig, srcDocker}, srcRuntime},
		{"containers auth.json before docker", []string{srcConfig, srcDocker}, srcConfig},
		{"~/.config without XDG_CONFIG_HOME", []string{srcHomeConfig, srcDocker}, srcHomeConfig},
		{"DOCKER_CONFIG", []string{srcDocker}, srcDocker},
		{"DOCKER_CONFIG before ~/.docker", []string{srcDocker, srcHomeDocker}, srcDocker},
		{"~/.docker without DOCKER_CONFIG", []string{srcHomeDocker}, srcHomeDocker},
		{"credHelpers", []string{srcHelper}, srcHelper},
		{"credHelpers before credsStore", []string{srcHelper, srcStore}, srcHelper},
		{"credsStore", []string{srcStore}, srcStore},
		{"an auth file for another registry is passed over", []string{srcOther, srcDocker}, srcDocker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authFile := setupSources(t, tt.sources)
			ref, err := name.NewRepository(orderHost + "/team/app")
			if err != nil {
				t.Fatal(err)
			}
			auth, err := registry.Keychain(authFile).Resolve(ref)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := auth.Authorization()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Username != tt.want {
				t.Errorf("user %q, want %q", cfg.Username, tt.want)
			}
			if tt.want != "" && cfg.Password != "pw-"+tt.want {
				t.Errorf("password %q, want %q", cfg.Password, "pw-"+tt.want)
			}
		})
	}
}

// setupSources points the environment at a fresh home and writes the
// sources named; it returns the auth file for Keychain, if one was named.
func setupSources(t *testing.T, sources []string) (authFile string) {
	home := t.TempDir()
	bin := t.TempDir()
	for _, k := range []string{"REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "DOCKER_CONFIG"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	auth := func(user string) map[string]any {
		return map[string]any{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":pw-" + user))}
	}
	entry := func(host, user string) map[string]any {
		return map[string]any{"auths": map[string]any{host: auth(user)}}
	}
	dockerDir := filepath.Join(home, "docker-config")
	docker := map[string]any{}
	for _, src := range sources {
		switch src {
		case srcAuthFile:
			authFile = writeJSON(t, filepath.Join(home, "app-auth.json"), entry(orderHost, src))
		case srcRegistry:
			t.Setenv("REGISTRY_AUTH_FILE", writeJSON(t, filepath.Join(home, "registry-auth.json"), entry(orderHost, src)))
		case srcOther:
			t.Setenv("REGISTRY_AUTH_FILE", writeJSON(t, filepath.Join(home, "other-auth.json"), entry("quay.io", src)))
		case srcRuntime:
			dir := filepath.Join(home, "run")
			writeJSON(t, filepath.Join(dir, "containers", "auth.json"), entry(orderHost, src))
			t.Setenv("XDG_RUNTIME_DIR", dir)
		case srcConfig:
			dir := filepath.Join(home, "xdg-config")
			writeJSON(t, filepath.Join(dir, "containers", "auth.json"), entry(orderHost, src))
			t.Setenv("XDG_CONFIG_HOME", dir)
		case srcHomeConfig:
			writeJSON(t, filepath.Join(home, ".config", "containers", "auth.json"), entry(orderHost, src))
		case srcHomeDocker:
			writeJSON(t, filepath.Join(home, ".docker", "config.json"), entry(orderHost, src))
		case srcDocker:
			docker["auths"] = map[string]any{orderHost: auth(src)}
		case srcHelper:
			writeHelper(t, bin, src)
			docker["credHelpers"] = map[string]string{orderHost: src}
		case srcStore:
			writeHelper(t, bin, src)
			docker["credsStore"] = src
		}
	}
	if len(docker) > 0 {
		writeJSON(t, filepath.Join(dockerDir, "config.json"), docker)
		t.Setenv("DOCKER_CONFIG", dockerDir)
	}
	return authFile
}

func writeJSON(t *testing.T, path string, v any) string {
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

// writeHelper puts docker-credential-NAME in bin: a credential helper that
// answers every get with user NAME and password pw-NAME.
func writeHelper(t *testing.T, bin, helper string) {
	t.Helper()
	script := `#!/bin/sh
[ "$1" = get ] || exit 1
read -r server
printf '{"ServerURL":"%s","Username":"` + helper + `","Secret":"pw-` + helper + `"}' "$server"
`
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-"+helper), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

var _ authn.Keychain = registry.Keychain("")
