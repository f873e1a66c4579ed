package publish_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

const configsLabel = "operators.operatorframework.io.index.configs.v1"

// catalogImage is the catalog image of one package directory of a fixture
// catalog; extra labels make a different digest of the same catalog.
func catalogImage(t *testing.T, catalog, pkg string, extra map[string]string) v1.Image {
	t.Helper()
	labels := map[string]string{configsLabel: "/configs"}
	for k, v := range extra {
		labels[k] = v
	}
	dir := filepath.Join("..", "..", "testdata", "catalogs", catalog, pkg)
	return rendertest.Image(t, labels, rendertest.Layer(t, rendertest.DirEntries(t, dir, "configs/"+pkg)...))
}

func parse(t *testing.T, host string) *catalogyaml.File {
	t.Helper()
	data := fmt.Sprintf(`name: demo
references:
  - name: cert-rotator
    image: %[1]s/cert-rotator:v1
  - name: kv-store-operator
    image: %[1]s/kv-store-operator:v1
`, host)
	f, findings := catalogyaml.Parse("catalog.yaml", []byte(data))
	if len(findings) > 0 {
		t.Fatalf("catalog.yaml: %v", findings)
	}
	return f
}

func headDigest(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		return ""
	}
	return d.Digest.String()
}

func options(target string) publish.Options {
	return publish.Options{Image: target, Build: build.Options{Base: build.BaseScratch}, Keychain: authn.NewMultiKeychain()}
}

// TestRebuildRegistry runs the scheduled job four times against one
// registry, as a schedule would: publish, nothing moved, a tag moved, and
// a reference that turned invalid.
func TestPublishRegistry(t *testing.T) {
	ctx := context.Background()
	host := registrytest.New(t).Host
	certRef, kvRef := host+"/cert-rotator:v1", host+"/kv-store-operator:v1"
	registrytest.Push(t, certRef, catalogImage(t, "valid", "cert-rotator", nil))
	registrytest.Push(t, kvRef, catalogImage(t, "valid", "kv-store-operator", nil))
	f := parse(t, host)
	target := host + "/catalog:latest"
	o := options(target)
	// The cache is shared across runs, as with --cache-dir: a moved tag
	// must still be noticed.
	o.CacheDir = t.TempDir()

	first, err := publish.Publish(ctx, publish.Source{List: f}, o)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != publish.Published || first.Previous != "" || first.Drift != nil {
		t.Fatalf("first run: status %s, previous %q, drift %v; want published, none, none", first.Status, first.Previous, first.Drift)
	}
	if got := headDigest(t, target); got != first.Digest {
		t.Fatalf("target is %s, want the published %s", got, first.Digest)
	}
	want := map[string]string{certRef: headDigest(t, certRef), kvRef: headDigest(t, kvRef)}
	if !reflect.DeepEqual(first.References, want) {
		t.Errorf("references = %v, want %v", first.References, want)
	}
	prev, err := publish.ReadPublished(ctx, target, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if prev.Annotations[build.AnnReferences] == "" {
		t.Errorf("published image has no %s annotation: %v", build.AnnReferences, prev.Annotations)
	}

	second, err := publish.Publish(ctx, publish.Source{List: f}, o)
	if err != nil {
		t.Fatal(err)
	}
	if second.Status != publish.Unchanged || second.Digest != first.Digest || len(second.Drift) != 0 {
		t.Fatalf("second run: status %s, digest %s, drift %v; want unchanged, %s, none", second.Status, second.Digest, second.Drift, first.Digest)
	}

	wasCert := want[certRef]
	registrytest.Push(t, certRef, catalogImage(t, "valid", "cert-rotator", map[string]string{"revision": "2"}))
	third, err := publish.Publish(ctx, publish.Source{List: f}, o)
	if err != nil {
		t.Fatal(err)
	}
	wantDrift := []publish.Drift{{Kind: publish.DriftReference, Name: certRef, Was: wasCert, Now: headDigest(t, certRef)}}
	if !reflect.DeepEqual(third.Drift, wantDrift) {
		t.Errorf("drift = %v, want %v", third.Drift, wantDrift)
	}
	if third.Status != publish.Published || third.Digest == first.Digest || third.Previous != first.Digest {
		t.Fatalf("third run: status %s, digest %s, previous %s; want published, a new digest, %s", third.Status, third.Digest, third.Previous, first.Digest)
	}
	if got := headDigest(t, target); got != third.Digest {
		t.Fatalf("target is %s, want the republished %s", got, third.Digest)
	}

	registrytest.Push(t, kvRef, catalogImage(t, "broken", "kv-store-operator", nil))
	fourth, err := publish.Publish(ctx, publish.Source{List: f}, o)
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Status != publish.Invalid || fourth.Findings == nil || fourth.Findings.Valid() {
		t.Fatalf("invalid catalog: status %s, findings %v; want invalid with findings", fourth.Status, fourth.Findings)
	}
	if got := headDigest(t, target); got != third.Digest {
		t.Fatalf("an invalid catalog moved the target to %s", got)
	}
}

// TestRebuildLayout publishes to an OCI layout, the offline target.
func TestPublishLayout(t *testing.T) {
	ctx := context.Background()
	host := registrytest.New(t).Host
	registrytest.Push(t, host+"/cert-rotator:v1", catalogImage(t, "valid", "cert-rotator", nil))
	registrytest.Push(t, host+"/kv-store-operator:v1", catalogImage(t, "valid", "kv-store-operator", nil))
	f := parse(t, host)
	target := "oci:" + filepath.Join(t.TempDir(), "out") + ":v1"

	var digests []string
	for i, want := range []publish.Status{publish.Published, publish.Unchanged} {
		res, err := publish.Publish(ctx, publish.Source{List: f}, options(target))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != want || len(res.Drift) != 0 {
			t.Fatalf("run %d: status %s, drift %v; want %s, none", i+1, res.Status, res.Drift, want)
		}
		digests = append(digests, res.Digest)
	}
	if digests[0] != digests[1] {
		t.Errorf("digests differ across runs: %v", digests)
	}
	prev, err := publish.ReadPublished(ctx, target, nil, nil)
	if err != nil || prev == nil || prev.Digest != digests[0] {
		t.Fatalf("ReadPublished = %v, %v; want digest %s", prev, err, digests[0])
	}
}

func TestReadPublishedMissing(t *testing.T) {
	host := registrytest.New(t).Host
	for _, target := range []string{
		host + "/nothing:latest",
		"oci:" + filepath.Join(t.TempDir(), "absent"),
	} {
		img, err := publish.ReadPublished(context.Background(), target, nil, nil)
		if err != nil || img != nil {
			t.Errorf("ReadPublished(%s) = %v, %v; want nil, nil", target, img, err)
		}
	}
}

func TestCompare(t *testing.T) {
	refs := `{"a:v1":"sha256:1","b:v1":"sha256:2"}`
	tests := []struct {
		name     string
		anns     map[string]string
		refs     map[string]string
		base     string
		baseDig  string
		want     []publish.Drift
		wantNone bool
	}{
		{
			name: "nothing recorded", anns: nil,
			refs: map[string]string{"a:v1": "sha256:1"}, wantNone: true,
		},
		{
			name: "nothing moved", anns: map[string]string{build.AnnReferences: refs, build.AnnBaseName: "opm", build.AnnBaseDigest: "sha256:b"},
			refs: map[string]string{"a:v1": "sha256:1", "b:v1": "sha256:2"}, base: "opm", baseDig: "sha256:b", wantNone: true,
		},
		{
			name: "moved, added, removed", anns: map[string]string{build.AnnReferences: refs},
			refs: map[string]string{"a:v1": "sha256:9", "c:v1": "sha256:3"},
			want: []publish.Drift{
				{Kind: publish.DriftReference, Name: "a:v1", Was: "sha256:1", Now: "sha256:9"},
				{Kind: publish.DriftRemoved, Name: "b:v1", Was: "sha256:2"},
				{Kind: publish.DriftAdded, Name: "c:v1", Now: "sha256:3"},
			},
		},
		{
			name: "base moved", anns: map[string]string{build.AnnBaseName: "opm", build.AnnBaseDigest: "sha256:b"},
			base: "opm", baseDig: "sha256:c",
			want: []publish.Drift{{Kind: publish.DriftBase, Name: "opm", Was: "sha256:b", Now: "sha256:c"}},
		},
		{
			name: "base renamed is configuration, not drift", anns: map[string]string{build.AnnBaseName: "opm", build.AnnBaseDigest: "sha256:b"},
			base: "other", baseDig: "sha256:c", wantNone: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := publish.Compare(tt.anns, tt.refs, tt.base, tt.baseDig)
			if tt.wantNone {
				if len(got) != 0 {
					t.Errorf("drift = %v, want none", got)
				}
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("drift = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPublishTree publishes a repository tree as the App does: its catalog
// roots gathered into one catalog give the digest of that catalog as a
// directory, and a reference list that does not parse is invalid with its
// findings, and publishes nothing.
func TestPublishTree(t *testing.T) {
	ctx := context.Background()
	catalogs := filepath.Join("..", "..", "testdata", "catalogs")
	out := t.TempDir()

	byDir, err := publish.Publish(ctx, publish.Source{Dir: filepath.Join(catalogs, "valid")}, options("oci:"+filepath.Join(out, "dir")))
	if err != nil {
		t.Fatal(err)
	}
	tree := os.DirFS(catalogs)
	byTree, err := publish.Publish(ctx, publish.Source{Tree: tree, Roots: []string{"missing", "valid"}}, options("oci:"+filepath.Join(out, "tree")))
	if err != nil {
		t.Fatal(err)
	}
	if byDir.Status != publish.Published || byTree.Status != publish.Published || byDir.Digest != byTree.Digest {
		t.Errorf("directory: %s %s; tree: %s %s; want both published with one digest", byDir.Status, byDir.Digest, byTree.Status, byTree.Digest)
	}

	list := fstest.MapFS{"catalog.yaml": {Data: []byte("references:\n  - name: x\n")}}
	target := "oci:" + filepath.Join(out, "list")
	res, err := publish.Publish(ctx, publish.Source{Tree: list, ReferenceList: "catalog.yaml"}, options(target))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != publish.Invalid || len(res.ListFindings) == 0 || res.Digest != "" {
		t.Errorf("invalid reference list: status %s, findings %v, digest %q; want invalid with findings", res.Status, res.ListFindings, res.Digest)
	}
	if _, err := os.Stat(filepath.Join(out, "list")); err == nil {
		t.Error("an invalid reference list wrote the target")
	}

	if _, err := publish.Publish(ctx, publish.Source{Tree: tree, Roots: []string{"missing"}}, options("oci:"+filepath.Join(out, "none"))); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("no root exists: err %v, want one naming the roots", err)
	}
}

func TestPublishSourceErrors(t *testing.T) {
	tests := []struct {
		name string
		src  publish.Source
		want string
	}{
		{"nothing", publish.Source{}, "exactly one"},
		{"two", publish.Source{Dir: "catalog", Tree: fstest.MapFS{}, Roots: []string{"catalog"}}, "exactly one"},
		{"a tree without list or roots", publish.Source{Tree: fstest.MapFS{}}, "reference list or its catalog roots"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := publish.Publish(context.Background(), tt.src, options("oci:"+t.TempDir()))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestPublishTarpit: a target registry that accepts connections and never
// answers ends the publish at its deadline, with a *DeadlineError, rather
// than holding it for the sum of every request's timeouts.
func TestPublishTarpit(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	o := options(tarpit.Addr + "/catalog:v1")
	o.InsecureRegistries = []string{tarpit.Addr}
	o.Deadline = 500 * time.Millisecond
	dir := filepath.Join("..", "..", "testdata", "catalogs", "valid")
	done := make(chan error, 1)
	go func() {
		_, err := publish.Publish(context.Background(), publish.Source{Dir: dir}, o)
		done <- err
	}()
	select {
	case err := <-done:
		var de *publish.DeadlineError
		if !errors.As(err, &de) || de.Deadline != o.Deadline || !strings.Contains(err.Error(), "deadline of 500ms") {
			t.Fatalf("Publish to a tarpit = %v, want a *DeadlineError of 500ms", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Publish to a tarpit did not end at its deadline")
	}
	if tarpit.Conns() == 0 {
		t.Error("the tarpit was never contacted: the test proves nothing")
	}
}

// TestReadPublishedTarpit: reading the image at the target is bounded by
// the registry timeouts even when the caller gives no transport.
func TestReadPublishedTarpit(t *testing.T) {
	t.Setenv(timeout.EnvTimeout, "200ms")
	tarpit := registrytest.NewTarpit(t)
	done := make(chan error, 1)
	go func() {
		_, err := publish.ReadPublished(context.Background(), tarpit.Addr+"/catalog:v1", []string{tarpit.Addr},
			[]remote.Option{remote.WithAuthFromKeychain(authn.NewMultiKeychain())})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("reading from a tarpit succeeded")
		}
	case <-time.After(time.Minute):
		t.Fatal("reading the published image from a tarpit did not end within the registry timeouts")
	}
}
