package signtest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin/common"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin/handler"
)

// kmsKeysEnv names the directory the fake KMS plugin keeps its keys in:
// the plugin is a process of its own, started once per call.
const kmsKeysEnv = "CATALOGBOT_TEST_KMS_KEYS"

// ServeKMSPlugin answers one call of sigstore's KMS plugin protocol and
// exits, when the test binary was started as a plugin (by the name
// sigstore-kms-SCHEME that KMSPlugin gives it); otherwise it returns at
// once. A test package that uses KMSPlugin calls it first in TestMain.
func ServeKMSPlugin() {
	if !strings.HasPrefix(filepath.Base(os.Args[0]), cliplugin.PluginBinaryPrefix) {
		return
	}
	if err := servePlugin(os.Stdout, os.Stdin, os.Args); err != nil {
		// The caller reads errors from stdout; this is for its stderr.
		fmt.Fprintln(os.Stderr, "fake kms plugin:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// KMS is a fake key management service served by the test binary as a
// sigstore KMS plugin (sigstore-kms-SCHEME on $PATH): each call runs the
// plugin anew, which signs with a key it reads from Dir. The keys never
// enter the process under test.
type KMS struct {
	Scheme string
	// Dir holds the keys, NAME.pem, and calls.log, one line per method
	// called ("SCHEME NAME METHOD").
	Dir string
}

// KMSPlugin installs the test binary as the plugin for scheme, on a $PATH
// of the test's own. The test package's TestMain must call ServeKMSPlugin.
func KMSPlugin(t *testing.T, scheme string) *KMS {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, cliplugin.PluginBinaryPrefix+scheme)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	k := &KMS{Scheme: scheme, Dir: t.TempDir()}
	t.Setenv(kmsKeysEnv, k.Dir)
	return k
}

// NewKey creates the ECDSA P-256 key name in the service and returns its
// reference (SCHEME://NAME) and its public key as PEM.
func (k *KMS) NewKey(t *testing.T, name string) (ref string, pubPEM []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privPEM, err := cryptoutils.MarshalPrivateKeyToPEM(priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.Dir, name+".pem"), privPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if pubPEM, err = cryptoutils.MarshalPublicKeyToPEM(priv.Public()); err != nil {
		t.Fatal(err)
	}
	return k.Scheme + "://" + name, pubPEM
}

// Env is what a process that runs the plugin needs in its environment
// besides the $PATH KMSPlugin set: where the plugin's keys are.
func (k *KMS) Env() []string { return []string{kmsKeysEnv + "=" + k.Dir} }

// Calls are the plugin's calls so far, "NAME METHOD" each.
func (k *KMS) Calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k.Dir, "calls.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

var keyName = regexp.MustCompile(`^[a-z0-9-]+$`)

// servePlugin is the plugin: arguments as sigstore's protocol passes them
// (the protocol version, then the call as JSON), the message on stdin, the
// answer as JSON on stdout.
func servePlugin(stdout io.Writer, stdin io.Reader, args []string) error {
	pa, err := handler.GetPluginArgs(args)
	if err != nil {
		return handler.WriteErrorResponse(stdout, err)
	}
	if args[1] != common.ProtocolVersion {
		return handler.WriteErrorResponse(stdout, fmt.Errorf("protocol %s, this plugin speaks %s", args[1], common.ProtocolVersion))
	}
	dir, name := os.Getenv(kmsKeysEnv), pa.InitOptions.KeyResourceID
	if log, err := os.OpenFile(filepath.Join(dir, "calls.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintf(log, "%s %s\n", name, pa.MethodName)
		log.Close()
	}
	if !keyName.MatchString(name) {
		return handler.WriteErrorResponse(stdout, fmt.Errorf("key %q: not a key name", name))
	}
	data, err := os.ReadFile(filepath.Join(dir, name+".pem"))
	if err != nil {
		return handler.WriteErrorResponse(stdout, fmt.Errorf("no key %q in this KMS", name))
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(data, cryptoutils.SkipPassword)
	if err != nil {
		return handler.WriteErrorResponse(stdout, err)
	}
	ec, ok := priv.(*ecdsa.PrivateKey)
	if !ok {
		return handler.WriteErrorResponse(stdout, errors.New("not an ECDSA key"))
	}
	sv, err := signature.LoadECDSASignerVerifier(ec, pa.InitOptions.HashFunc)
	if err != nil {
		return handler.WriteErrorResponse(stdout, err)
	}
	_, err = handler.Dispatch(stdout, stdin, pa, pluginKey{sv})
	return err
}

// pluginKey is the key as the plugin handler takes it: a SignerVerifier
// and the methods of a KMS a signer does not call over the protocol.
type pluginKey struct{ *signature.ECDSASignerVerifier }

func (pluginKey) CreateKey(context.Context, string) (crypto.PublicKey, error) {
	return nil, errors.New("the fake KMS creates no keys")
}

func (pluginKey) CryptoSigner(context.Context, func(error)) (crypto.Signer, crypto.SignerOpts, error) {
	return nil, nil, errors.New("the fake KMS hands out no crypto.Signer")
}

func (pluginKey) SupportedAlgorithms() []string { return []string{"ecdsa-p256-sha256"} }
func (pluginKey) DefaultAlgorithm() string      { return "ecdsa-p256-sha256" }
