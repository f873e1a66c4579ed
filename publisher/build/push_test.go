package build_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

func TestPushRegistry(t *testing.T) {
	reg := newRegistry(t)
	base := reg.Ref("operator-framework/opm:multi")
	registrytest.PushIndex(t, base, baseIndex(t, "linux/amd64", "linux/arm64"))

	tests := []struct {
		name string
		opts build.Options
	}{
		{"scratch", build.Options{Base: build.BaseScratch}},
		{"index", build.Options{OPMImage: base}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := reg.Ref("catalogs/" + tt.name + ":latest")
			res := mustBuild(t, fixture, tt.opts)

			reg.Reset()
			got, err := build.Push(context.Background(), res, target, build.PushOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Unchanged || got.Digest != res.Digest {
				t.Fatalf("first push: %+v, want published %s", got, res.Digest)
			}
			if len(reg.blobUploads()) == 0 {
				t.Error("first push uploaded no blobs")
			}
			desc, err := remote.Head(mustRef(t, target))
			if err != nil || desc.Digest != res.Digest {
				t.Fatalf("tag points at %v (%v), want %s", desc, err, res.Digest)
			}

			// A rebuild is the same image: one HEAD, nothing written.
			again := mustBuild(t, fixture, tt.opts)
			reg.Reset()
			got, err = build.Push(context.Background(), again, target, build.PushOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !got.Unchanged || got.Digest != res.Digest {
				t.Errorf("second push: %+v, want unchanged %s", got, res.Digest)
			}
			if w := reg.writes(); len(w) != 0 {
				t.Errorf("second push wrote %v, want nothing", w)
			}
		})
	}
}

// TestPushMovesTagLast checks that the manifest is stored by digest before
// the tag moves: the tag PUT is the last request.
func TestPushMovesTagLast(t *testing.T) {
	reg := newRegistry(t)
	target := reg.Ref("catalogs/order:v1")
	res := mustBuild(t, fixture, build.Options{Base: build.BaseScratch})
	if _, err := build.Push(context.Background(), res, target, build.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	w := reg.writes()
	if len(w) < 2 {
		t.Fatalf("writes %v", w)
	}
	byDigest := "PUT /v2/catalogs/order/manifests/" + res.Digest.String()
	if w[len(w)-2] != byDigest || w[len(w)-1] != "PUT /v2/catalogs/order/manifests/v1" {
		t.Errorf("writes end with %v, want %q then the tag", w[len(w)-2:], byDigest)
	}
}

func TestPushDigestReference(t *testing.T) {
	reg := newRegistry(t)
	res := mustBuild(t, fixture, build.Options{Base: build.BaseScratch})
	ok := reg.Ref("catalogs/d@" + res.Digest.String())
	if got, err := build.Push(context.Background(), res, ok, build.PushOptions{}); err != nil || got.Unchanged {
		t.Fatalf("push by digest: %+v %v", got, err)
	}
	other := reg.Ref("catalogs/e@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	if _, err := build.Push(context.Background(), res, other, build.PushOptions{}); err == nil {
		t.Error("pushed under another digest")
	}
}

func TestPushLayout(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name, target, dir, tag string
		opts                   build.Options
	}{
		{"default tag", "oci:" + filepath.Join(root, "a"), filepath.Join(root, "a"), "latest", build.Options{Base: build.BaseScratch}},
		{"tag", "oci:" + filepath.Join(root, "b") + ":v1", filepath.Join(root, "b"), "v1", build.Options{Base: build.BaseScratch}},
		{"index", "oci:" + filepath.Join(root, "c") + ":multi", filepath.Join(root, "c"), "multi",
			build.Options{Base: build.BaseScratch, Platforms: []string{"linux/amd64", "linux/arm64"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustBuild(t, fixture, tt.opts)
			got, err := build.Push(context.Background(), res, tt.target, build.PushOptions{})
			if err != nil || got.Unchanged {
				t.Fatalf("first push: %+v %v, want published", got, err)
			}
			index := filepath.Join(tt.dir, "index.json")
			before, err := os.Stat(index)
			if err != nil {
				t.Fatal(err)
			}
			got, err = build.Push(context.Background(), mustBuild(t, fixture, tt.opts), tt.target, build.PushOptions{})
			if err != nil || !got.Unchanged {
				t.Fatalf("second push: %+v %v, want unchanged", got, err)
			}
			after, err := os.Stat(index)
			if err != nil || !after.ModTime().Equal(before.ModTime()) {
				t.Error("index.json rewritten by an unchanged push")
			}
			assertLayoutTag(t, tt.dir, tt.tag, res.Digest.String(), 1)

			// Another image under the same tag replaces it.
			o := tt.opts
			o.References = map[string]string{"x": "y"}
			next := mustBuild(t, fixture, o)
			if got, err := build.Push(context.Background(), next, tt.target, build.PushOptions{}); err != nil || got.Unchanged {
				t.Fatalf("retag: %+v %v", got, err)
			}
			assertLayoutTag(t, tt.dir, tt.tag, next.Digest.String(), 1)
		})
	}

	// Never into a directory that holds something else.
	busy := filepath.Join(root, "busy")
	if err := os.MkdirAll(busy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(busy, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustBuild(t, fixture, build.Options{Base: build.BaseScratch})
	if _, err := build.Push(context.Background(), res, "oci:"+busy, build.PushOptions{}); err == nil {
		t.Error("wrote a layout into a non-empty directory")
	}
}

// assertLayoutTag checks that the layout in dir has n manifests, one of
// them tagged tag at digest.
func assertLayoutTag(t *testing.T, dir, tag, digest string, n int) {
	t.Helper()
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != n {
		t.Errorf("layout has %d manifests, want %d", len(m.Manifests), n)
	}
	for _, d := range m.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] == tag {
			if d.Digest.String() != digest {
				t.Errorf("tag %s is %s, want %s", tag, d.Digest, digest)
			}
			return
		}
	}
	t.Errorf("no manifest tagged %s", tag)
}

func TestSplitLayout(t *testing.T) {
	tests := []struct{ in, dir, tag string }{
		{"out", "out", "latest"},
		{"out:v1", "out", "v1"},
		{"/tmp/a:b/out", "/tmp/a:b/out", "latest"},
		{"/tmp/a:b/out:v2", "/tmp/a:b/out", "v2"},
		{`C:\out`, `C:\out`, "latest"},
	}
	for _, tt := range tests {
		dir, tag := build.SplitLayout(tt.in)
		if dir != tt.dir || tag != tt.tag {
			t.Errorf("SplitLayout(%q) = %q, %q; want %q, %q", tt.in, dir, tag, tt.dir, tt.tag)
		}
	}
}

func mustRef(t testing.TB, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPushCredentialsStayHome: a registry whose challenge names a token
// realm on another host never gets the push credentials sent there.
func TestPushCredentialsStayHome(t *testing.T) {
	var mu sync.Mutex
	var realmAuth []string
	realm := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		realmAuth = append(realmAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusUnauthorized)
	}))
	reg := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="http://localhost:`+realm.Port+`/token",service="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	res := mustBuild(t, fixture, build.Options{Base: build.BaseScratch})
	creds := authn.FromConfig(authn.AuthConfig{Username: "publisher", Password: "push-secret"})
	_, err := build.Push(context.Background(), res, reg.Addr+"/catalogs/x:v1", build.PushOptions{
		Insecure: []string{reg.Addr}, Remote: []remote.Option{remote.WithAuth(creds)}})
	if err == nil {
		t.Fatal("the push passed a registry that refuses everyone")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(realmAuth) == 0 {
		t.Fatal("the realm was not asked")
	}
	for _, a := range realmAuth {
		if a != "" {
			t.Errorf("the realm on another host was sent %q", a)
		}
	}
}
