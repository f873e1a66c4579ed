package assemble

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// tree reads every file and directory under dir, for byte-for-byte
// comparisons of whole outputs.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			files[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s is missing", p)
		} else if g != w {
			t.Errorf("%s changed", p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is new", p)
		}
	}
}

func newAssembler(t testing.TB, opts Options) *Assembler {
	t.Helper()
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestParity checks that each index.yaml is what render (opm render -o
// yaml) prints for the same image, that the layout is the one catalog
// repositories use, and that a second run writes the same bytes.
func TestParity(t *testing.T) {
	reg := newTestRegistry(t, 0)
	f := pushCatalogs(t, reg, 3)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()

	res, err := newAssembler(t, Options{}).Assemble(ctx, f, out)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "test-catalog"); res.Dir != want {
		t.Errorf("Dir = %s, want %s", res.Dir, want)
	}
	r, err := render.New(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range f.References {
		cfg, err := r.Render(ctx, ref.Image)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := render.WriteYAML(&want, cfg); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, "test-catalog", ref.Name, "index.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: index.yaml differs from render's output:\n%s\nwant:\n%s", ref.Name, got, want.Bytes())
		}
	}

	golden := filepath.Join("testdata", "ref-0.index.yaml")
	got, _ := os.ReadFile(filepath.Join(out, "test-catalog", "ref-0", "index.yaml"))
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ref-0 index.yaml differs from %s:\n%s", golden, got)
	}

	first := tree(t, out)
	if _, err := newAssembler(t, Options{}).Assemble(ctx, f, out); err != nil {
		t.Fatalf("second run: %v", err)
	}
	sameTree(t, tree(t, out), first)
	assertNoLeftovers(t, filepath.Dir(out), "out")
}

// assertNoLeftovers checks that dir holds nothing but want: no temporary
// or set-aside directories.
func assertNoLeftovers(t *testing.T, dir string, want ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
}

// TestFailureLeavesOutput checks all or nothing: with one good and two
// broken references, the earlier output stays byte for byte, nothing is
// left behind, and the error names each broken reference with its class.
func TestFailureLeavesOutput(t *testing.T) {
	reg := newTestRegistry(t, 0)
	good := pushCatalogs(t, reg, 2)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	if _, err := newAssembler(t, Options{}).Assemble(ctx, good, out); err != nil {
		t.Fatal(err)
	}
	before := tree(t, out)

	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("cache=%v", cache), func(t *testing.T) {
			bad := parse(t, fmt.Sprintf(`name: test-catalog
references:
- name: ref-0
  image: %[1]s/example/ref-0-catalog:latest
- name: missing
  image: %[1]s/example/missing-catalog:latest
- name: unreachable
  image: 127.0.0.1:1/example/gone-catalog:latest
`, reg.host))
			opts := Options{}
			if cache {
				opts.CacheDir = t.TempDir()
			}
			_, err := newAssembler(t, opts).Assemble(ctx, bad, out)
			var aerr *Error
			if !errors.As(err, &aerr) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			got := map[string]Class{}
			for _, f := range aerr.Failures {
				got[f.Name] = f.Class
			}
			want := map[string]Class{"missing": registry.ClassNotFound, "unreachable": registry.ClassTransport}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("failures = %v, want %v", got, want)
			}
			for _, s := range []string{"missing (", "not_found", "unreachable (", "transport"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not say %q:\n%v", s, err)
				}
			}
			sameTree(t, tree(t, out), before)
			assertNoLeftovers(t, filepath.Dir(out), "out")
		})
	}
}

// TestRejectedBeforeAnyRequest checks that names that are not plain,
// unique directory names stop the run before the registry is asked.
func TestRejectedBeforeAnyRequest(t *testing.T) {
	reg := newTestRegistry(t, 0)
	tests := []struct {
		name, yaml, finding string
	}{
		{"duplicate", "name: c\nreferences:\n- name: a\n  image: %[1]s/x/a:v1\n- name: a\n  image: %[1]s/x/b:v1\n", "catalog.yaml:5: duplicate reference name"},
		{"traversal", "name: c\nreferences:\n- name: ../a\n  image: %[1]s/x/a:v1\n", "catalog.yaml:3: reference name \"../a\" cannot be a directory name"},
		{"catalog-traversal", "name: ..\nreferences:\n- name: a\n  image: %[1]s/x/a:v1\n", "catalog.yaml:1: catalog name \"..\" cannot be a directory name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.reset()
			f, findings := parseLoose(fmt.Sprintf(tt.yaml, reg.host))
			if len(findings) == 0 || !strings.Contains(findings[0], tt.finding) {
				t.Errorf("findings = %q, want one with %q", findings, tt.finding)
			}
			// Even a caller that ignores the findings gets no further.
			out := filepath.Join(t.TempDir(), "out")
			if _, err := newAssembler(t, Options{}).Assemble(context.Background(), f, out); err == nil {
				t.Error("Assemble succeeded")
			}
			if n := reg.requests.Load(); n != 0 {
				t.Errorf("%d registry requests, want none", n)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output exists: %v", err)
			}
		})
	}
}

// TestCache checks that an unchanged re-run downloads no blob and writes
// the same bytes, and that a moved tag is rendered again.
func TestCache(t *testing.T) {
	reg := newTestRegistry(t, 0)
	f := pushCatalogs(t, reg, 4)
	out := filepath.Join(t.TempDir(), "out")
	cache := t.TempDir()
	ctx := context.Background()
	a := newAssembler(t, Options{CacheDir: cache})

	if _, err := a.Assemble(ctx, f, out); err != nil {
		t.Fatal(err)
	}
	first := tree(t, out)

	reg.reset()
	res, err := a.Assemble(ctx, f, out)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.blobGets.Load(); n != 0 {
		t.Errorf("re-run made %d blob GETs, want 0", n)
	}
	for _, r := range res.References {
		if !r.Cached || !strings.HasPrefix(r.Digest, "sha256:") {
			t.Errorf("%s: cached=%v digest=%q, want a cache hit with a digest", r.Name, r.Cached, r.Digest)
		}
	}
	sameTree(t, tree(t, out), first)

	// Move ref-2's tag to a new image.
	registrytest.Push(t, f.References[2].Image, catalogImage(t, "ref-2", "2.0.0"))
	reg.reset()
	res, err = a.Assemble(ctx, f, out)
	if err != nil {
		t.Fatal(err)
	}
	if reg.blobGets.Load() == 0 {
		t.Error("moved tag: no blob GETs, want ref-2 rendered again")
	}
	for _, r := range res.References {
		if r.Cached != (r.Name != "ref-2") {
			t.Errorf("%s: cached=%v", r.Name, r.Cached)
		}
	}
	data, _ := os.ReadFile(filepath.Join(out, "test-catalog", "ref-2", "index.yaml"))
	if !strings.Contains(string(data), "ref-2.v2.0.0") {
		t.Errorf("ref-2 was not re-rendered:\n%s", data)
	}
	// No temporary cache files are left behind.
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("cache holds temporary file %s", e.Name())
		}
	}
	if len(entries) != 5 {
		t.Errorf("cache holds %d entries, want 5", len(entries))
	}
}

// TestConcurrencyBound checks that no more references are in flight than
// asked for, and that the bound is reached, so rendering does overlap.
func TestConcurrencyBound(t *testing.T) {
	reg := newTestRegistry(t, 10*time.Millisecond)
	f := pushCatalogs(t, reg, 12)
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			reg.reset()
			var done int
			opts := Options{Concurrency: n, Progress: func(e Event) {
				if e.State == StateDone {
					done++
				}
			}}
			if _, err := newAssembler(t, opts).Assemble(context.Background(), f, filepath.Join(t.TempDir(), "out")); err != nil {
				t.Fatal(err)
			}
			if got := reg.maxFlight.Load(); got != int64(n) {
				t.Errorf("at most %d requests in flight, want %d", got, n)
			}
			if done != len(f.References) {
				t.Errorf("%d done events, want %d", done, len(f.References))
			}
		})
	}
}

// TestRefusesForeignOutput checks that a directory assemble did not write,
// such as a repository root, is never replaced.
func TestRefusesForeignOutput(t *testing.T) {
	reg := newTestRegistry(t, 0)
	f := pushCatalogs(t, reg, 1)
	reg.reset()
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "catalog.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newAssembler(t, Options{}).Assemble(context.Background(), f, out)
	if err == nil || !strings.Contains(err.Error(), "refusing to replace") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if n := reg.requests.Load(); n != 0 {
		t.Errorf("%d registry requests, want none", n)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want Class
	}{
		{&transport.Error{StatusCode: http.StatusNotFound}, registry.ClassNotFound},
		{&transport.Error{StatusCode: http.StatusNotFound, Errors: []transport.Diagnostic{{Code: transport.DeniedErrorCode}}}, registry.ClassUnauthorized},
		{&transport.Error{StatusCode: http.StatusUnauthorized}, registry.ClassUnauthorized},
		{&transport.Error{StatusCode: http.StatusForbidden}, registry.ClassUnauthorized},
		{&transport.Error{StatusCode: http.StatusTooManyRequests}, registry.ClassRateLimited},
		{&transport.Error{StatusCode: http.StatusBadGateway}, registry.ClassTransport},
		{&transport.Error{StatusCode: http.StatusBadRequest, Errors: []transport.Diagnostic{{Code: transport.ManifestUnknownErrorCode}}}, registry.ClassNotFound},
		{context.DeadlineExceeded, registry.ClassTransport},
		{&render.RefError{Ref: "x", Kind: render.KindImage, Err: errors.New("image type could not be determined")}, registry.ClassPolicy},
		{&render.RefError{Ref: "x", Kind: render.KindImage, Err: fmt.Errorf("wrapped: %w", &transport.Error{StatusCode: 404})}, registry.ClassNotFound},
		{&render.RefError{Ref: "x", Kind: render.KindCatalogImage, Err: errors.New("invalid package")}, ClassInvalid},
	}
	for _, tt := range tests {
		if got, _ := classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// TestCacheWithoutHead checks that a registry refusing HEAD still gets a
// working cache, resolved with a manifest GET and no layer download.
func TestCacheWithoutHead(t *testing.T) {
	reg := newTestRegistry(t, 0)
	f := pushCatalogs(t, reg, 2)
	reg.refuseHead.Store(true)
	a := newAssembler(t, Options{CacheDir: t.TempDir()})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := a.Assemble(context.Background(), f, out); err != nil {
		t.Fatal(err)
	}
	reg.reset()
	res, err := a.Assemble(context.Background(), f, out)
	if err != nil {
		t.Fatal(err)
	}
	if n := reg.blobGets.Load(); n != 0 {
		t.Errorf("re-run made %d blob GETs, want 0", n)
	}
	for _, r := range res.References {
		if !r.Cached {
			t.Errorf("%s was not taken from the cache", r.Name)
		}
	}
}

func TestProgress(t *testing.T) {
	events := []Event{
		{Name: "a", State: StateQueued},
		{Name: "bb", State: StateQueued},
		{Name: "a", State: StateRendering},
		{Name: "a", State: StateDone, Digest: "sha256:abc", Bytes: 10},
		{Name: "bb", State: StateDone, Cached: true, Bytes: 20},
		{Name: "c", State: StateFailed, Err: &transport.Error{StatusCode: 404}},
	}
	var log bytes.Buffer
	p := LogProgress(&log)
	for _, e := range events {
		p(e)
	}
	wantLog := "assemble: a: rendered sha256:abc (10 bytes)\nassemble: bb: cached (20 bytes)\nassemble: c: failed (not_found)\n"
	if log.String() != wantLog {
		t.Errorf("log progress:\n%s\nwant:\n%s", log.String(), wantLog)
	}

	var live bytes.Buffer
	p = LiveProgress(&live)
	for _, e := range events {
		p(e)
	}
	// The last frame moves up over the previous one and redraws each line.
	frames := strings.Split(live.String(), "\x1b[2A")
	last := frames[len(frames)-1]
	want := "\x1b[2Ka   rendered sha256:abc (10 bytes)\n\x1b[2Kbb  cached (20 bytes)\n\x1b[2Kc   failed (not_found)\n"
	if last != want {
		t.Errorf("last frame = %q, want %q", last, want)
	}
}

// TestClassifyMessage: a reference's failure reads as its class, the
// registry and what to do, not as the library's dump of the answer.
func TestClassifyMessage(t *testing.T) {
	answer := func(status int, body string) error {
		req, _ := http.NewRequest(http.MethodGet, "https://registry.example.com/v2/team/catalog/manifests/v9", nil)
		resp := &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(body)), Request: req, Header: http.Header{}}
		return &render.RefError{Ref: "registry.example.com/team/catalog:v9", Kind: render.KindImage,
			Err: fmt.Errorf("failed to pull image: %w", transport.CheckError(resp, http.StatusOK))}
	}
	tests := []struct {
		err  error
		want string
	}{
		{answer(404, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"v9"}}]}`),
			"registry registry.example.com: no such image in the registry (404 Not Found, MANIFEST_UNKNOWN); check the repository and tag, or push the image"},
		{answer(401, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Action":"pull"}]}]}`),
			"registry registry.example.com: the registry refused access (401 Unauthorized); check the credentials for it"},
		// Not the registry's failure: the image's own problem, in its
		// own words.
		{&render.RefError{Ref: "x", Kind: render.KindCatalogImage, Err: errors.New("invalid package")}, `render reference "x": invalid package`},
	}
	for _, tt := range tests {
		if _, got := classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) message\n  %q, want\n  %q", tt.err, got, tt.want)
		}
	}
}
