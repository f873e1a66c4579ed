package images

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
)

// Options configure a Verifier. The zero value of each field means its
// default.
type Options struct {
	Policy Policy

	// Concurrency bounds the references checked at once, overall
	// (default 16); PerRegistry bounds them per registry host (default
	// 4), so that one large registry cannot starve the others, and so
	// that no registry sees a burst it would answer with 429s.
	Concurrency int
	PerRegistry int

	// Timeout bounds every single request, the reading of its response
	// included (default 30 s).
	Timeout time.Duration
	// Attempts is how often a request is tried in all before its failure
	// counts (default 4).
	Attempts int
	// Backoff spaces the retries (default registry.DefaultBackoff). A Retry-After
	// sent with a 429 or 503 takes its place, unless it asks for more
	// than MaxRetryAfter (default 1 minute).
	Backoff       registry.Backoff
	MaxRetryAfter time.Duration

	// Keychain finds the credentials for a repository (default
	// registry.DefaultKeychain()).
	Keychain authn.Keychain
	// Insecure lists registry hosts (host or host:port) that are reached
	// over plain HTTP, or over HTTPS without certificate verification:
	// local and test registries.
	Insecure []string

	// CacheDir, if set, keeps what was learnt about digest references
	// across runs. Results for digest references are always cached in
	// memory for the life of the Verifier.
	CacheDir string

	// Egress, when set, is the rule every connection passes: the
	// registries, token realms and redirects of references taken from a
	// pull request may not reach internal addresses the operator did not
	// allow. Nil contacts whatever the references name, as commands on
	// their user's own input do. It shapes the default Transport only.
	Egress *egress.Rule
	// ReferenceTimeout bounds the time one reference may take, retries
	// included (0: no bound beyond each request's). A registry that runs
	// out of it is not asked again in the same Verify call: its other
	// references fail at once, naming it.
	ReferenceTimeout time.Duration
	// ReferenceTimeoutSource names where ReferenceTimeout was set, for
	// the message of a reference that ran out of it (default "the
	// policy's limits.referenceTimeout").
	ReferenceTimeoutSource string
	// Breaker, when set, is shared with other checks of the same pass: a
	// registry that ran out of time in any of them is not asked again.
	// Nil gives each Verify call a breaker of its own.
	Breaker *registry.Breaker
	// Hosts, when set, is shared by every check of the process: it
	// bounds the contacts with each registry host across them, and a
	// host whose breaker is open fails its references at once, naming
	// the host and when it is asked again. A reference that met a busy
	// or open host is pending (registry.Unanswered), never invalid. Nil
	// bounds the contacts of each Verify call alone (PerRegistry).
	Hosts *registry.Hosts

	// Transport is the HTTP transport under the retries and
	// authentication (default: the bounded transport of
	// registry/timeout, over Egress's when set).
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string

	// Clock and Jitter replace the time source and the random part of
	// backoffs, for tests (default: real time, math/rand).
	Clock  registry.Clock
	Jitter func() float64

	// Log receives a debug record per request and per reference. It never
	// sees credentials (default: discard).
	Log *slog.Logger
}

// Verifier checks image references. It is safe for concurrent use; its
// cache and overall concurrency bound are shared by all its runs.
type Verifier struct {
	opts      Options
	policy    *compiled
	keychain  authn.Keychain
	transport http.RoundTripper
	insecure  map[string]bool
	cache     *cache
	slots     chan struct{}
	log       *slog.Logger
}

// New checks the options and returns a Verifier.
func New(opts Options) (*Verifier, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	if opts.PerRegistry <= 0 {
		opts.PerRegistry = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 4
	}
	if opts.Backoff == (registry.Backoff{}) {
		opts.Backoff = registry.DefaultBackoff
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Keychain == nil {
		opts.Keychain = registry.DefaultKeychain()
	}
	pol, err := compilePolicy(opts.Policy)
	if err != nil {
		return nil, err
	}
	insecure := map[string]bool{}
	for _, h := range opts.Insecure {
		reg, err := name.NewRegistry(h)
		if err != nil || h == "" || strings.Contains(h, "/") {
			return nil, fmt.Errorf("insecure registry %q: want a host or host:port", h)
		}
		insecure[reg.RegistryStr()] = true
	}
	base := opts.Transport
	if base == nil {
		base = defaultTransport(opts.PerRegistry, opts.Egress)
	}
	if len(insecure) > 0 {
		base = &insecureTransport{secure: base, insecure: insecure, skipVerify: skipVerify(base)}
	}
	rt := registry.NewRetryTransport(base, registry.RetryOptions{
		Attempts:      opts.Attempts,
		Timeout:       opts.Timeout,
		Backoff:       opts.Backoff,
		MaxRetryAfter: opts.MaxRetryAfter,
		Clock:         opts.Clock,
		Jitter:        opts.Jitter,
		Log:           opts.Log,
	})
	rt = transport.NewUserAgent(rt, opts.UserAgent)
	return &Verifier{
		opts:      opts,
		policy:    pol,
		keychain:  opts.Keychain,
		transport: rt,
		insecure:  insecure,
		cache:     newCache(opts.CacheDir, opts.Log),
		slots:     make(chan struct{}, opts.Concurrency),
		log:       opts.Log,
	}, nil
}

// defaultTransport bounds every wait on a registry (registry/timeout) and keeps
// enough idle connections per host for the per-registry concurrency, so
// that connections are reused, not churned. With an egress rule, every
// connection passes it, and a body that stops moving is cut off too.
func defaultTransport(perHost int, rule *egress.Rule) http.RoundTripper {
	d := timeout.Timeout()
	t := timeout.New(d)
	if rule != nil {
		t = t.WithBase(rule.Transport(egress.Timeouts{Connect: d, TLS: d, Header: d, Idle: d}))
	}
	t.Base.MaxIdleConnsPerHost = max(2*perHost, 8)
	return t
}

// insecureTransport sends requests for insecure registries through a
// transport that does not verify certificates. Plain HTTP needs nothing
// from it: go-containerregistry picks http for registries named insecure.
type insecureTransport struct {
	secure, skipVerify http.RoundTripper
	insecure           map[string]bool
}

func (t *insecureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.insecure[req.URL.Host] {
		return t.skipVerify.RoundTrip(req)
	}
	return t.secure.RoundTrip(req)
}

func skipVerify(base http.RoundTripper) http.RoundTripper {
	if rt, ok := base.(*timeout.Transport); ok {
		return rt.WithBase(skipVerify(rt.Base).(*http.Transport))
	}
	t, ok := base.(*http.Transport)
	if !ok {
		return base
	}
	t = t.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	t.TLSClientConfig.InsecureSkipVerify = true
	return t
}

// Result is the verdict on one image reference.
type Result struct {
	Image     string         `json:"image"`
	Locations []Location     `json:"locations"`
	Class     registry.Class `json:"result"`
	// Digest is the manifest digest the reference resolves to, when the
	// registry answered: for a tag, the digest to pin it to.
	Digest  string `json:"digest,omitempty"`
	Message string `json:"message,omitempty"`
}

// OK reports whether the reference passed.
func (r Result) OK() bool { return r.Class == registry.ClassOK }

// VerifyUses groups uses by image and verifies each image once.
func (v *Verifier) VerifyUses(ctx context.Context, uses []Use) ([]Result, error) {
	return v.Verify(ctx, Dedupe(uses))
}

// Verify checks every reference and returns one result each, in the same
// order. References are expected to be distinct (see Dedupe). The error is
// reserved for a cancelled context; every problem with a reference is its
// result.
func (v *Verifier) Verify(ctx context.Context, refs []Reference) ([]Result, error) {
	run := &run{v: v, handshakes: map[string]*handshake{}, breaker: v.opts.Breaker}
	if run.breaker == nil {
		run.breaker = &registry.Breaker{}
	}
	run.gate = &registry.HostGate{Breaker: run.breaker}
	results := make([]Result, len(refs))
	queues := map[string][]int{}
	var order []string
	for i, r := range refs {
		ref, res, ok := v.precheck(r)
		if !ok {
			results[i] = res
			continue
		}
		host := ref.Context().RegistryStr()
		if _, seen := queues[host]; !seen {
			order = append(order, host)
		}
		queues[host] = append(queues[host], i)
	}

	var wg sync.WaitGroup
	for _, host := range order {
		queue := queues[host]
		var next atomic.Int64
		for range min(v.opts.PerRegistry, len(queue)) {
			wg.Go(func() {
				for {
					n := int(next.Add(1) - 1)
					if n >= len(queue) || ctx.Err() != nil {
						return
					}
					i := queue[n]
					select {
					case v.slots <- struct{}{}:
					case <-ctx.Done():
						return
					}
					start := time.Now()
					results[i] = run.checkWithin(ctx, refs[i], host)
					<-v.slots
					v.log.Debug("image checked", "image", refs[i].Image, "result", results[i].Class, "took", time.Since(start))
				}
			})
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

// precheck settles what needs no registry: references that do not parse
// and registries the policy does not allow. ok is false when res is the
// verdict.
func (v *Verifier) precheck(r Reference) (ref name.Reference, res Result, ok bool) {
	res = Result{Image: r.Image, Locations: r.Locations, Class: registry.ClassPolicy}
	ref, err := v.parse(r.Image)
	if err != nil {
		res.Message = "not a valid image reference"
		return nil, res, false
	}
	if why := v.policy.refusal(ref.Context()); why != "" {
		res.Message = why
		return nil, res, false
	}
	if kinds(r.Locations)[KindBundle] {
		if why := v.policy.bundleRefusal(ref.Context()); why != "" {
			res.Message = why
			return nil, res, false
		}
	}
	return ref, res, true
}

// parse parses an image reference, marking registries configured as
// insecure so that go-containerregistry reaches them over plain HTTP.
func (v *Verifier) parse(image string) (name.Reference, error) {
	ref, err := name.ParseReference(image)
	if err != nil || !v.insecure[ref.Context().RegistryStr()] {
		return ref, err
	}
	return name.ParseReference(image, name.Insecure)
}

// run is one Verify call: the authenticated transports of the repositories
// it has met, and the registries it found unreachable.
type run struct {
	v          *Verifier
	mu         sync.Mutex
	handshakes map[string]*handshake
	// gate holds a host's handshakes back until its first has an
	// outcome, and remembers the hosts found down.
	gate *registry.HostGate
	// breaker holds the registries that ran out of time in this run.
	breaker *registry.Breaker
	// notAsked holds, per host, why the process's Hosts did not let
	// this run contact it (busy or open): its other references fail at
	// once with the same reason rather than each wait again.
	notAsked sync.Map
}

// checkWithin checks one reference within the per-reference deadline,
// unless its registry already ran out of time in this run.
func (r *run) checkWithin(ctx context.Context, ref Reference, host string) Result {
	if err := r.breaker.Check(host); err != nil {
		res := Result{Image: ref.Image, Locations: ref.Locations}
		res.Class, res.Message = registry.Classify(err)
		return res
	}
	d := r.v.opts.ReferenceTimeout
	if d <= 0 {
		return r.check(ctx, ref)
	}
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	res := r.check(rctx, ref)
	if rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		r.breaker.Record(host, rctx.Err())
		if res.Class == registry.ClassTransport {
			source := r.v.opts.ReferenceTimeoutSource
			if source == "" {
				source = "the policy's limits.referenceTimeout"
			}
			res.Message = fmt.Sprintf("registry %s did not answer within the deadline for one reference (%s, %s)", host, d, source)
		}
	}
	return res
}

// handshake is the authentication of one repository, done once per run:
// the ping that learns the registry's auth scheme and, for token auth, the
// token exchange. Its failure is every reference's in that repository.
type handshake struct {
	done chan struct{}
	tr   http.RoundTripper
	err  error
}

func (r *run) transport(ctx context.Context, repo name.Repository) (http.RoundTripper, error) {
	key, host := repo.Name(), repo.RegistryStr()
	if err := r.gate.Down(host); err != nil {
		return nil, err
	}
	r.mu.Lock()
	h, ok := r.handshakes[key]
	if !ok {
		h = &handshake{done: make(chan struct{})}
		r.handshakes[key] = h
	}
	r.mu.Unlock()
	if ok {
		select {
		case <-h.done:
			return h.tr, h.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer close(h.done)
	// The wait for the host's first contact is bounded by this
	// reference's own deadline.
	leave, err := r.gate.Enter(ctx, host)
	if err != nil {
		h.err = err
		return nil, err
	}
	defer func() { leave(h.err) }()
	auth, err := authn.Resolve(ctx, r.v.keychain, repo)
	if err != nil {
		var cerr *registry.CredentialError
		if !errors.As(err, &cerr) {
			err = &registry.CredentialError{Registry: repo.RegistryStr(), Err: err}
		}
		h.err = err
		return nil, err
	}
	// The transport returned is a *transport.Wrapper, which remote uses
	// as it is: no second handshake, and none of remote's own retries on
	// top of ours.
	// Credentials go to the repository's registry alone, not to a
	// token realm or redirect its answers name elsewhere.
	// Nor does the operator's allowlist of internal hosts let them lead
	// there.
	tr := r.v.opts.Egress.Confine(egress.Credentials(r.v.transport, repo.RegistryStr()), repo.RegistryStr())
	h.tr, h.err = transport.NewWithContext(ctx, repo.Registry, auth, tr, []string{repo.Scope(transport.PullScope)})
	return h.tr, h.err
}

// check verifies one reference that passed precheck.
func (r *run) check(ctx context.Context, ref Reference) (res Result) {
	v := r.v
	res = Result{Image: ref.Image, Locations: ref.Locations}
	parsed, _ := v.parse(ref.Image)
	kinds := kinds(ref.Locations)
	need := v.policy.needs(kinds)
	repo := parsed.Context()

	// The pin rule needs no registry: a tag fails it whatever its
	// registry answers, so the verdict is the same offline, for a
	// private repository and for a registry that is down. The registry
	// is still asked, for the digest to suggest.
	dref, byDigest := parsed.(name.Digest)
	unpinned := !byDigest && v.policy.pinRequired(kinds)
	// contactErr is how the contact with the registry ended, for the
	// process's Hosts (release); nil for any answer.
	var contactErr error
	var release func(error)
	defer func() {
		if release != nil {
			release(contactErr)
		}
	}()
	fail := func(err error, what string) Result {
		contactErr = err
		r.breaker.Record(repo.RegistryStr(), err)
		res.Class, res.Message = registry.Classify(err)
		if what != "" {
			res.Message = what + ": " + res.Message
		}
		if unpinned && ctx.Err() == nil {
			res.Message = fmt.Sprintf("it is not pinned by digest; pin it as %s@sha256:... (the tag could not be resolved to suggest the digest: %s: %s)",
				untagged(ref.Image), res.Class, res.Message)
			res.Class = registry.ClassPolicy
		}
		return res
	}

	var f facts
	cached := false
	if byDigest {
		f, cached = v.cache.get(digestKey(repo, dref.DigestStr()))
	}
	var tr http.RoundTripper
	connect := func() error {
		if tr != nil {
			return nil
		}
		// The slot of the process's Hosts is taken at the first
		// request, so that a reference known from the cache needs
		// none, and held until the reference is checked.
		host := repo.RegistryStr()
		if release != nil {
			// The slot is held already; only the handshake is
			// tried again.
			var err error
			tr, err = r.transport(ctx, repo)
			return err
		}
		if err, ok := r.notAsked.Load(host); ok {
			return err.(error)
		}
		leave, err := v.opts.Hosts.Acquire(ctx, host, r)
		var open *registry.HostOpenError
		if errors.As(err, &open) {
			// Opened by this run's own contact, it says so.
			if perr := r.breaker.Check(host); perr != nil {
				err = perr
			}
		}
		if err != nil {
			if registry.Outcome(err) == registry.HostSilent && ctx.Err() == nil {
				r.notAsked.Store(host, err)
			}
			return err
		}
		release = leave
		tr, err = r.transport(ctx, repo)
		return err
	}
	if !cached {
		if err := connect(); err != nil {
			return fail(err, "")
		}
		desc, err := remote.Head(parsed, remote.WithTransport(tr), remote.WithContext(ctx))
		switch {
		case err == nil:
			f = facts{Digest: desc.Digest.String(), MediaType: string(desc.MediaType)}
		case incompleteHead(err):
			// The registry answered the HEAD but left out a header
			// the answer needs (digest, type or length): only a GET
			// can tell.
			d, gerr := remote.Get(parsed, remote.WithTransport(tr), remote.WithContext(ctx))
			if gerr != nil {
				return fail(gerr, "")
			}
			f = facts{Digest: d.Digest.String(), MediaType: string(d.MediaType)}
			setIndex(&f, d.Manifest)
		default:
			return fail(err, "")
		}
		f.Key = digestKey(repo, f.Digest)
		// A tag may resolve to a digest already known from this run or
		// an earlier one; reuse what was read about its content.
		if known, ok := v.cache.get(f.Key); ok {
			f = merge(f, known)
		}
	}
	res.Digest = f.Digest

	if need.kindOfManifest && f.Index == nil {
		if isIndex, ok := indexMediaType(f.MediaType); ok {
			f.Index = &isIndex
		} else {
			if err := connect(); err != nil {
				return fail(err, "")
			}
			d, err := remote.Get(repo.Digest(f.Digest), remote.WithTransport(tr), remote.WithContext(ctx))
			if err != nil {
				return fail(err, "reading the manifest")
			}
			setIndex(&f, d.Manifest)
		}
	}
	if need.labels && !f.LabelsKnown || need.platforms && !f.PlatformsKnown {
		if err := connect(); err != nil {
			return fail(err, "")
		}
		if err := v.readContent(ctx, tr, repo.Digest(f.Digest), &f, need); err != nil {
			var perr policyError
			if errors.As(err, &perr) {
				res.Class, res.Message = registry.ClassPolicy, perr.Error()
				return res
			}
			return fail(err, "reading the image content")
		}
	}
	v.cache.put(f)

	var problems []string
	if need.kindOfManifest && f.Index != nil && *f.Index {
		problems = append(problems, "it is an image index (a multi-platform list); a bundle image must be a single image manifest")
	}
	if need.labels {
		if _, ok := f.Labels[CatalogLabel]; !ok {
			problems = append(problems, "it has no label "+CatalogLabel+", so opm cannot render it as a catalog")
		}
	}
	if need.platforms {
		if missing := v.policy.missingPlatforms(f.Platforms); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("it does not provide %s (it provides %s)", strings.Join(missing, ", "), platformList(f.Platforms)))
		}
	}
	if unpinned {
		problems = append(problems, fmt.Sprintf("it is not pinned by digest; pin it as %s", pinned(ref.Image, f.Digest)))
	}
	if len(problems) > 0 {
		res.Class, res.Message = registry.ClassPolicy, strings.Join(problems, "; ")
		return res
	}
	res.Class = registry.ClassOK
	return res
}

// readContent reads the labels and platforms of the manifest at ref into f:
// for an index, the platforms it lists and the labels of one of its images;
// for an image, its config.
func (v *Verifier) readContent(ctx context.Context, tr http.RoundTripper, ref name.Digest, f *facts, need needs) error {
	opts := []remote.Option{remote.WithTransport(tr), remote.WithContext(ctx)}
	d, err := remote.Get(ref, opts...)
	if err != nil {
		return err
	}
	f.MediaType = string(d.MediaType)
	setIndex(f, d.Manifest)
	switch {
	case d.MediaType.IsIndex():
		idx, err := d.ImageIndex()
		if err != nil {
			return err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return err
		}
		f.Platforms, f.PlatformsKnown = indexPlatforms(im), true
		if !need.labels || f.LabelsKnown {
			return nil
		}
		child, ok := v.pickChild(im)
		if !ok {
			return policyError("it is an image index without any image in it")
		}
		img, err := remote.Image(ref.Context().Digest(child.Digest.String()), opts...)
		if err != nil {
			return err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		f.Labels, f.LabelsKnown = cfg.Config.Labels, true
	case d.MediaType.IsImage():
		img, err := d.Image()
		if err != nil {
			return err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		f.Labels, f.LabelsKnown = cfg.Config.Labels, true
		if p := cfg.Platform(); p != nil {
			f.Platforms = []v1.Platform{*p}
		}
		f.PlatformsKnown = true
	default:
		return policyError(fmt.Sprintf("it is not a container image (media type %q)", d.MediaType))
	}
	return nil
}

// pickChild chooses the image of an index whose labels stand for the
// whole: one of the required platforms if listed, else linux/amd64, else
// the first image. Attestation manifests (platform unknown/unknown) carry
// no labels of the image.
func (v *Verifier) pickChild(im *v1.IndexManifest) (v1.Descriptor, bool) {
	var images []v1.Descriptor
	for _, m := range im.Manifests {
		if m.MediaType.IsImage() && (m.Platform == nil || m.Platform.OS != "unknown") {
			images = append(images, m)
		}
	}
	if len(images) == 0 {
		return v1.Descriptor{}, false
	}
	prefs := append(slices.Clone(v.policy.platforms), v1.Platform{OS: "linux", Architecture: "amd64"})
	for _, want := range prefs {
		for _, m := range images {
			if m.Platform != nil && m.Platform.OS == want.OS && m.Platform.Architecture == want.Architecture {
				return m, true
			}
		}
	}
	return images[0], true
}

func indexPlatforms(im *v1.IndexManifest) []v1.Platform {
	var ps []v1.Platform
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS != "unknown" {
			ps = append(ps, *m.Platform)
		}
	}
	return ps
}

func platformList(ps []v1.Platform) string {
	if len(ps) == 0 {
		return "no platform"
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// policyError is a content check that settles the verdict as a policy
// failure rather than a registry failure.
type policyError string

func (e policyError) Error() string { return string(e) }

// indexMediaType tells an index from a single manifest by media type, when
// the type is one it knows.
func indexMediaType(mt string) (isIndex, known bool) {
	switch types.MediaType(mt) {
	case types.OCIImageIndex, types.DockerManifestList:
		return true, true
	case types.OCIManifestSchema1, types.DockerManifestSchema2, types.DockerManifestSchema1, types.DockerManifestSchema1Signed:
		return false, true
	}
	return false, false
}

// setIndex records whether a raw manifest is an index: it lists manifests,
// or says so in its mediaType.
func setIndex(f *facts, manifest []byte) {
	var m struct {
		MediaType string            `json:"mediaType"`
		Manifests []json.RawMessage `json:"manifests"`
	}
	isIndex := false
	if json.Unmarshal(manifest, &m) == nil {
		if byType, ok := indexMediaType(m.MediaType); ok {
			isIndex = byType
		} else {
			isIndex = m.Manifests != nil
		}
	}
	f.Index = &isIndex
}

// merge adds what known says about the content to f, learnt by HEAD.
func merge(f, known facts) facts {
	if f.Index == nil {
		f.Index = known.Index
	}
	if !f.LabelsKnown && known.LabelsKnown {
		f.Labels, f.LabelsKnown = known.Labels, true
	}
	if !f.PlatformsKnown && known.PlatformsKnown {
		f.Platforms, f.PlatformsKnown = known.Platforms, true
	}
	return f
}

func digestKey(repo name.Repository, digest string) string {
	return repo.Name() + "@" + digest
}

// pinned is the reference as written, with its tag replaced by the digest.
func pinned(image, digest string) string {
	return untagged(image) + "@" + digest
}

// untagged is the reference as written, without its tag.
func untagged(image string) string {
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[:i]
	}
	return image
}

// incompleteHead reports whether a HEAD failed not for an HTTP status or
// the network but because the response lacked a header or did not match
// the reference: a GET may still give the answer.
func incompleteHead(err error) bool {
	var terr *transport.Error
	var uerr *url.Error
	var nerr net.Error
	var cerr *registry.CredentialError
	return !errors.As(err, &terr) && !errors.As(err, &uerr) && !errors.As(err, &nerr) && !errors.As(err, &cerr) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
