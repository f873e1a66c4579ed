package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/spf13/pflag"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/publishing"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// signFlags are the signing flags of publish and rebuild.
type signFlags struct {
	key     string
	keyless bool
	fulcio  string
	// tlog and rekor are cosign's --tlog-upload and --rekor-url.
	tlog  bool
	rekor string
}

func (s *signFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&s.key, "sign-key", "", "sign the image and its attestations with this `KEY`: a cosign private key file (password in $COSIGN_PASSWORD), or a KMS key as cosign names them (hashivault://NAME; another scheme://... through a plugin sigstore-kms-SCHEME on $PATH)")
	fl.BoolVar(&s.keyless, "sign-keyless", false, "sign keyless: a Fulcio certificate for the GitHub Actions workflow's OIDC identity")
	fl.StringVar(&s.fulcio, "fulcio-url", sign.DefaultFulcioURL, "the Fulcio `URL` for --sign-keyless")
	fl.BoolVar(&s.tlog, "tlog-upload", true, "upload each signature and attestation to the Rekor transparency log, as cosign does; an upload that fails fails the publish (false: verifiers need --insecure-ignore-tlog)")
	fl.StringVar(&s.rekor, "rekor-url", sign.DefaultRekorURL, "the Rekor transparency log `URL` signatures are uploaded to")
}

// check refuses both ways of signing at once.
func (s signFlags) check(cmdPath string) error {
	if s.key != "" && s.keyless {
		return usageErrorf(cmdPath, "give one of --sign-key and --sign-keyless")
	}
	return nil
}

// mode is the publish.sign mode the flags ask for, "" for none given.
func (s signFlags) mode() string {
	switch {
	case s.key != "":
		return policy.SignKey
	case s.keyless:
		return policy.SignKeyless
	}
	return ""
}

// signer is the signer for mode, from what the flags hold.
func (s signFlags) signer(ctx context.Context, mode string) (*sign.Signer, error) {
	w := publishing.SignWith{Key: s.key, Keyless: sign.KeylessOptions{FulcioURL: s.fulcio}}
	if s.tlog {
		w.Log = &sign.Rekor{URL: s.rekor}
	}
	return publishing.NewSigner(ctx, mode, w)
}

// builder is catalogbot, this version, as provenance names the builder.
func (a *app) builder() sign.Builder {
	return sign.Builder{ID: sign.BuilderID, Version: map[string]string{"catalogbot": a.version}}
}

// gitSource is the repository (its origin's URL, else its directory), the
// commit and the root of the work tree that holds dir; empty when dir is
// in none, and the attestations then record no commit. The commit is rev
// resolved, as change.TreeFS resolves it for the tree that is published,
// or, with no rev, the one checked out: what is recorded is what was
// built, whatever the work tree holds.
func gitSource(dir, rev string) (repository, commit, root string, err error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		if rev != "" {
			return "", "", "", fmt.Errorf("%s: %w", dir, err)
		}
		return "", "", "", nil
	}
	if rev != "" {
		if commit, err = change.Resolve(repo, rev); err != nil {
			return "", "", "", err
		}
	} else if head, err := repo.Head(); err == nil {
		commit = head.Hash().String()
	} else {
		return "", "", "", nil
	}
	if wt, err := repo.Worktree(); err == nil {
		root, _ = filepath.Abs(wt.Filesystem.Root())
	}
	repository = root
	if r, err := repo.Remote("origin"); err == nil && len(r.Config().URLs) > 0 {
		repository = r.Config().URLs[0]
	}
	return repository, commit, root, nil
}

// signOptions sets what a signed publish needs in opts: the signer for
// mode, the builder, and the source: the git commit of path (the
// repository, catalog directory or catalog.yaml published) and, for a
// repository tree, the approval record with the policy's revision; the
// approvals themselves are not known here. rev is the revision the tree
// was read at, "" for the work tree.
func (a *app) signOptions(ctx context.Context, s signFlags, mode string, pol *policy.Policy, tree fs.FS, path, rev string, opts *publish.Options) error {
	signer, err := s.signer(ctx, mode)
	if err != nil {
		return err
	}
	if signer == nil {
		return nil
	}
	opts.Signer, opts.Builder = signer, a.builder()
	dir := path
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		dir = filepath.Dir(path)
	}
	repository, commit, root, err := gitSource(dir, rev)
	if err != nil {
		return err
	}
	if pol != nil {
		opts.Source, opts.Approval = publishing.Provenance(pol, tree, repository, commit)
		return nil
	}
	// The path is recorded from the root of the repository, where a
	// rebuild of the commit finds it.
	if abs, err := filepath.Abs(path); err == nil && root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil {
			path = rel
		}
	}
	opts.Source = sign.Source{Repository: repository, Commit: commit, Path: filepath.ToSlash(path)}
	return nil
}
