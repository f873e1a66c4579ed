package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"strconv"

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
	cat, err := load(ctx, fsys, Options{full: whole})
	if err != nil {
		return nil, err
	}
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
			c := f.config
			p.Config.Packages = append(p.Config.Packages, c.Packages...)
			p.Config.Channels = append(p.Config.Channels, c.Channels...)
			p.Config.Bundles = append(p.Config.Bundles, c.Bundles...)
			p.Config.Deprecations = append(p.Config.Deprecations, c.Deprecations...)
			p.Config.Others = append(p.Config.Others, c.Others...)
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
	return p, nil
}

func (at pos) place() Place { return Place{File: at.File, Line: at.Line} }

// EntryPlace is the place of the entry named name in the channel
// Config.Channels[i]: the line that names it, or the channel's first line
// when the entry cannot be found in its text.
func (p *Placed) EntryPlace(i int, name string) Place {
	at := p.Channels[i]
	s := p.spans[i]
	data, err := readFile(p.fsys, at.File)
	if err != nil || s.end > len(data) || s.end <= s.start {
		return at
	}
	blob := data[s.start:s.end]
	if k := entryLine(blob, name); k >= 0 {
		at.Line += bytes.Count(blob[:k], []byte("\n"))
	}
	return at
}

// entryLine finds the offset of the line where an entries item names
// name, in YAML ("- name: x", "name: 'x'") or JSON ("\"name\": \"x\"").
// The value must be the whole scalar, so that foo.v1.0 does not find
// foo.v1.0.0.
func entryLine(blob []byte, name string) int {
	quoted := strconv.Quote(name)
	for off := 0; off < len(blob); {
		end := bytes.IndexByte(blob[off:], '\n')
		if end < 0 {
			end = len(blob) - off
		}
		line := bytes.TrimSpace(blob[off : off+end])
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("-")))
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("{")))
		for _, key := range []string{"name:", `"name":`} {
			if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
				v := string(bytes.TrimRight(bytes.TrimSpace(rest), ",}"))
				v = string(bytes.TrimSpace([]byte(v)))
				if v == name || v == quoted || v == "'"+name+"'" {
					return off
				}
			}
		}
		off += end + 1
	}
	return -1
}
