package sign

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sigstore/sigstore/pkg/signature/kms"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/catalogbot/catalogbot/publisher/sign/keyref"
)

// IsKMSRef says whether key names a key held by a key management service
// (scheme://…, as cosign names them: hashivault://KEY, awskms:///ARN, …)
// rather than a key file (keyref.IsKMS).
func IsKMSRef(key string) bool { return keyref.IsKMS(key) }

// KMSPluginPrefix begins the name of the executable that serves a scheme
// no provider is compiled in for, as sigstore's KMS plugins are named:
// sigstore-kms-awskms for awskms://.
const KMSPluginPrefix = cliplugin.PluginBinaryPrefix

// LoadKMS is a signer whose key stays in the key management service ref
// names: each signature is made there, and only the public key is read
// into the process. A provider compiled in serves its scheme
// (CompiledKMSSchemes); any other scheme is served by the executable
// sigstore-kms-SCHEME on $PATH, as cosign finds its KMS plugins. The
// public key is read once here, so that a key that cannot be reached or
// does not exist fails now, naming ref, not at the first signature.
func LoadKMS(ctx context.Context, ref string) (*Signer, error) {
	sv, err := kms.Get(ctx, ref, crypto.SHA256)
	if err != nil {
		return nil, kmsError(ref, err)
	}
	pub, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: reading its public key: %w", ref, err)
	}
	return &Signer{sv: sv, pub: pub}, nil
}

// KMSPublicKey is the public key of the KMS key ref names, what a verifier
// given the KMS reference checks signatures with.
func KMSPublicKey(ctx context.Context, ref string) (crypto.PublicKey, error) {
	s, err := LoadKMS(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.pub, nil
}

// kmsError says what to do when no provider serves ref's scheme: sigstore
// says only that none was found.
func kmsError(ref string, err error) error {
	var notFound *kms.ProviderNotFoundError
	if !errors.As(err, &notFound) {
		return fmt.Errorf("signing key %s: %w", ref, err)
	}
	scheme, _, _ := strings.Cut(ref, "://")
	builtin := "no provider"
	if s := CompiledKMSSchemes(); len(s) > 0 {
		builtin = strings.Join(s, ", ")
	}
	return fmt.Errorf("signing key %s: no KMS provider for %s://: catalogbot has %s built in; any other scheme needs a sigstore KMS plugin, an executable named %s%s on $PATH",
		ref, scheme, builtin, KMSPluginPrefix, scheme)
}

// CompiledKMSSchemes are the KMS schemes served without a plugin, such as
// "hashivault://".
func CompiledKMSSchemes() []string {
	s := kms.SupportedProviders()
	slices.Sort(s)
	return s
}
