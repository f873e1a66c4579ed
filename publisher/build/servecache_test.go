package build_test

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
)

// fakeOPM is testdata/fakeopm built once per test binary: static, and
// dynamic (linked by the system linker against libc) for the loader path.
var fakeOPM = struct {
	once              sync.Once
	static, dynamic   []byte
	staticErr, dynErr error
}{}

func fakeOPMBinaries(t *testing.T) (static, dynamic []byte) {
	t.Helper()
	fakeOPM.once.Do(func() {
		dir, err := os.MkdirTemp("", "catalogbot-fakeopm-")
		if err != nil {
			fakeOPM.staticErr = err
			return
		}
		defer os.RemoveAll(dir)
		build := func(cgo string, args ...string) ([]byte, error) {
			out := filepath.Join(dir, "opm-"+cgo)
			cmd := exec.Command("go", append(append([]string{"build", "-o", out}, args...), "./testdata/fakeopm")...)
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
			if msg, err := cmd.CombinedOutput(); err != nil {
				return nil, &buildError{err, msg}
			}
			return os.ReadFile(out)
		}
		fakeOPM.static, fakeOPM.staticErr = build("0")
		fakeOPM.dynamic, fakeOPM.dynErr = build("1", "-ldflags=-linkmode=external")
	})
	if fakeOPM.staticErr != nil {
		t.Fatalf("build testdata/fakeopm: %v", fakeOPM.staticErr)
	}
	return fakeOPM.static, fakeOPM.dynamic
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + ": " + string(e.out) }

// entry is one tar entry of a test layer: a directory when name ends in
// "/", a symbolic link when link is set, a hard link when hard is set,
// else a file with data.
type entry struct {
	name string
	data []byte
	link string
	hard string
}

func tarLayer(t testing.TB, entries ...entry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o755}
		switch {
		case strings.HasSuffix(e.name, "/"):
			h.Typeflag = tar.TypeDir
		case e.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.link
		case e.hard != "":
			h.Typeflag, h.Linkname = tar.TypeLink, e.hard
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// opmBase is an image for platform p with these layers, run as user 1001
// as the opm image is.
func opmBase(t testing.TB, p string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.DockerManifestSchema2), layers...)
	if err != nil {
		t.Fatal(err)
	}
	return configured(t, img, p, func(c *v1.Config) {
		c.User = "1001"
		c.Entrypoint = []string{"/bin/opm"}
	})
}

const hostPlatform = runtime.GOOS + "/" + runtime.GOARCH

// withCatalogFile is a copy of the fixture catalog with one more file.
func withCatalogFile(t *testing.T, name, content string) string {
	dir := t.TempDir()
	copyTree(t, fixture, dir)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestServeCache builds on opm bases whose /bin/opm is found (or not)
// through links, whiteouts and layers, and checks what the image gets: a
// cache layer and opm's own command, or the integrity check turned off
// and a note that says why.
func TestServeCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("opm runs on linux only")
	}
	opm, dynOPM := fakeOPMBinaries(t)
	reg := newRegistry(t)
	notELF := []byte("#!/bin/sh\nexit 0\n")

	type tc struct {
		name     string
		platform string
		layers   [][]entry
		catalog  string // default: the fixture
		opts     build.Options
		note     string // "" means a cache is built
	}
	tests := []tc{
		{name: "file", layers: [][]entry{{{name: "bin/"}, {name: "bin/opm", data: opm}}}},
		{name: "absolute and relative links", layers: [][]entry{{
			{name: "usr/local/bin/opm-1.65", data: opm},
			{name: "usr/bin/opm", link: "/usr/local/bin/opm-1.65"},
			{name: "bin", link: "usr/bin"},
		}}},
		{name: "link through dot-dot above the root", layers: [][]entry{{
			{name: "opt/opm", data: opm},
			{name: "bin/opm", link: "../../../../opt/opm"},
		}}},
		{name: "hard link", layers: [][]entry{{{name: "usr/bin/opm", data: opm}, {name: "bin/opm", hard: "usr/bin/opm"}}}},
		{name: "upper layer replaces", layers: [][]entry{
			{{name: "bin/opm", data: notELF}},
			{{name: "bin/opm", data: opm}},
		}},
		{name: "link replaced by a file", layers: [][]entry{
			{{name: "bin/opm", link: "/nowhere"}},
			{{name: "bin/opm", data: opm}},
		}},
		{name: "opaque directory keeps its own layer", layers: [][]entry{
			{{name: "bin/opm", data: notELF}},
			{{name: "bin/"}, {name: "bin/opm", data: opm}, {name: "bin/.wh..wh..opq"}},
		}},
		{name: "shared binary, two platforms", platform: hostPlatform + "," + hostPlatform + "/v2",
			layers: [][]entry{{{name: "bin/opm", data: opm}}}},
		{name: "whiteout", layers: [][]entry{
			{{name: "bin/opm", data: opm}},
			{{name: "bin/.wh.opm"}},
		}, note: "the base has no opm: /bin/opm: /bin/opm does not exist"},
		{name: "whiteout of the directory", layers: [][]entry{
			{{name: "bin/opm", data: opm}},
			{{name: ".wh.bin"}},
		}, note: "the base has no opm"},
		{name: "opaque whiteout", layers: [][]entry{
			{{name: "bin/opm", data: opm}},
			{{name: "bin/"}, {name: "bin/.wh..wh..opq"}, {name: "bin/sh", data: notELF}},
		}, note: "the base has no opm"},
		{name: "no opm", layers: [][]entry{{{name: "bin/sh", data: notELF}}}, note: "the base has no opm"},
		{name: "dangling link", layers: [][]entry{{{name: "bin/opm", link: "/usr/bin/opm"}}},
			note: "the base has no opm: /bin/opm: /usr does not exist"},
		{name: "link loop", layers: [][]entry{{{name: "bin/opm", link: "opm2"}, {name: "bin/opm2", link: "opm"}}},
			note: "too many levels of symbolic links"},
		{name: "not a binary", layers: [][]entry{{{name: "bin/opm", data: notELF}}}, note: "/bin/opm is not an ELF binary"},
		{name: "opm fails", layers: [][]entry{{{name: "bin/opm", data: opm}}}, catalog: "fail-opm",
			note: `the base's opm failed to build the cache: exit status 1: level=fatal msg="failed to load or rebuild cache: fake failure"`},
		{name: "turned off", layers: [][]entry{{{name: "bin/opm", data: opm}}}, opts: build.Options{NoServeCache: true},
			note: "the cache step is turned off"},
	}
	other := "linux/arm64"
	if runtime.GOARCH == "arm64" {
		other = "linux/amd64"
	}
	tests = append(tests, tc{name: "another architecture", platform: other,
		layers: [][]entry{{{name: "bin/opm", data: opm}}},
		note:   "the base's opm is for " + other + " and this host is " + hostPlatform})
	if runtime.GOARCH == "amd64" && fakeOPM.dynErr == nil {
		// The loader and libc of this host, placed as Debian places them.
		loader, _ := os.ReadFile("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
		libc, _ := os.ReadFile("/lib/x86_64-linux-gnu/libc.so.6")
		if len(loader) > 0 && len(libc) > 0 {
			tests = append(tests, tc{name: "dynamic, with the base's loader", layers: [][]entry{
				{{name: "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", data: loader}, {name: "lib64/ld-linux-x86-64.so.2", link: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}},
				{{name: "usr/lib/x86_64-linux-gnu/libc.so.6", data: libc}, {name: "bin/opm", data: dynOPM}},
			}}, tc{name: "dynamic, no libc", layers: [][]entry{
				{{name: "lib64/ld-linux-x86-64.so.2", data: loader}, {name: "bin/opm", data: dynOPM}},
			}, note: "/bin/opm needs libc.so.6: not found"}, tc{name: "dynamic, no loader", layers: [][]entry{
				{{name: "bin/opm", data: dynOPM}},
			}, note: "/bin/opm needs the loader /lib64/ld-linux-x86-64.so.2"})
		}
	}

	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var layers []v1.Layer
			for _, l := range tt.layers {
				layers = append(layers, tarLayer(t, l...))
			}
			platforms := strings.Split(cmp.Or(tt.platform, hostPlatform), ",")
			ref := reg.Ref("opm/case" + string(rune('a'+i)) + ":v1")
			if len(platforms) == 1 {
				registrytest.Push(t, ref, opmBase(t, platforms[0], layers...))
			} else {
				idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
				for _, p := range platforms {
					pl, _ := v1.ParsePlatform(p)
					idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: opmBase(t, p, layers...), Descriptor: v1.Descriptor{Platform: pl}})
				}
				registrytest.PushIndex(t, ref, idx)
			}
			dir := fixture
			log := filepath.Join(t.TempDir(), "opm.log")
			switch tt.catalog {
			case "fail-opm":
				dir = withCatalogFile(t, "fail-opm", "")
			default:
				dir = withCatalogFile(t, "opm-log", log)
			}
			o := tt.opts
			o.OPMImage = ref
			res := mustBuild(t, dir, o)
			if len(res.Notes) != len(platforms) {
				t.Fatalf("notes %q, want one per platform", res.Notes)
			}
			for _, img := range images(t, res) {
				cfg, err := img.ConfigFile()
				if err != nil {
					t.Fatal(err)
				}
				n := len(cfg.History)
				wantCmd := []string{"serve", "/configs", "--cache-dir=/tmp/cache"}
				if tt.note != "" {
					wantCmd = append(wantCmd, "--cache-enforce-integrity=false")
					if !strings.Contains(res.Notes[0], tt.note) || !strings.Contains(res.Notes[0], "--cache-enforce-integrity=false") {
						t.Errorf("note %q, want it to say %q", res.Notes[0], tt.note)
					}
					if n != len(layers)+1 {
						t.Errorf("%d layers, want the base's and the catalog", n)
					}
				} else {
					if !strings.Contains(res.Notes[0], "opm serve cache built with the base's own opm") {
						t.Errorf("note %q, want a cache built", res.Notes[0])
					}
					want := "RUN /bin/opm serve /configs --cache-dir=/tmp/cache --cache-only # catalogbot"
					if n != len(layers)+2 || cfg.History[n-1].CreatedBy != want {
						t.Errorf("history %+v, want %d entries ending with the cache", cfg.History, len(layers)+2)
					}
				}
				if !slices.Equal(cfg.Config.Cmd, wantCmd) {
					t.Errorf("cmd %q, want %q", cfg.Config.Cmd, wantCmd)
				}
			}
			if tt.note == "" {
				// Platforms with the same opm share one run.
				data, err := os.ReadFile(log)
				if err != nil || string(data) != "ran\n" {
					t.Errorf("opm ran %q (%v), want once", data, err)
				}
				if again := mustBuild(t, dir, o); again.Digest != res.Digest {
					t.Errorf("second build: digest %s, want %s", again.Digest, res.Digest)
				}
			}
		})
	}
}

// TestCacheLayer pins the tar entries of the cache layer: /tmp/cache and
// what opm wrote there, owned by the base's user, with opm's modes and the
// epoch as every time, and no entry for /tmp, whose mode is the base's.
func TestCacheLayer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("opm runs on linux only")
	}
	opm, _ := fakeOPMBinaries(t)
	reg := newRegistry(t)
	ref := reg.Ref("opm/layer:v1")
	registrytest.Push(t, ref, opmBase(t, hostPlatform, tarLayer(t, entry{name: "bin/opm", data: opm})))
	res := mustBuild(t, fixture, build.Options{OPMImage: ref})
	layers, err := res.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	checkstest.Golden(t, "testdata/cache-layer.golden", []byte(tarListing(t, layers[len(layers)-1])))
}

// images are the platform images of a result.
func images(t *testing.T, res *build.Result) []v1.Image {
	t.Helper()
	if res.Index == nil {
		return []v1.Image{res.Image}
	}
	m, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var imgs []v1.Image
	for _, d := range m.Manifests {
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	return imgs
}

// TestServeCacheReadError fails the build when the base's layers cannot
// be read: a transient fault must not give an image without the cache,
// whose digest would differ from the one the same inputs give.
func TestServeCacheReadError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("opm runs on linux only")
	}
	opm, _ := fakeOPMBinaries(t)
	layer := tarLayer(t, entry{name: "bin/opm", data: opm})
	ld, err := layer.Digest()
	if err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() && strings.HasSuffix(r.URL.Path, "/blobs/"+ld.String()) {
			http.Error(w, "denied", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/opm/flaky:v1"
	registrytest.Push(t, ref, opmBase(t, hostPlatform, layer))
	fail.Store(true)
	res, err := build.Build(context.Background(), fixture, build.Options{OPMImage: ref})
	if err == nil || !strings.Contains(err.Error(), "serve cache ("+hostPlatform+")") {
		t.Fatalf("build gave %v, %v; want the read error", res, err)
	}
}
