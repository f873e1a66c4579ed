package fbc_test

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// countingFS counts the reads of its files' content and can make them
// fail, standing in for a git tree: its files name their content by an
// object id, as a tree's do.
type countingFS struct {
	fstest.MapFS
	reads atomic.Int64
	fail  atomic.Bool
}

func (c *countingFS) Open(name string) (fs.File, error) {
	f, err := c.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

type countingFile struct {
	fs.File
	fs *countingFS
}

var errMisread = errors.New("object does not hash to its id")

func (f *countingFile) Read(p []byte) (int, error) {
	if f.fs.reads.Add(1) == 1 {
		// The first read dawdles, so that loads started at once all
		// ask for the file while it is being read.
		time.Sleep(50 * time.Millisecond)
	}
	if f.fs.fail.Load() {
		return 0, errMisread
	}
	return f.File.Read(p)
}

func objectFS(files map[string]string) *countingFS {
	m := fstest.MapFS{}
	for name, data := range files {
		m[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o444, Sys: plumbing.ComputeHash(plumbing.BlobObject, []byte(data))}
	}
	return &countingFS{MapFS: m}
}

// TestCacheByObjectID: in one pass, a file of a git tree that was decoded
// already is not read again, however many loads ask for it at once, and a
// file that could not be read is not remembered as such.
func TestCacheByObjectID(t *testing.T) {
	files := map[string]string{
		"a/catalog.yaml": validCatalog,
		"b/catalog.yaml": "schema: olm.package\nname: bar\n",
	}
	want, err := fbc.Validate(context.Background(), objectFS(files), fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("concurrent loads read once", func(t *testing.T) {
		fsys := objectFS(files)
		ctx := fbc.WithCache(context.Background(), fbc.NewCache())
		var wg sync.WaitGroup
		results := make([]*fbc.Result, 8)
		for i := range results {
			wg.Go(func() {
				res, err := fbc.Validate(ctx, fsys, fbc.Options{})
				if err != nil {
					t.Error(err)
				}
				results[i] = res
			})
		}
		wg.Wait()
		first := fsys.reads.Load()
		if _, err := fbc.Validate(ctx, fsys, fbc.Options{}); err != nil {
			t.Fatal(err)
		}
		if again := fsys.reads.Load(); again != first {
			t.Errorf("a load after the first read the files again: %d reads, then %d", first, again)
		}
		// Two files, read to their end: one read each for the content
		// and one for the end, at most, and never once per load.
		if first > 4 {
			t.Errorf("%d loads at once made %d reads of two files; each file is to be read once", len(results), first)
		}
		for i, res := range results {
			if !reflect.DeepEqual(res.Findings, want.Findings) || !reflect.DeepEqual(res.PackagePlaces, want.PackagePlaces) {
				t.Errorf("load %d: %+v, want %+v", i, res, want)
			}
		}
	})

	t.Run("a failed read is not kept", func(t *testing.T) {
		fsys := objectFS(files)
		ctx := fbc.WithCache(context.Background(), fbc.NewCache())
		fsys.fail.Store(true)
		res, err := fbc.Validate(ctx, fsys, fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid() {
			t.Fatal("a catalog whose files could not be read is valid")
		}
		fsys.fail.Store(false)
		res, err = fbc.Validate(ctx, fsys, fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Findings, want.Findings) {
			t.Errorf("after a failed read, the next load gave %+v, want %+v", res.Findings, want.Findings)
		}
	})
}

// TestCacheWholeLoads: under a cache, whole loads of one file (the same
// package in the catalog of every OpenShift version) read it once and
// share what was decoded, while LoadConfig, whose caller owns the blobs
// it gets, decodes for itself every time.
func TestCacheWholeLoads(t *testing.T) {
	files := map[string]string{"a/catalog.yaml": validCatalog}
	fsys := objectFS(files)
	ctx := fbc.WithCache(context.Background(), fbc.NewCache())
	first, err := fbc.LoadPlacedWhole(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	reads := fsys.reads.Load()
	second, err := fbc.LoadPlacedWhole(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if again := fsys.reads.Load(); again != reads {
		t.Errorf("a second whole load read the file again: %d reads, then %d", reads, again)
	}
	if len(first.Config.Bundles) == 0 || len(first.Config.Bundles[0].Properties) == 0 {
		t.Fatalf("the catalog loaded no bundle properties: %+v", first.Config)
	}
	if !reflect.DeepEqual(first.Config, second.Config) || !reflect.DeepEqual(first.Bundles, second.Bundles) {
		t.Error("two whole loads of one file differ")
	}
	if &first.Config.Bundles[0].Properties[0] != &second.Config.Bundles[0].Properties[0] {
		t.Error("two whole loads under one cache decoded the file twice")
	}

	owned := make([]*declcfg.DeclarativeConfig, 2)
	for i := range owned {
		if owned[i], err = fbc.LoadConfig(ctx, fsys); err != nil {
			t.Fatal(err)
		}
	}
	if &owned[0].Bundles[0].Properties[0] == &owned[1].Bundles[0].Properties[0] {
		t.Error("two LoadConfig calls share their blobs; each caller owns its own")
	}
	if &owned[0].Bundles[0].Properties[0] == &first.Config.Bundles[0].Properties[0] {
		t.Error("LoadConfig shares the blobs of a whole load")
	}
}

// TestCacheDocuments: under a cache, a document met again in another
// file (the other side of a change to a large package file) is taken
// from what the first whole load typed, placed where it now is: the
// loads are those made without a cache, place for place.
func TestCacheDocuments(t *testing.T) {
	base := map[string]string{"foo/catalog.yaml": validCatalog}
	head := map[string]string{"foo/catalog.yaml": "schema: olm.package\nname: extra\n---\n" + validCatalog + "---\nschema: olm.package\nname: 1\n"}
	ctx := fbc.WithCache(context.Background(), fbc.NewCache())
	for _, files := range []map[string]string{base, head} {
		want, err := fbc.LoadPlacedWhole(context.Background(), objectFS(files))
		if err != nil {
			t.Fatal(err)
		}
		got, err := fbc.LoadPlacedWhole(ctx, objectFS(files))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Config, want.Config) || !reflect.DeepEqual(got.Packages, want.Packages) ||
			!reflect.DeepEqual(got.Channels, want.Channels) || !reflect.DeepEqual(got.Bundles, want.Bundles) ||
			!reflect.DeepEqual(got.Unread, want.Unread) {
			t.Errorf("a whole load under a cache differs from one without:\n got %+v\nwant %+v", got, want)
		}
		res, err := fbc.Validate(ctx, objectFS(files), fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		lean, err := fbc.Validate(context.Background(), objectFS(files), fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Findings, lean.Findings) {
			t.Errorf("a validation under a cache found %+v, without %+v", res.Findings, lean.Findings)
		}
	}
}

// TestCacheSameTree: under a cache, a tree that holds the same files as one
// loaded before (a package in the catalog of each OpenShift version) is the
// same Placed and the same validation, while a tree that differs in one
// file is its own; a caller that changes the validation it got changes no
// other caller's.
func TestCacheSameTree(t *testing.T) {
	const other = "schema: olm.package\nname: foo\ndefaultChannel: stable\n"
	fsys := objectFS(map[string]string{
		"v4.17/foo/catalog.yaml": validCatalog,
		"v4.18/foo/catalog.yaml": validCatalog,
		"v4.19/foo/catalog.yaml": other,
	})
	opened := &openCounter{FS: fsys, n: map[string]int{}}
	root := func(name string) fs.FS { return subCounter{opened, name} }
	ctx := fbc.WithCache(context.Background(), fbc.NewCache())
	placed := map[string]*fbc.Placed{}
	results := map[string]*fbc.Result{}
	for _, r := range []string{"v4.17", "v4.18", "v4.19"} {
		p, err := fbc.LoadPlacedWhole(ctx, root(r))
		if err != nil {
			t.Fatal(err)
		}
		placed[r] = p
		res, err := fbc.Validate(ctx, root(r), fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		results[r] = res
		want, err := fbc.Validate(context.Background(), root(r), fbc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("%s: validated under the cache\n%+v\nwant, without it,\n%+v", r, res, want)
		}
	}
	if placed["v4.17"] != placed["v4.18"] {
		t.Error("two trees of the same files loaded twice")
	}
	// A tree served by another's load still has each file opened, once
	// for the load and once for the validation, as a load would: a
	// reader that counts what is opened (a pull request check's
	// limits.catalogBytes) counts every catalog's copy.
	for _, r := range []string{"v4.17", "v4.18", "v4.19"} {
		if n := opened.count(r + "/foo/catalog.yaml"); n < 2 {
			t.Errorf("%s/foo/catalog.yaml opened %d times, want at least 2", r, n)
		}
	}
	if placed["v4.19"] == placed["v4.17"] {
		t.Error("a tree that differs in a file took another tree's load")
	}
	if results["v4.19"].Valid() {
		t.Fatal("the catalog without a channel is valid; the test means nothing")
	}
	if !reflect.DeepEqual(results["v4.17"], results["v4.18"]) || reflect.DeepEqual(results["v4.17"], results["v4.19"]) {
		t.Error("the validations of the trees do not follow their files")
	}
	// The invalid tree validated again, then changed by its caller.
	again, err := fbc.Validate(ctx, root("v4.19"), fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, results["v4.19"]) {
		t.Errorf("the same tree validated again: %+v, want %+v", again, results["v4.19"])
	}
	again.Findings[0].Message = "changed by a caller"
	again.PackageNames = append(again.PackageNames[:0], "changed")
	for _, ps := range again.PackagePlaces {
		ps[0].File = "changed"
	}
	third, err := fbc.Validate(ctx, root("v4.19"), fbc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(third, results["v4.19"]) {
		t.Errorf("a caller's change to its validation reached the next caller: %+v", third)
	}
}

// openCounter counts the opens of each file; a Stat or a listing is not
// one.
type openCounter struct {
	fs.FS
	mu sync.Mutex
	n  map[string]int
}

func (o *openCounter) Open(name string) (fs.File, error) {
	o.mu.Lock()
	o.n[name]++
	o.mu.Unlock()
	return o.FS.Open(name)
}

func (o *openCounter) Stat(name string) (fs.FileInfo, error) { return fs.Stat(o.FS, name) }

func (o *openCounter) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(o.FS, name) }

func (o *openCounter) count(name string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[name]
}

// subCounter is the tree under dir of an openCounter, as a pull request
// check's limited tree is a catalog root's: it opens through the counter
// and states files without opening them (fs.Sub's tree would open them).
type subCounter struct {
	o   *openCounter
	dir string
}

func (s subCounter) Open(name string) (fs.File, error) { return s.o.Open(path.Join(s.dir, name)) }

func (s subCounter) Stat(name string) (fs.FileInfo, error) { return s.o.Stat(path.Join(s.dir, name)) }

func (s subCounter) ReadDir(name string) ([]fs.DirEntry, error) {
	return s.o.ReadDir(path.Join(s.dir, name))
}
