package fbc

import (
	"context"
	"crypto/sha256"
	"reflect"
	"sync"
	"testing"
	"testing/fstest"
)

// TestGenerations: a value goes into the newer generation; once that is
// full the older is dropped, a value met in the older moves to the newer,
// and a value larger than a generation is not kept. What is held never
// passes two generations.
func TestGenerations(t *testing.T) {
	key := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	type step struct {
		op   string // "put" or "get"
		k    string
		size int
		hit  bool // for get
	}
	for _, tc := range []struct {
		name  string
		steps []step
		bytes int
	}{
		{"fits", []step{{"put", "a", 4, false}, {"put", "b", 4, false}, {"get", "a", 0, true}, {"get", "b", 0, true}}, 8},
		{"the older is dropped", []step{
			{"put", "a", 4, false}, {"put", "b", 4, false}, {"put", "c", 4, false}, // a, b older
			{"put", "d", 4, false}, // c, d newer
			{"put", "e", 4, false}, // c, d older; a, b dropped
			{"get", "a", 0, false}, {"get", "b", 0, false}, {"get", "c", 0, true},
		}, 12},
		{"met again, moved to the newer", []step{
			{"put", "a", 4, false}, {"put", "b", 4, false}, {"put", "c", 4, false}, // a, b older
			{"get", "a", 0, true},  // a newer, beside c
			{"put", "d", 4, false}, // c, a older; b dropped
			{"get", "b", 0, false}, {"get", "a", 0, true}, {"get", "c", 0, true},
		}, 12},
		{"too large to keep", []step{{"put", "a", 4, false}, {"put", "big", 11, false}, {"get", "big", 0, false}, {"get", "a", 0, true}}, 4},
		{"put twice", []step{{"put", "a", 4, false}, {"put", "a", 4, false}}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &generations[string]{max: 10}
			for i, s := range tc.steps {
				switch s.op {
				case "put":
					g.put(key(s.k), s.k, s.size)
				case "get":
					v, ok := g.get(key(s.k))
					if ok != s.hit || ok && v != s.k {
						t.Fatalf("step %d: get %s = %q, %v; want a hit: %v", i, s.k, v, ok, s.hit)
					}
				}
				if n := g.bytes(); n > 2*g.max {
					t.Fatalf("step %d: holds %d bytes, more than two generations of %d", i, n, g.max)
				}
			}
			if n := g.bytes(); n != tc.bytes {
				t.Errorf("holds %d bytes, want %d", n, tc.bytes)
			}
		})
	}
}

// keptPass1 and keptPass2 are one package's file before and after a change
// that adds a bundle, under other paths: pass 2 meets every document of
// pass 1 again, most of them further down its file, beside one it has not
// met. The bundle without a package is an error of both passes.
const keptPass1 = keptPackage + keptRest

const keptPass2 = keptPackage + keptNew + keptRest

const keptPackage = `---
schema: olm.package
name: kept
defaultChannel: stable
`

const keptNew = `---
schema: olm.bundle
name: kept.v1.1.0
package: kept
image: quay.io/example/kept:v1.1.0
properties:
  - type: olm.package
    value:
      packageName: kept
      version: 1.1.0
`

const keptRest = `---
schema: olm.channel
package: kept
name: stable
entries:
  - name: kept.v1.0.0
---
schema: olm.bundle
name: kept.v1.0.0
package: kept
image: quay.io/example/kept:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: kept
      version: 1.0.0
---
schema: olm.bundle
name: kept.v0.9.0
image: quay.io/example/kept:v0.9.0
`

// TestKeptDocsAcrossPasses: a pass types only the documents no pass before
// it typed, and what it takes from keptDocs judges as its own typing
// would: the same blobs, and findings at the positions of its own file.
func TestKeptDocsAcrossPasses(t *testing.T) {
	saved := keptDocs
	keptDocs = &generations[*fileResult]{max: KeptDocsBytes / 2}
	defer func() { keptDocs = saved }()

	pass := func(name, data string) (*Result, []Blob) {
		t.Helper()
		c := NewCache()
		ctx := WithCache(context.Background(), c)
		fsys := fstest.MapFS{name: {Data: []byte(data)}}
		got, err := Validate(ctx, fsys, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Validate(context.Background(), fsys, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Findings, want.Findings) {
			t.Errorf("%s: a pass that took kept documents found\n%+v\nwant, as a pass without a cache,\n%+v", name, got.Findings, want.Findings)
		}
		if len(want.Findings) == 0 {
			t.Errorf("%s: no findings; the bundle without a package is an error", name)
		}
		blobs := c.Blobs([]byte(data))
		if want := Blobs([]byte(data)); !reflect.DeepEqual(blobs, want) {
			t.Errorf("%s: blobs from kept documents\n%+v\nwant\n%+v", name, blobs, want)
		}
		return got, blobs
	}
	pass("v4.19/kept/catalog.yaml", keptPass1)
	if keptDocs.hits != 0 || keptDocs.misses != 4 {
		t.Errorf("first pass: %d documents met again, %d typed; want 0 and 4", keptDocs.hits, keptDocs.misses)
	}
	pass("v4.20/kept/catalog.yaml", keptPass2)
	if keptDocs.hits != 4 || keptDocs.misses != 5 {
		t.Errorf("second pass: %d documents met again, %d typed in all; want 4 and 5", keptDocs.hits, keptDocs.misses)
	}
}

// TestKeptDocsConcurrentPasses: passes that run at once share what they
// type, read only (run with -race).
func TestKeptDocsConcurrentPasses(t *testing.T) {
	saved := keptDocs
	keptDocs = &generations[*fileResult]{max: KeptDocsBytes / 2}
	defer func() { keptDocs = saved }()
	fsys := fstest.MapFS{"kept/catalog.yaml": {Data: []byte(keptPass2)}}
	want, err := Validate(context.Background(), fsys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]*Result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := WithCache(context.Background(), NewCache())
			if _, err := LoadPlacedWhole(ctx, fsys); err != nil {
				t.Error(err)
			}
			r, err := Validate(ctx, fsys, Options{})
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r != nil && !reflect.DeepEqual(r.Findings, want.Findings) {
			t.Errorf("pass %d found %+v, want %+v", i, r.Findings, want.Findings)
		}
	}
}
