package registry

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/docker/cli/cli/config/types"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// DefaultKeychain is Keychain with no auth file of its own: the one
// keychain of every command.
func DefaultKeychain() authn.Keychain { return Keychain("") }

// Keychain finds credentials the way container tools on the same machine
// do, and in this order, the first file with an entry for the repository
// or its registry winning:
//
//  1. authFile, or $REGISTRY_AUTH_FILE when authFile is empty;
//  2. the containers auth files podman, skopeo and buildah write:
//     $XDG_RUNTIME_DIR/containers/auth.json, then
//     ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json;
//  3. docker's config.json in $DOCKER_CONFIG or ~/.docker, with its
//     credHelpers and credsStore (docker-credential-NAME on PATH).
//
// A repository none of them names is reached anonymously. The environment
// is read when the keychain is made.
func Keychain(authFile string) authn.Keychain {
	home, _ := os.UserHomeDir()
	return newKeychain(os.Getenv, home, authFile)
}

func newKeychain(getenv func(string) string, home, authFile string) authn.Keychain {
	if authFile != "" {
		getenv = overrideEnv(getenv, "REGISTRY_AUTH_FILE", authFile)
	}
	dockerDir := getenv("DOCKER_CONFIG")
	if dockerDir == "" && home != "" {
		dockerDir = filepath.Join(home, ".docker")
	}
	return authn.NewMultiKeychain(
		ContainersKeychain(containersAuthFiles(getenv, home)...),
		&dockerKeychain{dir: dockerDir},
	)
}

func overrideEnv(getenv func(string) string, key, value string) func(string) string {
	return func(k string) string {
		if k == key {
			return value
		}
		return getenv(k)
	}
}

// dockerKeychain reads docker's config.json in dir, as the docker CLI does:
// an entry in auths, or the credential helper credHelpers names for the
// registry, or the credsStore for all registries. Unlike
// go-containerregistry's default keychain it never falls back to the
// containers auth files, whose order Keychain decides.
type dockerKeychain struct {
	dir string
}

func (k *dockerKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	if k.dir == "" {
		return authn.Anonymous, nil
	}
	path := filepath.Join(k.dir, config.ConfigFileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return authn.Anonymous, nil
	}
	cf, err := config.Load(k.dir)
	if err != nil {
		// The parser's errors may quote the file's content: say only
		// which file.
		return nil, &CredentialError{Registry: target.RegistryStr(), Err: fmt.Errorf("%s is not a readable docker config", path)}
	}
	// A repository's own auths entry is honoured, as go-containerregistry
	// does; but a credential helper for the registry comes first, as in
	// docker, so credsStore is not asked for the repository before it.
	keys := []string{target.String(), target.RegistryStr()}
	if _, ok := cf.CredentialHelpers[target.RegistryStr()]; ok {
		keys = keys[1:]
	}
	for _, key := range keys {
		if key == name.DefaultRegistry {
			key = authn.DefaultAuthKey
		}
		cfg, err := cf.GetAuthConfig(key)
		if err != nil {
			// A helper's error goes unquoted too: it is its output.
			return nil, &CredentialError{Registry: target.RegistryStr(), Err: fmt.Errorf("the credential helper for %s in %s failed", key, path)}
		}
		cfg.ServerAddress = ""
		if cfg != (types.AuthConfig{}) {
			return authn.FromConfig(authn.AuthConfig{
				Username:      cfg.Username,
				Password:      cfg.Password,
				Auth:          cfg.Auth,
				IdentityToken: cfg.IdentityToken,
				RegistryToken: cfg.RegistryToken,
			}), nil
		}
	}
	return authn.Anonymous, nil
}

// containersAuthFiles lists the containers auth files in the order they are
// consulted: $REGISTRY_AUTH_FILE, ${XDG_RUNTIME_DIR}/containers/auth.json,
// then ${XDG_CONFIG_HOME:-~/.config}/containers/auth.json. Files that do not
// exist are skipped when credentials are looked up.
func containersAuthFiles(getenv func(string) string, home string) []string {
	var files []string
	if f := getenv("REGISTRY_AUTH_FILE"); f != "" {
		files = append(files, f)
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		files = append(files, filepath.Join(d, "containers", "auth.json"))
	}
	config := getenv("XDG_CONFIG_HOME")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	if config != "" {
		files = append(files, filepath.Join(config, "containers", "auth.json"))
	}
	return files
}

// ContainersKeychain reads credentials from files in the containers
// auth.json format (containers-auth.json(5)):
//
//	{"auths": {"quay.io/example": {"auth": "<base64 of user:password>"}}}
//
// Keys name a registry, or a namespace or repository in it; the most
// specific key that matches wins, and the first file with a match wins.
// Credential helpers named in these files are not run: configure them in
// docker's config.json, which Keychain also reads.
func ContainersKeychain(files ...string) authn.Keychain {
	return &containersKeychain{files: files}
}

type containersKeychain struct {
	files []string
}

type authFile struct {
	Auths map[string]authEntry `json:"auths"`
}

type authEntry struct {
	Auth          string `json:"auth"`
	IdentityToken string `json:"identitytoken"`
}

func (k *containersKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	keys := lookupKeys(target)
	for _, path := range k.files {
		entries, err := readAuthFile(path)
		if err != nil {
			return nil, &CredentialError{Registry: target.RegistryStr(), Err: err}
		}
		for _, key := range keys {
			e, ok := entries[key]
			if !ok {
				continue
			}
			cfg, err := e.config()
			if err != nil {
				return nil, &CredentialError{Registry: target.RegistryStr(), Err: fmt.Errorf("%s, entry %q: %w", path, key, err)}
			}
			return authn.FromConfig(cfg), nil
		}
	}
	return authn.Anonymous, nil
}

// readAuthFile reads the auths of one file, keyed by normalised key. A
// missing file has no entries.
func readAuthFile(path string) (map[string]authEntry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f authFile
	if err := json.Unmarshal(data, &f); err != nil {
		// json's syntax errors quote the character they stop at, which
		// could be part of a secret: say only where.
		var serr *json.SyntaxError
		if errors.As(err, &serr) {
			return nil, fmt.Errorf("%s is not valid JSON (at byte %d)", path, serr.Offset)
		}
		return nil, fmt.Errorf("%s is not a containers auth file", path)
	}
	entries := make(map[string]authEntry, len(f.Auths))
	for key, e := range f.Auths {
		entries[normaliseKey(key)] = e
	}
	return entries, nil
}

// normaliseKey turns the legacy docker forms of a key
// ("https://index.docker.io/v1/", "http://host:5000") into the host they
// name, and docker.io's aliases into docker.io.
func normaliseKey(key string) string {
	if rest, ok := strings.CutPrefix(key, "https://"); ok {
		key, _, _ = strings.Cut(rest, "/")
	} else if rest, ok := strings.CutPrefix(key, "http://"); ok {
		key, _, _ = strings.Cut(rest, "/")
	}
	host, path, _ := strings.Cut(key, "/")
	if host == name.DefaultRegistry || host == "registry-1.docker.io" {
		host = "docker.io"
	}
	if path == "" {
		return host
	}
	return host + "/" + path
}

// lookupKeys lists the keys that apply to target, most specific first:
// quay.io/a/b/c, quay.io/a/b, quay.io/a, quay.io.
func lookupKeys(target authn.Resource) []string {
	host := target.RegistryStr()
	if host == name.DefaultRegistry {
		host = "docker.io"
	}
	path := strings.TrimPrefix(target.String(), target.RegistryStr())
	path = strings.Trim(path, "/")
	var keys []string
	for path != "" {
		keys = append(keys, host+"/"+path)
		i := strings.LastIndex(path, "/")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return append(keys, host)
}

func (e authEntry) config() (authn.AuthConfig, error) {
	cfg := authn.AuthConfig{IdentityToken: e.IdentityToken}
	if e.Auth != "" {
		raw, err := base64.StdEncoding.DecodeString(e.Auth)
		if err != nil {
			return cfg, errors.New("auth is not base64")
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return cfg, errors.New("auth is not the base64 of user:password")
		}
		cfg.Username, cfg.Password = user, pass
	}
	return cfg, nil
}
