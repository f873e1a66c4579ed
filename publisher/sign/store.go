package sign

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// The media types and annotations of cosign's storage.
const (
	SimpleSigningMediaType types.MediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	DSSEMediaType          types.MediaType = "application/vnd.dsse.envelope.v1+json"
	InTotoPayloadType                      = "application/vnd.in-toto+json"

	AnnSignature     = "dev.cosignproject.cosign/signature"
	AnnCertificate   = "dev.sigstore.cosign/certificate"
	AnnChain         = "dev.sigstore.cosign/chain"
	AnnPredicateType = "predicateType"

	SignatureSuffix   = "sig"
	AttestationSuffix = "att"
)

// Tag is the tag under which cosign keeps the signatures (suffix "sig") or
// attestations ("att") of digest in its repository: sha256-<hex>.<suffix>.
func Tag(digest name.Digest, suffix string) name.Tag {
	return digest.Context().Tag(strings.Replace(digest.DigestStr(), ":", "-", 1) + "." + suffix)
}

// SignImage signs digest and adds the signature to the image's .sig tag,
// keeping the signatures already there, as `cosign sign` does.
func SignImage(ctx context.Context, s *Signer, digest name.Digest, ropts ...remote.Option) error {
	body, err := payload.Cosign{Image: digest}.MarshalJSON()
	if err != nil {
		return err
	}
	sig, err := s.signMessage(ctx, body)
	if err != nil {
		return fmt.Errorf("sign %s: %w", digest, err)
	}
	anns := s.annotations()
	anns[AnnSignature] = base64.StdEncoding.EncodeToString(sig)
	bundle, err := s.record(ctx, body, sig, func(pub []byte) models.ProposedEntry { return hashedRekordEntry(body, sig, pub) })
	if err != nil {
		return fmt.Errorf("sign %s: %w", digest, err)
	}
	if bundle != "" {
		anns[AnnBundle] = bundle
	}
	return appendLayer(ctx, Tag(digest, SignatureSuffix), static.NewLayer(body, SimpleSigningMediaType), anns, ropts)
}

// Attest wraps statement, an in-toto statement whose subject is digest, in
// a DSSE envelope signed by s and adds it to the image's .att tag, as
// `cosign attest` does.
func Attest(ctx context.Context, s *Signer, digest name.Digest, st *Statement, ropts ...remote.Option) error {
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	env, err := dsse.WrapSigner(s.sv, InTotoPayloadType).SignMessage(bytes.NewReader(body), options.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("attest %s: %w", digest, err)
	}
	anns := s.annotations()
	// cosign marks an attestation layer with an empty signature: the
	// signature is inside the envelope.
	anns[AnnSignature] = ""
	anns[AnnPredicateType] = st.PredicateType
	bundle, err := s.record(ctx, env, nil, func(pub []byte) models.ProposedEntry { return dsseEntry(env, pub) })
	if err != nil {
		return fmt.Errorf("attest %s: %w", digest, err)
	}
	if bundle != "" {
		anns[AnnBundle] = bundle
	}
	return appendLayer(ctx, Tag(digest, AttestationSuffix), static.NewLayer(env, DSSEMediaType), anns, ropts)
}

func (s *Signer) annotations() map[string]string {
	anns := map[string]string{}
	if len(s.cert) > 0 {
		anns[AnnCertificate] = string(s.cert)
		anns[AnnChain] = string(s.chain)
	}
	return anns
}

// appendLayer adds one layer to the image at tag, an empty OCI image when
// there is none yet, and pushes it.
func appendLayer(ctx context.Context, tag name.Tag, layer v1.Layer, anns map[string]string, ropts []remote.Option) error {
	ropts = append(ropts, remote.WithContext(ctx))
	base, err := readTag(tag, ropts)
	if err != nil {
		return err
	}
	if base == nil {
		base = mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	}
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, Annotations: anns, MediaType: mustMediaType(layer)})
	if err != nil {
		return err
	}
	if err := remote.Write(tag, img, ropts...); err != nil {
		return fmt.Errorf("push %s: %w", tag, err)
	}
	return nil
}

func mustMediaType(l v1.Layer) types.MediaType {
	mt, _ := l.MediaType()
	return mt
}

// readTag is the image at tag, or nil when the tag does not exist.
func readTag(tag name.Tag, ropts []remote.Option) (v1.Image, error) {
	img, err := remote.Image(tag, ropts...)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tag, err)
	}
	return img, nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return false
	}
	if terr.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range terr.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}

// layerEntry is one signature or attestation layer as read back.
type layerEntry struct {
	digest      v1.Hash
	body        []byte
	annotations map[string]string
}

// readLayers reads the layers of the image at tag with their annotations;
// none when the tag does not exist.
func readLayers(tag name.Tag, ropts []remote.Option) ([]layerEntry, error) {
	img, err := readTag(tag, ropts)
	if err != nil || img == nil {
		return nil, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tag, err)
	}
	var out []layerEntry
	for _, d := range m.Layers {
		l, err := img.LayerByDigest(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("read %s layer %s: %w", tag, d.Digest, err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, fmt.Errorf("read %s layer %s: %w", tag, d.Digest, err)
		}
		var buf bytes.Buffer
		// Signature layers are small; a registry that serves a huge
		// one is not read whole.
		_, err = buf.ReadFrom(io.LimitReader(rc, 4<<20))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s layer %s: %w", tag, d.Digest, err)
		}
		out = append(out, layerEntry{digest: d.Digest, body: buf.Bytes(), annotations: d.Annotations})
	}
	return out, nil
}
