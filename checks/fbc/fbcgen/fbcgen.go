// Package fbcgen writes synthetic, valid OLM File-Based Catalogs for
// benchmarks and tests.
//
// The output is modelled on the community-operators and certified-operators
// catalogs (see spec §14): one package per directory
// (<dir>/<pkg>/catalog.yaml), each file holding an olm.package blob (with a
// base64 icon and a description), its olm.channel blobs (replaces chains,
// skips and skipRange, always a valid graph: one head, no cycles, nothing
// stranded) and its olm.bundle blobs. Bundles carry olm.package, several
// olm.gvk, sometimes olm.gvk.required and olm.package.required, relatedImages
// pinned by sha256 digest, and either olm.bundle.object properties (base64
// of the JSON CSV, CRDs with large openAPIV3Schemas, and RBAC/Service
// manifests) or one olm.csv.metadata property.
//
// YAML output is what `opm render -o yaml` writes: each document is the
// JSON blob converted with sigs.k8s.io/yaml.JSONToYAML and preceded by
// "---". JSON output is what `opm render -o json` writes: a stream of
// objects indented by four spaces.
//
// Output is deterministic: the same Spec gives byte-identical files.
package fbcgen

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
)

// Version changes whenever the output for a given Spec changes; caches of
// generated catalogs should include it in their key.
const Version = "1"

// DefaultSeed is the seed SpecForSize uses.
const DefaultSeed = 1

// Payload kinds.
const (
	PayloadBundleObject = "bundle-object"
	PayloadCSVMetadata  = "csv-metadata"
	PayloadMixed        = "mixed"
)

// Spec describes a catalog to generate.
type Spec struct {
	Packages           int
	BundlesPerPackage  int
	ChannelsPerPackage int
	Seed               uint64
	// Payload is "bundle-object", "csv-metadata" or "mixed" (the default:
	// 2 packages in 5 use olm.bundle.object, the rest olm.csv.metadata).
	Payload string
	// Format is "yaml" (the default; files are catalog.yaml) or "json"
	// (files are catalog.json).
	Format string
}

// Stats counts what Write produced.
type Stats struct {
	Files             int   `json:"files"`
	Bytes             int64 `json:"bytes"`
	Packages          int   `json:"packages"`
	Channels          int   `json:"channels"`
	Entries           int   `json:"entries"`
	Bundles           int   `json:"bundles"`
	GVK               int   `json:"gvk"`
	GVKRequired       int   `json:"gvkRequired"`
	PackageRequired   int   `json:"packageRequired"`
	BundleObjects     int   `json:"bundleObjects"`
	BundleObjectBytes int64 `json:"bundleObjectBytes"` // decoded
	CSVMetadata       int   `json:"csvMetadata"`
	RelatedImages     int   `json:"relatedImages"`
}

func (s Stats) String() string {
	return fmt.Sprintf("%d files, %.1f MB, %d packages, %d channels (%d entries), %d bundles; properties: %d olm.gvk, %d olm.gvk.required, %d olm.package.required, %d olm.bundle.object (%.1f MB decoded), %d olm.csv.metadata; %d relatedImages",
		s.Files, float64(s.Bytes)/1e6, s.Packages, s.Channels, s.Entries, s.Bundles,
		s.GVK, s.GVKRequired, s.PackageRequired, s.BundleObjects, float64(s.BundleObjectBytes)/1e6, s.CSVMetadata, s.RelatedImages)
}

func (s *Stats) add(o Stats) {
	s.Files += o.Files
	s.Bytes += o.Bytes
	s.Packages += o.Packages
	s.Channels += o.Channels
	s.Entries += o.Entries
	s.Bundles += o.Bundles
	s.GVK += o.GVK
	s.GVKRequired += o.GVKRequired
	s.PackageRequired += o.PackageRequired
	s.BundleObjects += o.BundleObjects
	s.BundleObjectBytes += o.BundleObjectBytes
	s.CSVMetadata += o.CSVMetadata
	s.RelatedImages += o.RelatedImages
}

func (s Spec) normalize() (Spec, error) {
	if s.Payload == "" {
		s.Payload = PayloadMixed
	}
	if s.Format == "" {
		s.Format = "yaml"
	}
	switch {
	case s.Packages < 1:
		return s, errors.New("fbcgen: Packages must be at least 1")
	case s.BundlesPerPackage < 1:
		return s, errors.New("fbcgen: BundlesPerPackage must be at least 1")
	case s.ChannelsPerPackage < 1:
		return s, errors.New("fbcgen: ChannelsPerPackage must be at least 1")
	case s.Payload != PayloadBundleObject && s.Payload != PayloadCSVMetadata && s.Payload != PayloadMixed:
		return s, fmt.Errorf("fbcgen: unknown Payload %q", s.Payload)
	case s.Format != "yaml" && s.Format != "json":
		return s, fmt.Errorf("fbcgen: unknown Format %q", s.Format)
	}
	return s, nil
}

// FileName is the name of each package's file for a format.
func FileName(format string) string {
	if format == "json" {
		return "catalog.json"
	}
	return "catalog.yaml"
}

// Write generates the catalog described by s into dir (created if needed),
// one <dir>/<package>/catalog.yaml (or catalog.json) per package. Packages
// are generated in parallel; the output does not depend on scheduling.
func Write(dir string, s Spec) (Stats, error) {
	s, err := s.normalize()
	if err != nil {
		return Stats{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Stats{}, err
	}
	plans := plan(s)
	stats := make([]Stats, len(plans))
	errs := make([]error, len(plans))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(plans)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				stats[i], errs[i] = writePackage(dir, s, plans[i])
			}
		}()
	}
	for i := range plans {
		next <- i
	}
	close(next)
	wg.Wait()
	var total Stats
	for i := range plans {
		if errs[i] != nil {
			return total, errs[i]
		}
		total.add(stats[i])
	}
	return total, nil
}

func writePackage(dir string, s Spec, p *pkgPlan) (Stats, error) {
	pdir := filepath.Join(dir, p.name)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		return Stats{}, err
	}
	f, err := os.Create(filepath.Join(pdir, FileName(s.Format)))
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	e := &emitter{w: bw, json: s.Format == "json"}
	st := genPackage(e, p, s.Seed)
	if e.err == nil {
		e.err = bw.Flush()
	}
	if err := f.Close(); e.err == nil {
		e.err = err
	}
	st.Files = 1
	st.Bytes = e.n
	return st, e.err
}

// genPackage emits one package: the olm.package blob, channels sorted by
// name, then bundles sorted by name (the order opm render uses).
func genPackage(e *emitter, p *pkgPlan, seed uint64) Stats {
	g := newPkgGen(p, seed)
	r := g.r
	st := Stats{Packages: 1}

	pd := packageDoc{Schema: "olm.package", Name: p.name, DefaultChannel: p.defChannel,
		Icon: &iconDoc{Data: e.b64(g.iconData), MediaType: g.iconType}}
	if p.pkgDescBytes > 0 {
		pd.Description = markdown(r, p.displayName, nil, p.pkgDescBytes)
	}
	e.emit(pd)

	chs := append([]channelPlan(nil), p.channels...)
	sort.Slice(chs, func(i, j int) bool { return chs[i].name < chs[j].name })
	for _, ch := range chs {
		cd := channelDoc{Schema: "olm.channel", Name: ch.name, Package: p.name, Entries: entries(g, ch.members)}
		e.emit(cd)
		st.Channels++
		st.Entries += len(cd.Entries)
	}

	for _, i := range bundleOrder(p) {
		b := g.newBundle(i)
		bd := bundleDoc{Schema: "olm.bundle", Name: b.name, Package: p.name, Image: b.image, RelatedImages: b.related}
		for _, k := range b.crds {
			c := p.crds[k]
			for _, v := range c.versions {
				bd.Properties = append(bd.Properties, property{"olm.gvk", obj{"group": c.group, "kind": c.kind, "version": v}})
				st.GVK++
			}
		}
		for _, x := range p.reqGVK {
			bd.Properties = append(bd.Properties, property{"olm.gvk.required", obj{"group": x.group, "kind": x.kind, "version": x.version}})
			st.GVKRequired++
		}
		bd.Properties = append(bd.Properties, property{"olm.package", obj{"packageName": p.name, "version": b.version}})
		for k, name := range p.reqPkg {
			bd.Properties = append(bd.Properties, property{"olm.package.required", obj{"packageName": name, "versionRange": p.reqRange[k]}})
			st.PackageRequired++
		}
		if p.payload == payloadBundleObject {
			objs := make([]obj, 0, len(b.crds)+1+len(p.others))
			for _, k := range b.crds {
				objs = append(objs, g.crd(b, k))
			}
			objs = append(objs, g.csv(b))
			for _, k := range p.others {
				objs = append(objs, g.other(k))
			}
			for _, o := range objs {
				raw := mustJSON(o)
				bd.Properties = append(bd.Properties, property{"olm.bundle.object", obj{"data": e.b64(raw)}})
				st.BundleObjects++
				st.BundleObjectBytes += int64(len(raw))
			}
		} else {
			bd.Properties = append(bd.Properties, property{"olm.csv.metadata", g.csvMetadata(b)})
			st.CSVMetadata++
		}
		st.RelatedImages += len(b.related)
		e.emit(bd)
		st.Bundles++
	}
	return st
}

// bundleOrder lists bundle indexes sorted by bundle name.
func bundleOrder(p *pkgPlan) []int {
	order := make([]int, p.nBundles)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return p.bundleName(order[a]) < p.bundleName(order[b]) })
	return order
}

// entries builds a channel's upgrade graph over members (ascending
// versions). Each entry replaces the previous one; now and then an entry
// replaces the one before that and skips the previous one (a z-stream
// respin, never twice in a row, so the replaces chain from the head never
// stops early and nothing is stranded). Some entries also skip a bundle
// that does not exist, and some packages set skipRange. The first entry
// replaces the bundle just before it in the package if there is one, which
// is valid even though that bundle is not in the channel.
func entries(g *pkgGen, members []int) []entryDoc {
	p, r := g.p, g.r
	out := make([]entryDoc, 0, len(members))
	prevRespin := false
	for k, bi := range members {
		e := entryDoc{Name: p.bundleName(bi)}
		respin := false
		switch {
		case k == 0:
			if bi > 0 {
				e.Replaces = p.bundleName(bi - 1)
			}
		case k >= 2 && !prevRespin && r.IntN(100) < 15:
			e.Replaces = p.bundleName(members[k-2])
			e.Skips = []string{p.bundleName(members[k-1])}
			respin = true
		default:
			e.Replaces = p.bundleName(members[k-1])
		}
		prevRespin = respin
		if r.IntN(12) == 0 {
			e.Skips = append(e.Skips, p.name+".v"+p.versions[bi]+"-hotfix")
		}
		if p.skipRange && k > 0 {
			e.SkipRange = ">=" + p.versions[members[0]] + " <" + p.versions[bi]
		}
		out = append(out, e)
	}
	return out
}
