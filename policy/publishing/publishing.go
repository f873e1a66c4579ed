// Package publishing translates a repository's policy into what the
// publish flow takes: the source and options of each catalog, the signer
// the policy asks for and what the attestations record. It lives apart
// from the policy reader so that reading a policy (the App's intake, the
// review core) does not link the signing stack.
package publishing

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// PublishTarget is one catalog's publication: what the publish flow takes
// for it.
type PublishTarget struct {
	// Catalog is the catalog's name, "" for the one catalog of a policy
	// with no catalogs list.
	Catalog string
	Source  publish.Source
	// Options hold the image and the build the policy names; the rest
	// (credentials, caches, the user agent) are the caller's. Image is ""
	// when the catalog is not published.
	Options publish.Options
}

// Inputs translates the policy into what the publish flow takes for
// the repository tree at one commit, one entry per catalog: the reference
// list when the repository has one (one catalog, assembled from it), else
// each catalog's roots with its publish target. The roots are the ones the
// pull request check validated as that catalog (see policy.Policy.Targets), so what is
// published is what was checked. The App on a push and `catalogbot publish
// --repo` both use it, so that one commit gives the same images whichever
// publishes them.
func Inputs(p *policy.Policy, tree fs.FS) ([]PublishTarget, error) {
	opts := func(catalog, image string) publish.Options {
		return publish.Options{
			Image:   image,
			Catalog: catalog,
			Build:   build.Options{Base: p.Publish.Base, OPMImage: p.Publish.OPMImage, Platforms: p.Publish.Platforms},
		}
	}
	if list := p.Catalog.ReferenceListIn(tree); list != "" {
		return []PublishTarget{{
			Source:  publish.Source{Tree: tree, ReferenceList: list},
			Options: opts("", p.Publish.Image),
		}}, nil
	}
	targets, err := p.Targets(tree)
	if err != nil {
		return nil, err
	}
	out := make([]PublishTarget, 0, len(targets))
	for _, t := range targets {
		out = append(out, PublishTarget{
			Catalog: t.Name,
			Source:  publish.Source{Tree: tree, Roots: t.Roots},
			Options: opts(t.Name, t.Image),
		})
	}
	return out, nil
}

// SignWith is what a publisher holds to sign with: its configuration,
// never the repository's.
type SignWith struct {
	// Key is a cosign key pair's private key file, its password in
	// $COSIGN_PASSWORD as cosign reads it; or a KMS reference as cosign
	// names them (scheme://…, see sign.IsKMSRef), whose private key
	// never leaves the service.
	Key string
	// Keyless configures Fulcio and the OIDC token for SignKeyless.
	Keyless sign.KeylessOptions
	// Log is the transparency log every signature and attestation is
	// uploaded to, as cosign does by default; nil uploads nothing, and
	// verifiers must then skip the log (--insecure-ignore-tlog).
	Log *sign.Rekor
}

// Signer is the signer the policy's publish.sign asks for (nil for
// SignNone), made from what the publisher holds.
func Signer(ctx context.Context, p *policy.Policy, w SignWith) (*sign.Signer, error) {
	return NewSigner(ctx, p.Publish.Sign, w)
}

// NewSigner is the signer for a publish.sign mode: SignKey reads the key
// file or reaches the KMS key, SignKeyless asks Fulcio for a certificate;
// a mode that asks for what the publisher does not hold is an error,
// never an unsigned image. The App and the CLI both sign through it.
func NewSigner(ctx context.Context, mode string, w SignWith) (*sign.Signer, error) {
	s, err := newSigner(ctx, mode, w)
	if err != nil || s == nil {
		return nil, err
	}
	return s.WithLog(w.Log), nil
}

func newSigner(ctx context.Context, mode string, w SignWith) (*sign.Signer, error) {
	switch mode {
	case "", policy.SignNone:
		return nil, nil
	case policy.SignKey:
		if w.Key == "" {
			return nil, errors.New("publish.sign is key, and the publisher has no signing key (the App's publish.signKey, the CLI's --sign-key)")
		}
		if sign.IsKMSRef(w.Key) {
			return sign.LoadKMS(ctx, w.Key)
		}
		return sign.LoadKeyFile(w.Key)
	case policy.SignKeyless:
		return sign.Keyless(ctx, w.Keyless)
	}
	return nil, fmt.Errorf("publish.sign %q: want none, key or keyless", mode)
}

// Provenance is what the attestations of a publish record about the
// source: the repository and commit, and the approval predicate with the
// policy's revision (FileName and the git id of its content at commit).
// Approvals are left to the caller that knows them (ApprovalsRecorded
// false until then).
func Provenance(p *policy.Policy, tree fs.FS, repository, commit string) (sign.Source, *sign.Approval) {
	rev := sign.Revision{Path: policy.FileName, Commit: commit}
	if data, err := fs.ReadFile(tree, policy.FileName); err == nil {
		rev.Blob = gitBlobID(data)
	}
	return sign.Source{Repository: repository, Commit: commit, Path: "."}, &sign.Approval{
		Repository: repository,
		Commit:     commit,
		Policy:     rev,
		Note:       "the commit and the policy are recorded; the approvals of the changes are not known to this publisher",
		Packages:   []sign.Package{},
		Checks:     []sign.Check{},
	}
}

// gitBlobID is the object id git gives content as a blob.
func gitBlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// RebuildInput is the publish input that rebuilds the image provenance p
// records, from tree, the repository at the recorded commit: what the
// policy there publishes (or the recorded catalog path), on the recorded
// base pinned to its recorded digest, for the recorded platforms and
// time, built only. An assembled catalog's references are resolved anew;
// the caller compares them with the recorded ones.
func RebuildInput(tree fs.FS, p sign.ProvenanceParameters) (publish.Source, publish.Options, error) {
	var src publish.Source
	var opts publish.Options
	if p.Source.Path == "" || p.Source.Path == "." {
		pol, findings, err := policy.Load(tree)
		if err != nil {
			return src, opts, err
		}
		if len(findings) > 0 {
			return src, opts, fmt.Errorf("%s:%d: %s", findings[0].File, findings[0].Line, findings[0].Message)
		}
		inputs, err := Inputs(pol, tree)
		if err != nil {
			return src, opts, err
		}
		// A repository of several catalogs published the one recorded:
		// by its name, wherever it was pushed; for an older record
		// that names none, by the target the policy gave it.
		found := false
		var names []string
		for _, in := range inputs {
			names = append(names, in.Catalog)
			if len(inputs) == 1 && p.Catalog == "" || p.Catalog != "" && in.Catalog == p.Catalog || p.Catalog == "" && sameTarget(in.Options.Image, p.Image) {
				src, opts, found = in.Source, in.Options, true
				break
			}
		}
		if !found && p.Catalog != "" {
			return src, opts, fmt.Errorf("the policy at the recorded commit has no catalog %q", p.Catalog)
		}
		if !found {
			return src, opts, fmt.Errorf("the publication records no catalog, and no catalog of the policy at the recorded commit (%s) publishes %s", strings.Join(names, ", "), p.Image)
		}
	} else {
		info, err := fs.Stat(tree, p.Source.Path)
		if err != nil {
			return src, opts, fmt.Errorf("the recorded catalog %s: %w", p.Source.Path, err)
		}
		src = publish.Source{Tree: tree}
		if info.IsDir() {
			src.Roots = []string{p.Source.Path}
		} else {
			src.ReferenceList = p.Source.Path
		}
	}
	opts.Image, opts.Catalog = p.Image, p.Catalog
	opts.BuildOnly = true
	opts.Build = build.Options{
		Base:       p.Base,
		OPMImage:   p.OPMImage,
		BaseDigest: p.BaseDigest,
		Platforms:  p.Platforms,
	}
	if p.Epoch != 0 {
		opts.Build.Epoch = time.Unix(p.Epoch, 0)
	}
	// An image published before catalogd's view was recorded has no
	// annotations for it; its rebuild must not add them.
	opts.OmitCatalogdAnnotations = p.Catalogd == nil
	if len(p.Refs) > 0 && src.ReferenceList == "" {
		// A catalog directory published with recorded references
		// records them again.
		opts.Build.References = p.Refs
	}
	return src, opts, nil
}

// sameTarget says whether two publish targets name one image, compared
// as the publisher reads them (quay.io/a/b and quay.io/a/b:latest are
// one).
func sameTarget(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ta, err := build.ParseTarget(a)
	if err != nil {
		return a == b
	}
	tb, err := build.ParseTarget(b)
	if err != nil {
		return a == b
	}
	return ta.String() == tb.String()
}
