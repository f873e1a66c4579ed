package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"strconv"
	"sync"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// Placed is a catalog loaded for its upgrade graphs: the packages,
// channels, bundles and deprecations that loaded, each with the place of
// its blob. Bundles keep their name, package, image, and olm.package and
// olm.maxOpenShiftVersion properties only, which is what a graph and the
// rules that follow clusters across versions need; reading a large catalog
// this way costs what validating it costs.
//
// Config is read only: under a Cache (WithCache) the blobs of one file
// are decoded once and shared by every load that reads that file, as the
// same package in a dozen catalogs of a repository is.
type Placed struct {
	Config declcfg.DeclarativeConfig
	// Packages, Channels, Bundles and Deprecations place the blobs of the
	// lists of Config of the same names, index by index.
	Packages, Channels, Bundles, Deprecations []Place
	// Unread lists the files, or the blobs, that did not load; their
	// blobs are missing from Config. The fbc check reports why.
	Unread []Place

	fsys  fs.FS
	spans []span // of Channels, for EntryPlace

	// entryLines are the lines of each channel's entries, by channel
	// index, as EntryPlace found them: a package of hundreds of entries
	// asked for each would scan its channel once per entry.
	mu         sync.Mutex
	entryLines map[int]map[string]int
}

type span struct{ start, end int }

// LoadPlaced loads the catalog rooted at fsys as Validate does, keeping
// every blob that loads: a file that does not load leaves its blobs out and
// is listed in Unread rather than failing the whole. The error is for a
// cancelled context.
func LoadPlaced(ctx context.Context, fsys fs.FS) (*Placed, error) {
	return loadPlaced(ctx, fsys, false)
}

// LoadPlacedWhole is LoadPlaced with every blob kept whole: all of a
// bundle's properties and related images, a package's icon and
// description, the blobs of other schemas. Rules that read what a bundle
// declares (its CSV, its dependencies) need it; it takes the loader's
// exact path, so it costs more than LoadPlaced.
func LoadPlacedWhole(ctx context.Context, fsys fs.FS) (*Placed, error) {
	return loadPlaced(ctx, fsys, true)
}

func loadPlaced(ctx context.Context, fsys fs.FS, whole bool) (*Placed, error) {
	paths, walkErrs := listFiles(fsys)
	opts := Options{full: whole}
	if c := CacheFrom(ctx); c != nil {
		// The same tree under another catalog root is the same Placed,
		// shared read only as the files of the Cache are.
		if k, ok := contentKey(fsys, paths, walkErrs, opts); ok {
			what := byte('p')
			if whole {
				what = 'w'
			}
			v, err := c.tree(treeKey{sum: k, what: what}, func() (any, bool, error) {
				cat, err := loadListed(ctx, fsys, paths, walkErrs, opts)
				if err != nil {
					return nil, false, err
				}
				return placedOf(fsys, cat, whole), cat.read(), nil
			})
			if err != nil {
				return nil, err
			}
			return v.(*Placed), nil
		}
	}
	return loadPlacedListed(ctx, fsys, paths, walkErrs, opts)
}

// loadPlacedListed is loadPlaced of the files paths that listFiles listed
// in fsys.
func loadPlacedListed(ctx context.Context, fsys fs.FS, paths []string, walkErrs []loadError, opts Options) (*Placed, error) {
	cat, err := loadListed(ctx, fsys, paths, walkErrs, opts)
	if err != nil {
		return nil, err
	}
	return placedOf(fsys, cat, opts.full), nil
}

// placedOf is the Placed of cat, loaded from fsys, whole or not.
func placedOf(fsys fs.FS, cat *catalog, whole bool) *Placed {
	p := &Placed{fsys: fsys}
	for _, e := range cat.walkErrs {
		p.Unread = append(p.Unread, Place{File: e.File, Line: e.Line})
	}
	for _, f := range cat.files {
		for _, e := range f.errs {
			p.Unread = append(p.Unread, Place{File: e.File, Line: e.Line})
		}
		if whole {
			// The loader adds a record and its whole blob together, so
			// the lists match index by index.
			p.Config.Append(f.config)
			for _, r := range f.packages {
				p.Packages = append(p.Packages, r.place())
			}
			for _, r := range f.channels {
				p.Channels = append(p.Channels, r.place())
				p.spans = append(p.spans, span{r.Start, r.End})
			}
			for _, r := range f.bundles {
				p.Bundles = append(p.Bundles, r.place())
			}
			for _, r := range f.deps {
				p.Deprecations = append(p.Deprecations, r.place())
			}
			continue
		}
		for _, r := range f.packages {
			p.Config.Packages = append(p.Config.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: r.name, DefaultChannel: r.defaultChannel})
			p.Packages = append(p.Packages, r.place())
		}
		for _, r := range f.channels {
			p.Config.Channels = append(p.Config.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Name: r.name, Package: r.pkg, Entries: r.entries})
			p.Channels = append(p.Channels, r.place())
			p.spans = append(p.spans, span{r.Start, r.End})
		}
		for _, r := range f.bundles {
			b := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: r.name, Package: r.pkg, Image: r.image}
			for _, pk := range r.packages {
				v, _ := json.Marshal(pk)
				b.Properties = append(b.Properties, property.Property{Type: property.TypePackage, Value: v})
			}
			if r.maxOCP != "" {
				v, _ := json.Marshal(r.maxOCP)
				b.Properties = append(b.Properties, property.Property{Type: property.TypeMaxOpenShiftVersion, Value: v})
			}
			p.Config.Bundles = append(p.Config.Bundles, b)
			p.Bundles = append(p.Bundles, r.place())
		}
		for _, r := range f.deps {
			p.Config.Deprecations = append(p.Config.Deprecations, declcfg.Deprecation{Schema: declcfg.SchemaDeprecation, Package: r.pkg, Entries: r.entries})
			p.Deprecations = append(p.Deprecations, r.place())
		}
	}
	return p
}

func (at pos) place() Place { return Place{File: at.File, Line: at.Line} }

// EntryPlace is the place of the entry named name in the channel
// Config.Channels[i]: the line that names it, or the channel's first line
// when the entry cannot be found in its text.
func (p *Placed) EntryPlace(i int, name string) Place {
	at := p.Channels[i]
	if d, ok := p.entryLinesOf(i)[name]; ok {
		at.Line += d
	}
	return at
}

// entryLinesOf maps each entry name of channel i to its line, counted
// from the channel's first line; the first line that names an entry
// wins, as entryLine finds it.
func (p *Placed) entryLinesOf(i int) map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if lines, ok := p.entryLines[i]; ok {
		return lines
	}
	lines := map[string]int{}
	s := p.spans[i]
	data, err := readFile(p.fsys, p.Channels[i].File)
	if err == nil && s.end <= len(data) && s.end > s.start {
		blob := data[s.start:s.end]
		for off, line := 0, 0; off < len(blob); line++ {
			end := bytes.IndexByte(blob[off:], '\n')
			if end < 0 {
				end = len(blob) - off
			}
			for _, name := range entryNames(blob[off : off+end]) {
				if _, seen := lines[name]; !seen {
					lines[name] = line
				}
			}
			off += end + 1
		}
	}
	if p.entryLines == nil {
		p.entryLines = map[int]map[string]int{}
	}
	p.entryLines[i] = lines
	return lines
}

// entryNames are the names one line of an entries list can name, as
// entryLine matches them: the value after name: as it is, unquoted, or
// without single quotes.
func entryNames(line []byte) []string {
	line = bytes.TrimSpace(line)
	line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("-")))
	line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("{")))
	var out []string
	for _, key := range []string{"name:", `"name":`} {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		v := string(bytes.TrimSpace(bytes.TrimRight(bytes.TrimSpace(rest), ",}")))
		out = append(out, v)
		if u, err := strconv.Unquote(v); err == nil && strconv.Quote(u) == v {
			out = append(out, u)
		}
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			out = append(out, v[1:len(v)-1])
		}
	}
	return out
}
