package propose

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

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
	// Tags, when set, keeps each tag list with its ETag and asks the
	// registry with If-None-Match the next time: a poll of a repository
	// that did not change costs a 304 and no body. Nil lists in full.
	Tags *TagCache
}

// TagCache keeps tag lists by URL, for conditional requests. It is safe
// for concurrent use; a process keeps one for all its polls.
type TagCache struct {
	mu    sync.Mutex
	lists map[string]cachedList
}

type cachedList struct {
	etag   string
	header http.Header
	body   []byte
}

// NewTagCache is an empty cache.
func NewTagCache() *TagCache { return &TagCache{lists: map[string]cachedList{}} }

// transport answers a tag list the registry says is unchanged (304) from
// the cache, and keeps every tag list that comes with an ETag.
func (c *TagCache) transport(base http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, "/tags/list") {
			return base.RoundTrip(req)
		}
		key := req.URL.String()
		c.mu.Lock()
		cached, ok := c.lists[key]
		c.mu.Unlock()
		if ok {
			req = req.Clone(req.Context())
			req.Header.Set("If-None-Match", cached.etag)
		}
		resp, err := base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusNotModified && ok:
			resp.Body.Close()
			return &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
				Header: cached.header.Clone(), Body: io.NopCloser(bytes.NewReader(cached.body)), ContentLength: int64(len(cached.body)), Request: req}, nil
		case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
			// Tag lists are small (a page is at most a few
			// thousand names); the bound keeps a hostile one out
			// of memory.
			body, err := io.ReadAll(io.LimitReader(resp.Body, maxTagList+1))
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			if len(body) <= maxTagList {
				c.mu.Lock()
				c.lists[key] = cachedList{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body}
				c.mu.Unlock()
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
		}
		return resp, nil
	})
}

// maxTagList is the largest tag list page kept.
const maxTagList = 4 << 20

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

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
	if r.Tags != nil {
		tr = r.Tags.transport(tr)
	}
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
