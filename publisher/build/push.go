package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// LayoutPrefix names an OCI image layout target: oci:DIR[:TAG].
const LayoutPrefix = "oci:"

// DefaultLayoutTag is the tag of an oci:DIR target that names none.
const DefaultLayoutTag = "latest"

// refNameAnnotation tags a manifest in an OCI layout's index.json.
const refNameAnnotation = "org.opencontainers.image.ref.name"

// PushOptions say how to reach a registry target.
type PushOptions struct {
	// Insecure registries (host[:port]) are reached over plain HTTP.
	Insecure []string
	// Remote are the options for the registry: keychain, transport.
	// BeforeTag, when set, runs once the image is in a registry by
	// digest and before the tag moves (the signing of a publish); its
	// error is Push's, and the tag stays where it was. It does not run
	// when nothing is written (the tag names the digest already), nor
	// for an OCI image layout.
	Remote    []remote.Option
	BeforeTag func() error
}

// Pushed is the outcome of a push.
type Pushed struct {
	Digest v1.Hash
	// Unchanged is true when the target already had this digest under
	// the tag, and nothing was written.
	Unchanged bool
}

// Push publishes the built image to target: a registry reference, or
// oci:DIR[:TAG] for an OCI image layout. A tag is moved only after the
// blobs and the manifest it will point to are in place, so a reader of the
// tag never sees a half-written image; and when the tag already points at
// the digest, nothing is written at all.
func Push(ctx context.Context, res *Result, target string, o PushOptions) (Pushed, error) {
	out := Pushed{Digest: res.Digest}
	if dir, ok := strings.CutPrefix(target, LayoutPrefix); ok {
		unchanged, err := pushLayout(res, dir)
		out.Unchanged = unchanged
		return out, err
	}
	var nopts []name.Option
	if slices.Contains(o.Insecure, registryOf(target)) {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.ParseReference(target, nopts...)
	if err != nil {
		return out, fmt.Errorf("image %q: %w", target, err)
	}
	ropts := append(BoundedRemote(o.Remote, ref.Context().RegistryStr()), remote.WithContext(ctx))

	// A HEAD of the manifest costs no pull quota and, when the digest
	// matches, is the only request made.
	desc, err := remote.Head(ref, ropts...)
	switch {
	case err == nil && desc.Digest == res.Digest:
		out.Unchanged = true
		return out, nil
	case err != nil && !isNotFound(err):
		return out, fmt.Errorf("check %s: %w", target, err)
	}
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != res.Digest.String() {
		return out, fmt.Errorf("image %s names digest %s, but the built image is %s", target, d.DigestStr(), res.Digest)
	}

	byDigest := ref.Context().Digest(res.Digest.String())
	if res.Index != nil {
		err = remote.WriteIndex(byDigest, res.Index, ropts...)
	} else {
		err = remote.Write(byDigest, res.Image, ropts...)
	}
	if err != nil {
		return out, fmt.Errorf("push %s: %w", target, err)
	}
	if o.BeforeTag != nil {
		if err := o.BeforeTag(); err != nil {
			return out, err
		}
	}
	if tag, ok := ref.(name.Tag); ok {
		if err := remote.Tag(tag, res.Artifact(), ropts...); err != nil {
			return out, fmt.Errorf("tag %s: %w", target, err)
		}
	}
	return out, nil
}

func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == 404
}

// SplitLayout splits oci:DIR[:TAG]'s DIR[:TAG] part. A colon followed by
// a path separator is part of the directory, so oci:C:\x and oci:a:b/c
// stay whole.
func SplitLayout(spec string) (dir, tag string) {
	dir, tag = spec, DefaultLayoutTag
	if i := strings.LastIndexByte(spec, ':'); i >= 0 && !strings.ContainsAny(spec[i+1:], `/\`) {
		dir, tag = spec[:i], spec[i+1:]
	}
	return dir, tag
}

// pushLayout writes the image into the OCI layout in spec, creating it if
// needed, under its tag. The blobs go first and index.json last, so the
// layout never names a blob it does not have.
func pushLayout(res *Result, spec string) (unchanged bool, err error) {
	dir, tag := SplitLayout(spec)
	if dir == "" || tag == "" {
		return false, fmt.Errorf("invalid OCI layout target %q: want oci:DIR[:TAG]", LayoutPrefix+spec)
	}
	p, err := layout.FromPath(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// Create the layout, but never inside a directory that holds
		// something else: it would be mixed into the image store.
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			return false, fmt.Errorf("%s is not an OCI image layout (no index.json) and not empty", dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		p, err = layout.Write(dir, empty.Index)
	}
	if err != nil {
		return false, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return false, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return false, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	tagged := match.Annotation(refNameAnnotation, tag)
	for _, d := range m.Manifests {
		if tagged(d) && d.Digest == res.Digest {
			return true, nil
		}
	}
	opt := layout.WithAnnotations(map[string]string{refNameAnnotation: tag})
	if res.Index != nil {
		err = p.ReplaceIndex(res.Index, tagged, opt)
	} else {
		err = p.ReplaceImage(res.Image, tagged, opt)
	}
	if err != nil {
		return false, fmt.Errorf("write OCI layout %s: %w", dir, err)
	}
	return false, nil
}
