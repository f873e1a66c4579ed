// Package registrytest holds the registries that tests of registry clients
// talk to, all on 127.0.0.1:
//
//   - Registry: go-containerregistry's in-memory registry behind a handler
//     that counts requests by method and kind, can require basic auth, and
//     injects faults (error statuses, Retry-After, slow answers) per
//     repository; New, and NewTLS for one reachable only as insecure.
//   - Hangup: a host that resets every connection, a registry that cannot
//     be reached.
//   - Tarpit: a host that accepts connections and never answers.
//   - StartDockerRegistry: Debian's docker-registry (the CNCF distribution
//     registry) as a process, for the end-to-end tests (build tag e2e).
//
// It also builds what tests push: RandomImage, CatalogImage and Index, and
// pushes them over the network with Push and PushIndex, to any of these
// registries or another one on loopback.
package registrytest

import (
	"encoding/base64"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is a registry served on 127.0.0.1 for one test.
type Registry struct {
	// Host is host:port, the registry part of image references.
	Host   string
	server *httptest.Server
	inner  http.Handler

	mu       sync.Mutex
	requests []Request
	faults   []*Fault
	user     string
	password string
	inflight int
	peak     int
}

// Request is one request the registry received.
type Request struct {
	Method string
	Path   string
	// Kind is "ping" (GET /v2/), "manifests", "blobs", "tags" or "other".
	Kind string
	// Repo is the repository named in the path, "" for a ping.
	Repo string
	// UserAgent is the request's User-Agent header.
	UserAgent string
}

// Fault makes the registry misbehave for matching requests.
type Fault struct {
	// Repo matches requests for this repository; "" matches every
	// request, pings included.
	Repo string
	// Method, if set, matches only requests with this method.
	Method string
	// Kind, if set, matches only requests of this kind (see Request).
	Kind string
	// Status is answered instead of the registry's answer; 0 lets the
	// registry answer (after Delay).
	Status int
	// Header is added to the fault's answer, such as Retry-After.
	Header http.Header
	// Body is the fault's answer body, such as a registry error JSON.
	Body string
	// Delay holds the answer back, or until the client gives up.
	Delay time.Duration
	// Times is how many matching requests the fault applies to before
	// the registry behaves again; 0 means all of them.
	Times int

	hits int
}

// New starts a registry for the test and stops it when the test ends.
func New(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{inner: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	r.server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.server.Close)
	r.Host = strings.TrimPrefix(r.server.URL, "http://")
	return r
}

// NewTLS is New with HTTPS, under a certificate no client trusts: a
// registry that can only be reached as an insecure one.
func NewTLS(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{inner: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	r.server = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	// The test server's own log would note every refused handshake.
	r.server.Config.ErrorLog = log.New(io.Discard, "", 0)
	r.server.StartTLS()
	t.Cleanup(r.server.Close)
	r.Host = strings.TrimPrefix(r.server.URL, "https://")
	return r
}

// Close stops the registry before the test ends, to see what clients do
// when nothing answers.
func (r *Registry) Close() { r.server.Close() }

// Ref is the image reference of repoAndTag ("foo/bar:v1") in this registry.
func (r *Registry) Ref(repoAndTag string) string { return r.Host + "/" + repoAndTag }

// RequireBasic makes every request need basic auth with these credentials,
// as a private registry does.
func (r *Registry) RequireBasic(user, password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.user, r.password = user, password
}

// Fail adds a fault. Faults are tried in the order added; the first that
// matches and has hits left applies.
func (r *Registry) Fail(f Fault) *Fault {
	r.mu.Lock()
	defer r.mu.Unlock()
	fp := &f
	r.faults = append(r.faults, fp)
	return fp
}

// Hits is how many requests the fault has applied to.
func (r *Registry) Hits(f *Fault) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return f.hits
}

// Requests returns the requests received so far.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Count counts the requests with this method and kind ("" matches any).
func (r *Registry) Count(method, kind string) int {
	n := 0
	for _, q := range r.Requests() {
		if (method == "" || q.Method == method) && (kind == "" || q.Kind == kind) {
			n++
		}
	}
	return n
}

// CountRepo counts the requests with this method for one repository.
func (r *Registry) CountRepo(method, repo string) int {
	n := 0
	for _, q := range r.Requests() {
		if (method == "" || q.Method == method) && q.Repo == repo {
			n++
		}
	}
	return n
}

// Peak is the most requests the registry has served at once.
func (r *Registry) Peak() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}

// Reset forgets the requests received and the faults, keeping the images.
func (r *Registry) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests, r.faults, r.peak = nil, nil, 0
}

func classifyPath(p string) (kind, repo string) {
	if p == "/v2/" || p == "/v2" {
		return "ping", ""
	}
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		return "other", ""
	}
	for _, k := range []string{"manifests", "blobs", "tags"} {
		if i := strings.LastIndex(rest, "/"+k+"/"); i >= 0 {
			return k, rest[:i]
		}
	}
	return "other", ""
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	kind, repo := classifyPath(req.URL.Path)
	r.mu.Lock()
	r.requests = append(r.requests, Request{Method: req.Method, Path: req.URL.Path, Kind: kind, Repo: repo, UserAgent: req.UserAgent()})
	r.inflight++
	r.peak = max(r.peak, r.inflight)
	var fault *Fault
	for _, f := range r.faults {
		if (f.Repo == "" || f.Repo == repo) && (f.Method == "" || f.Method == req.Method) &&
			(f.Kind == "" || f.Kind == kind) && (f.Times == 0 || f.hits < f.Times) {
			f.hits++
			fault = f
			break
		}
	}
	user, password := r.user, r.password
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight--
		r.mu.Unlock()
	}()

	if fault != nil && fault.Delay > 0 {
		t := time.NewTimer(fault.Delay)
		select {
		case <-t.C:
		case <-req.Context().Done():
			t.Stop()
			return
		}
	}
	if fault != nil && fault.Status != 0 {
		for k, vs := range fault.Header {
			w.Header()[k] = vs
		}
		if fault.Body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(fault.Status)
		io.WriteString(w, fault.Body)
		return
	}
	if user != "" {
		u, p, ok := req.BasicAuth()
		if !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="registrytest"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`)
			return
		}
	}
	r.inner.ServeHTTP(w, req)
}

// handlerTransport hands requests straight to a handler, so that seeding
// neither passes the faults and auth nor shows in the counts.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// A server request always has a body; a client request may not.
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

func (r *Registry) seedOptions() []remote.Option {
	return []remote.Option{remote.WithTransport(handlerTransport{r.inner})}
}

// Push writes img to ref (a full reference in this registry) and returns
// its digest.
func (r *Registry) Push(t testing.TB, ref string, img v1.Image) v1.Hash {
	t.Helper()
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, r.seedOptions()...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// PushIndex writes idx to ref and returns its digest.
func (r *Registry) PushIndex(t testing.TB, ref string, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(tag, idx, r.seedOptions()...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// PushRandom writes a small random image to ref and returns its digest.
func (r *Registry) PushRandom(t testing.TB, ref string) v1.Hash {
	t.Helper()
	return r.Push(t, ref, RandomImage(t))
}

// BasicAuth is the value of an Authorization header for user and password,
// for tests that look for it where it must not be.
func BasicAuth(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}

// Push writes img to ref over the network, with go-containerregistry's
// defaults (plain HTTP for a loopback registry), and returns its digest.
// Unlike Registry.Push, it works with any registry and its requests pass
// the faults and show in the counts.
func Push(t testing.TB, ref string, img v1.Image) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// PushIndex is Push for an index.
func PushIndex(t testing.TB, ref string, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
