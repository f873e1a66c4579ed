package propose

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// Registry is how propose reaches the watched repositories: the same
// keychain, insecure hosts and egress rule as the check that judges the
// proposal.
type Registry struct {
	Keychain authn.Keychain
	Insecure []string
	Egress   *egress.Rule
}

// tag is one release found in a repository.
type tag struct {
	Tag     string
	Version semver.Version
}

// releases lists the tags of repo that parse as semantic versions (a
// leading v allowed), pre-releases only when allowed, in ascending order.
// Two tags of one version (1.2.0 and v1.2.0) give the first in tag order.
func releases(tags []string, prereleases bool) []tag {
	var out []tag
	seen := map[string]bool{}
	slices.Sort(tags)
	for _, t := range tags {
		v, err := semver.Parse(strings.TrimPrefix(t, "v"))
		if err != nil || len(v.Pre) > 0 && !prereleases {
			continue
		}
		if seen[v.String()] {
			continue
		}
		seen[v.String()] = true
		out = append(out, tag{Tag: t, Version: v})
	}
	slices.SortStableFunc(out, func(a, b tag) int { return a.Version.Compare(b.Version) })
	return out
}

func (r Registry) options(ctx context.Context, reg string) []remote.Option {
	keychain := r.Keychain
	if keychain == nil {
		keychain = registry.DefaultKeychain()
	}
	var tr http.RoundTripper = timeout.Default()
	if r.Egress != nil {
		d := timeout.Timeout()
		tr = timeout.New(d).WithBase(r.Egress.Transport(egress.Timeouts{Connect: d, TLS: d, Header: d, Idle: d}))
	}
	// Credentials go to the repository's registry alone, and the
	// allowlist of internal hosts leads nowhere else, as for the check.
	tr = r.Egress.Confine(egress.Credentials(tr, reg), reg)
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain), remote.WithTransport(tr)}
}

func (r Registry) repository(repo string) (name.Repository, error) {
	var opts []name.Option
	host, _, _ := strings.Cut(repo, "/")
	if slices.Contains(r.Insecure, host) {
		opts = append(opts, name.Insecure)
	}
	return name.NewRepository(repo, opts...)
}

// list lists the tags of repo.
func (r Registry) list(ctx context.Context, repo string) ([]string, error) {
	rr, err := r.repository(repo)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(rr, r.options(ctx, rr.RegistryStr())...)
	if err != nil {
		return nil, fmt.Errorf("list the tags of %s: %w", repo, explained(err))
	}
	return tags, nil
}

// resolve finds the digest of repo:tag, and the image's creation time
// when soak asks for it. A tag that cannot be read is not a release yet.
func (r Registry) resolve(ctx context.Context, repo, t string, created bool) (v1.Hash, *v1.Time, error) {
	rr, err := r.repository(repo)
	if err != nil {
		return v1.Hash{}, nil, err
	}
	ref := rr.Tag(t)
	opts := r.options(ctx, rr.RegistryStr())
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return v1.Hash{}, nil, explained(err)
	}
	if !created {
		return desc.Digest, nil, nil
	}
	img, err := remote.Image(rr.Digest(desc.Digest.String()), opts...)
	if err != nil {
		return v1.Hash{}, nil, explained(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, nil, fmt.Errorf("%s: config: %w", ref, err)
	}
	return desc.Digest, &cf.Created, nil
}

// explained puts a registry failure in the words and classes every
// command uses (registry.Explain), keeping err for errors.Is and As.
func explained(err error) error {
	class, msg, ok := registry.Explain(err)
	if !ok {
		return err
	}
	return &explainedError{msg: fmt.Sprintf("%s (%s)", msg, class), err: err}
}

type explainedError struct {
	msg string
	err error
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.err }
