package images_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/catalogbot/catalogbot/checks/registry"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

// TestFailureClasses drives one reference through each kind of registry
// answer and checks its class, how often it was tried and how long the
// retries waited.
func TestFailureClasses(t *testing.T) {
	const repo = "team/app"
	retryAt := time.Date(2025, 3, 1, 12, 0, 9, 0, time.UTC).Format(http.TimeFormat)
	tests := []struct {
		name   string
		fault  *registrytest.Fault // on HEAD requests for repo, nil for none
		image  string              // in repo; default "team/app:v1"
		class  registry.Class
		msg    string          // a part of the message
		heads  int             // HEAD requests made
		waits  []time.Duration // retry waits, in order
		digest bool            // whether the result carries the digest
	}{
		{name: "present tag", class: registry.ClassOK, heads: 1, digest: true},
		{name: "missing tag", image: repo + ":v2", class: registry.ClassNotFound, msg: "404 Not Found", heads: 1},
		{name: "missing repository", image: "team/nothing:v1", class: registry.ClassNotFound, heads: 1},
		{name: "missing digest", image: repo + "@sha256:" + strings.Repeat("0", 64), class: registry.ClassNotFound, heads: 1},
		{name: "404 injected", fault: &registrytest.Fault{Status: 404}, class: registry.ClassNotFound, heads: 1},
		{name: "401", fault: &registrytest.Fault{Status: 401}, class: registry.ClassUnauthorized, msg: "401 Unauthorized", heads: 1},
		{name: "403", fault: &registrytest.Fault{Status: 403}, class: registry.ClassUnauthorized, msg: "403 Forbidden", heads: 1},
		{name: "429 with Retry-After, always", fault: &registrytest.Fault{Status: 429, Header: http.Header{"Retry-After": {"7"}}},
			class: registry.ClassRateLimited, heads: 4, waits: []time.Duration{7 * time.Second, 7 * time.Second, 7 * time.Second}},
		{name: "429 with Retry-After, twice", fault: &registrytest.Fault{Status: 429, Times: 2, Header: http.Header{"Retry-After": {"2"}}},
			class: registry.ClassOK, heads: 3, waits: []time.Duration{2 * time.Second, 2 * time.Second}, digest: true},
		{name: "429 without Retry-After backs off", fault: &registrytest.Fault{Status: 429, Times: 2},
			class: registry.ClassOK, heads: 3, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, digest: true},
		{name: "503 with an HTTP-date Retry-After", fault: &registrytest.Fault{Status: 503, Times: 1, Header: http.Header{"Retry-After": {retryAt}}},
			class: registry.ClassOK, heads: 2, waits: []time.Duration{9 * time.Second}, digest: true},
		{name: "Retry-After beyond the cap is not waited for", fault: &registrytest.Fault{Status: 429, Header: http.Header{"Retry-After": {"3600"}}},
			class: registry.ClassRateLimited, heads: 1},
		{name: "500 always", fault: &registrytest.Fault{Status: 500}, class: registry.ClassTransport, msg: "500 Internal Server Error", heads: 4,
			waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "500 once", fault: &registrytest.Fault{Status: 500, Times: 1}, class: registry.ClassOK, heads: 2,
			waits: []time.Duration{100 * time.Millisecond}, digest: true},
		{name: "502 twice", fault: &registrytest.Fault{Status: 502, Times: 2}, class: registry.ClassOK, heads: 3,
			waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, digest: true},
		{name: "400 is not retried", fault: &registrytest.Fault{Status: 400}, class: registry.ClassTransport, msg: "400 Bad Request", heads: 1},
		{name: "slow but in time", fault: &registrytest.Fault{Delay: 50 * time.Millisecond}, class: registry.ClassOK, heads: 1, digest: true},
		{name: "timeout", fault: &registrytest.Fault{Delay: 10 * time.Second}, class: registry.ClassTransport, msg: "did not answer in time", heads: 4,
			waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{name: "timeout once", fault: &registrytest.Fault{Delay: 10 * time.Second, Times: 1}, class: registry.ClassOK, heads: 2,
			waits: []time.Duration{100 * time.Millisecond}, digest: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registrytest.New(t)
			digest := reg.PushRandom(t, reg.Ref(repo+":v1"))
			if tt.fault != nil {
				f := *tt.fault
				f.Method = http.MethodHead
				reg.Fail(f)
			}
			clock := newFakeClock()
			o := options(clock, nil)
			o.Timeout = 500 * time.Millisecond
			v := newVerifier(t, o)
			image := reg.Ref(repo + ":v1")
			if tt.image != "" {
				image = reg.Ref(tt.image)
			}
			res := verifyOne(t, v, image, images.KindRelated)
			if res.Class != tt.class {
				t.Errorf("class %s (%s), want %s", res.Class, res.Message, tt.class)
			}
			if !strings.Contains(res.Message, tt.msg) {
				t.Errorf("message %q, want it to contain %q", res.Message, tt.msg)
			}
			if got := reg.Count(http.MethodHead, "manifests"); got != tt.heads {
				t.Errorf("%d HEAD requests, want %d", got, tt.heads)
			}
			if got := reg.Count(http.MethodGet, "manifests"); got != 0 {
				t.Errorf("%d manifest GETs, want none for an existence check", got)
			}
			if got := fmt.Sprint(clock.Waits()); got != fmt.Sprint(tt.waits) {
				t.Errorf("waits %s, want %v", got, tt.waits)
			}
			if tt.digest && res.Digest != digest.String() {
				t.Errorf("digest %q, want %q", res.Digest, digest)
			}
			if !tt.digest && res.Digest != "" {
				t.Errorf("digest %q for a failure", res.Digest)
			}
		})
	}
}

// TestPingFailures covers failures before the first HEAD: the ping that
// learns a registry's auth scheme is retried and classified the same way.
func TestPingFailures(t *testing.T) {
	tests := []struct {
		name  string
		fault registrytest.Fault
		class registry.Class
		pings int
	}{
		{"500", registrytest.Fault{Kind: "ping", Status: 500}, registry.ClassTransport, 4},
		{"429 once", registrytest.Fault{Kind: "ping", Status: 429, Times: 1, Header: http.Header{"Retry-After": {"1"}}}, registry.ClassOK, 2},
		{"403", registrytest.Fault{Kind: "ping", Status: 403}, registry.ClassUnauthorized, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registrytest.New(t)
			reg.PushRandom(t, reg.Ref("a/b:v1"))
			reg.Fail(tt.fault)
			v := newVerifier(t, options(newFakeClock(), nil))
			res := verifyOne(t, v, reg.Ref("a/b:v1"), images.KindBundle)
			if res.Class != tt.class {
				t.Errorf("class %s (%s), want %s", res.Class, res.Message, tt.class)
			}
			if got := reg.Count(http.MethodGet, "ping"); got != tt.pings {
				t.Errorf("%d pings, want %d", got, tt.pings)
			}
		})
	}
}

// TestRegistryDown: nothing listens; the failure is transport, not missing.
func TestRegistryDown(t *testing.T) {
	reg := registrytest.New(t)
	host := reg.Host
	reg.Close()
	v := newVerifier(t, options(newFakeClock(), nil))
	res := verifyOne(t, v, host+"/a/b:v1", images.KindBundle)
	if res.Class != registry.ClassTransport || !strings.Contains(res.Message, "could not reach the registry") {
		t.Errorf("got %s: %s, want transport: could not reach the registry", res.Class, res.Message)
	}
}

// TestRegistryDownOnce: once a registry fails its handshake for transport
// reasons, its other repositories fail at once instead of each going
// through the retries again, also when they are checked concurrently: the
// first contact with the host goes alone and the others wait for its
// outcome. Authorization failures are answers: they stay per repository,
// and the other repositories go on.
func TestRegistryDownOnce(t *testing.T) {
	for _, tt := range []struct {
		status      int
		perRegistry int
		pings       int
		class       registry.Class
	}{
		{500, 1, 4, registry.ClassTransport},
		{403, 1, 3, registry.ClassUnauthorized},
		{500, 3, 4, registry.ClassTransport},
		{403, 3, 3, registry.ClassUnauthorized},
	} {
		t.Run(fmt.Sprintf("%d/concurrency=%d", tt.status, tt.perRegistry), func(t *testing.T) {
			reg := registrytest.New(t)
			var uses []images.Use
			for _, repo := range []string{"a/one", "a/two", "b/three"} {
				reg.PushRandom(t, reg.Ref(repo+":v1"))
				uses = append(uses, images.Use{Image: reg.Ref(repo + ":v1"), Location: images.Location{Kind: images.KindBundle}})
			}
			reg.Fail(registrytest.Fault{Kind: "ping", Status: tt.status})
			o := options(newFakeClock(), nil)
			o.PerRegistry = tt.perRegistry
			res, err := newVerifier(t, o).VerifyUses(context.Background(), uses)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Class != tt.class {
					t.Errorf("%s: %s %s, want %s", r.Image, r.Class, r.Message, tt.class)
				}
			}
			if got := reg.Count(http.MethodGet, "ping"); got != tt.pings {
				t.Errorf("%d pings, want %d", got, tt.pings)
			}
		})
	}
}

// TestExistenceIsHEADOnly checks many references of the kinds that need no
// content and counts the requests: one HEAD each, one ping and no GET of a
// manifest or blob.
func TestExistenceIsHEADOnly(t *testing.T) {
	reg := registrytest.New(t)
	var uses []images.Use
	for i := range 30 {
		ref := reg.Ref(fmt.Sprintf("team/op-%d:v1", i%3))
		if i >= 3 {
			ref = reg.Ref(fmt.Sprintf("team/op-%d:v%d", i%3, i))
		}
		d := reg.PushRandom(t, ref)
		kind := images.KindBundle
		if i%2 == 1 {
			kind = images.KindRelated
			ref = reg.Ref(fmt.Sprintf("team/op-%d@%s", i%3, d))
		}
		uses = append(uses, images.Use{Image: ref, Location: images.Location{Kind: kind}})
	}
	// The same images again, spelt the same: de-duplicated before any
	// request.
	uses = append(uses, uses...)
	v := newVerifier(t, options(newFakeClock(), nil))
	res, err := v.VerifyUses(context.Background(), uses)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 30 {
		t.Fatalf("%d results, want 30", len(res))
	}
	for _, r := range res {
		if r.Class != registry.ClassOK || len(r.Locations) != 2 {
			t.Errorf("%s: %s %s with %d locations, want ok with 2", r.Image, r.Class, r.Message, len(r.Locations))
		}
	}
	counts := map[string]int{}
	for _, q := range reg.Requests() {
		counts[q.Method+" "+q.Kind]++
	}
	want := map[string]int{"HEAD manifests": 30, "GET ping": 3}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", counts, want)
	}
}

// TestConcurrencyBounds holds every answer back a little and looks at how
// many requests the registry saw at once.
func TestConcurrencyBounds(t *testing.T) {
	tests := []struct {
		name                     string
		concurrency, perRegistry int
		want                     int
	}{
		{"per registry", 16, 3, 3},
		{"overall", 2, 4, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registrytest.New(t)
			var uses []images.Use
			for i := range 24 {
				ref := reg.Ref(fmt.Sprintf("team/app:v%d", i))
				reg.PushRandom(t, ref)
				uses = append(uses, images.Use{Image: ref, Location: images.Location{Kind: images.KindRelated}})
			}
			reg.Fail(registrytest.Fault{Method: http.MethodHead, Delay: 20 * time.Millisecond})
			o := options(newFakeClock(), nil)
			o.Concurrency, o.PerRegistry = tt.concurrency, tt.perRegistry
			res, err := newVerifier(t, o).VerifyUses(context.Background(), uses)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if !r.OK() {
					t.Errorf("%s: %s %s", r.Image, r.Class, r.Message)
				}
			}
			// The bound must hold; reaching it shows the checks did
			// run side by side, which a slow machine may not always
			// manage, so only some overlap is required.
			if peak := reg.Peak(); peak > tt.want || peak < 2 {
				t.Errorf("peak of %d requests at once, want 2 to %d", peak, tt.want)
			}
		})
	}
}

// TestCancel: a cancelled run returns the context's error, not results.
func TestCancel(t *testing.T) {
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("a/b:v1"))
	reg.Fail(registrytest.Fault{Method: http.MethodHead, Delay: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	v := newVerifier(t, options(newFakeClock(), nil))
	res, err := v.VerifyUses(ctx, []images.Use{{Image: reg.Ref("a/b:v1"), Location: images.Location{Kind: images.KindBundle}}})
	if err == nil || res != nil {
		t.Errorf("got %v, %v; want the context's error", res, err)
	}
}

// TestDigestCache: digest references are asked once per Verifier, and with
// a cache directory once across Verifiers. Tags are always asked, since
// they move.
func TestDigestCache(t *testing.T) {
	reg := registrytest.New(t)
	d := reg.PushRandom(t, reg.Ref("a/b:v1"))
	catalog := reg.Push(t, reg.Ref("a/catalog:v1"), registrytest.CatalogImage(t, "linux/amd64", map[string]string{images.CatalogLabel: "/configs"}))
	uses := []images.Use{
		{Image: reg.Ref("a/b@" + d.String()), Location: images.Location{Kind: images.KindBundle}},
		{Image: reg.Ref("a/b:v1"), Location: images.Location{Kind: images.KindBundle}},
		{Image: reg.Ref("a/catalog@" + catalog.String()), Location: images.Location{Kind: images.KindReference}},
	}
	dir := t.TempDir()
	o := options(newFakeClock(), nil)
	o.CacheDir = dir
	verify := func(v *images.Verifier) {
		t.Helper()
		res, err := v.VerifyUses(context.Background(), uses)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.OK() {
				t.Errorf("%s: %s %s", r.Image, r.Class, r.Message)
			}
		}
	}
	v := newVerifier(t, o)
	verify(v)
	if got := reg.Count(http.MethodGet, "manifests"); got != 1 {
		t.Errorf("first run: %d manifest GETs, want 1 (the catalog's labels)", got)
	}
	for _, run := range []struct {
		name string
		v    *images.Verifier
	}{{"same verifier", v}, {"new verifier, same cache dir", newVerifier(t, o)}} {
		reg.Reset()
		verify(run.v)
		heads := reg.Count(http.MethodHead, "")
		gets := reg.Count(http.MethodGet, "manifests") + reg.Count(http.MethodGet, "blobs")
		if heads != 1 || reg.CountRepo(http.MethodHead, "a/b") != 1 || gets != 0 {
			t.Errorf("%s: %d HEADs and %d GETs, want only the tag's HEAD: %v", run.name, heads, gets, reg.Requests())
		}
	}
}

// TestDebugLog: the debug log has a record per request with method, URL
// and status.
func TestDebugLog(t *testing.T) {
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("a/b:v1"))
	reg.Fail(registrytest.Fault{Method: http.MethodHead, Status: 503, Times: 1})
	var buf bytes.Buffer
	v := newVerifier(t, options(newFakeClock(), &buf))
	if res := verifyOne(t, v, reg.Ref("a/b:v1"), images.KindBundle); !res.OK() {
		t.Fatalf("%s %s", res.Class, res.Message)
	}
	for _, want := range []string{
		"msg=\"registry request\" method=HEAD url=http://" + reg.Host + "/v2/a/b/manifests/v1 attempt=1",
		"status=503", "retry_in=100ms", "attempt=2", "status=200",
		"msg=\"image checked\" image=" + reg.Ref("a/b:v1") + " result=ok",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf.String())
		}
	}
}
