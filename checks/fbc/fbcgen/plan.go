package fbcgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// shapeSeed seeds the choices that decide sizes and counts (payload kind per
// package, number and size of CRDs, description lengths). It does not depend
// on Spec.Seed, so the catalog size for given counts is the same for every
// seed and SpecForSize holds whatever seed is used; the seed changes names,
// text, digests and the upgrade graphs.
const shapeSeed = 0x6662636765e5a9e1

type payloadKind int

const (
	payloadBundleObject payloadKind = iota
	payloadCSVMetadata
)

type gvk struct{ group, kind, version string }

type crdPlan struct {
	group, kind, plural, singular string
	shortName                     string
	versions                      []string
	schemaBytes                   int // JSON bytes of one version's schema in the newest bundle
	nFields                       int // spec fields named in csv metadata (csv-metadata packages)
	nDesc                         int // spec descriptors per CRD version
	intro                         int // index of the first bundle that owns this CRD
}

type channelPlan struct {
	name    string
	members []int // bundle indexes, ascending version order
}

type pkgPlan struct {
	idx          int
	name         string
	displayName  string
	provider     string
	payload      payloadKind
	crds         []crdPlan
	descBytes    int // length of the CSV's markdown description
	pkgDescBytes int
	iconPNG      bool
	iconSize     int
	others       []string // extra manifest kinds (bundle-object only)
	operands     int      // extra related images
	reqGVK       []gvk
	reqPkg       []string // required package names
	reqRange     []string
	versions     []string
	channels     []channelPlan
	defChannel   string
	skipRange    bool
	nBundles     int
}

func (p *pkgPlan) bundleName(i int) string { return p.name + ".v" + p.versions[i] }

// lognormal returns exp(N(ln(median), sigma)) clipped to [lo, hi].
func lognormal(r *rand.Rand, median, sigma float64, lo, hi int) int {
	v := int(median * math.Exp(r.NormFloat64()*sigma))
	return max(lo, min(hi, v))
}

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// plan decides everything about each package except its text and manifests.
func plan(s Spec) []*pkgPlan {
	pkgs := make([]*pkgPlan, s.Packages)
	used := map[string]bool{}
	for i := range pkgs {
		shape := newRand(shapeSeed, uint64(i))
		content := newRand(s.Seed, uint64(i)<<1|1)
		p := &pkgPlan{idx: i, nBundles: s.BundlesPerPackage}
		pkgs[i] = p

		switch s.Payload {
		case PayloadBundleObject:
			p.payload = payloadBundleObject
		case PayloadCSVMetadata:
			p.payload = payloadCSVMetadata
		default:
			// 2 packages in 5 carry olm.bundle.object, like merged-all
			// (about 40% of its bundles, and most of its bytes).
			if i%5 == 1 || i%5 == 3 {
				p.payload = payloadBundleObject
			} else {
				p.payload = payloadCSVMetadata
			}
		}

		// Name: a DNS-1123 label, unique in the catalog.
		for {
			adj, noun := pick(content, adjWords), pick(content, nounWords)
			name := adj + "-" + noun + "-operator"
			if used[name] {
				name = fmt.Sprintf("%s-%s-%d-operator", adj, noun, i)
			}
			if !used[name] {
				used[name] = true
				p.name = name
				p.displayName = capitalize(adj) + " " + capitalize(noun) + " Operator"
				p.provider = capitalize(pick(content, adjWords)) + " " + capitalize(pick(content, nounWords)) + " Inc."
				break
			}
		}
		group := strings.TrimSuffix(p.name, "-operator")
		group = strings.ReplaceAll(group, "-", "") + "." + pick(content, []string{"io", "com", "dev", "org", "example.com"})

		// CRDs.
		var nCRD int
		if p.payload == payloadBundleObject {
			nCRD = pick(shape, []int{1, 1, 2, 2, 2, 3, 3, 4, 5, 6})
		} else {
			nCRD = pick(shape, []int{1, 1, 2, 3, 4, 5, 6, 8, 10, 14})
		}
		kinds := map[string]bool{}
		for k := 0; k < nCRD; k++ {
			var c crdPlan
			for {
				kind := capitalize(pick(content, fieldWords)) + capitalize(pick(content, nounWords))
				if !kinds[kind] {
					kinds[kind] = true
					c.kind = kind
					break
				}
			}
			c.group = group
			c.singular = strings.ToLower(c.kind)
			c.plural = c.singular + "s"
			if content.IntN(2) == 0 {
				c.shortName = c.singular[:min(4, len(c.singular))]
			}
			nv := pick(shape, []int{1, 1, 1, 1, 1, 1, 2, 2, 2, 3})
			c.versions = []string{"v1alpha1", "v1beta1", "v1", "v2"}[:nv]
			c.schemaBytes = lognormal(shape, 12500, 0.9, 3000, 300000)
			c.nFields = 3 + shape.IntN(10)
			c.nDesc = min(c.nFields, 1+shape.IntN(6))
			if k > 0 && shape.IntN(2) == 0 {
				c.intro = shape.IntN(max(1, s.BundlesPerPackage/2))
			}
			p.crds = append(p.crds, c)
		}
		if p.payload == payloadBundleObject {
			p.descBytes = lognormal(shape, 6000, 0.7, 1000, 100000)
			for _, k := range []string{"ClusterRole", "Service", "ConfigMap", "ServiceAccount", "RoleBinding", "ClusterRoleBinding"} {
				if shape.IntN(3) == 0 {
					p.others = append(p.others, k)
				}
			}
		} else {
			p.descBytes = lognormal(shape, 2000, 0.8, 500, 200000)
		}
		p.pkgDescBytes = pick(shape, []int{0, 0, 500, 1500, 3000, 6000})
		p.iconPNG = shape.IntN(4) != 0
		p.iconSize = pick(shape, []int{32, 48, 64, 64, 96})
		p.operands = pick(shape, []int{0, 0, 1, 2, 3, 5})
		p.skipRange = shape.IntN(3) == 0

		p.versions = versions(content, s.BundlesPerPackage)
		p.channels, p.defChannel = channels(content, p, s.ChannelsPerPackage)
	}
	// Cross-package requirements, resolved against planned packages.
	for i, p := range pkgs {
		shape := newRand(shapeSeed, uint64(i)|1<<40)
		if len(pkgs) > 1 && shape.IntN(10) < 3 {
			for k := 0; k < 1+shape.IntN(2); k++ {
				o := pkgs[(i+1+shape.IntN(len(pkgs)-1))%len(pkgs)]
				c := o.crds[shape.IntN(len(o.crds))]
				p.reqGVK = append(p.reqGVK, gvk{c.group, c.kind, c.versions[len(c.versions)-1]})
			}
		}
		if len(pkgs) > 1 && shape.IntN(10) < 2 {
			o := pkgs[(i+1+shape.IntN(len(pkgs)-1))%len(pkgs)]
			p.reqPkg = append(p.reqPkg, o.name)
			p.reqRange = append(p.reqRange, ">="+o.versions[0])
		}
	}
	return pkgs
}

// versions returns n ascending, unique semver strings, the last one a
// release (not a pre-release).
func versions(r *rand.Rand, n int) []string {
	major, minor, patch := r.IntN(2), r.IntN(6), 0
	out := make([]string, 0, n)
	for len(out) < n {
		out = append(out, fmt.Sprintf("%d.%d.%d", major, minor, patch))
		if len(out) == n {
			break
		}
		switch x := r.IntN(100); {
		case x < 55:
			patch++
		case x < 85:
			minor, patch = minor+1, 0
		case x < 90:
			major, minor, patch = major+1, 0, 0
		default:
			// A release candidate of the next minor, then the release.
			minor, patch = minor+1, 0
			if len(out) < n-1 {
				out = append(out, fmt.Sprintf("%d.%d.%d-rc.%d", major, minor, patch, 1+r.IntN(3)))
			}
		}
	}
	return out
}

var channelStyles = [][]string{
	{"alpha", "stable", "beta", "fast", "candidate", "preview", "tech-preview", "latest"},
	{"candidate", "stable", "fast", "eus", "preview", "latest", "beta", "alpha"},
	{"develop", "stable", "release", "beta", "nightly", "lts", "preview", "alpha"},
}

// channels builds the channel memberships: the first channel holds every
// bundle (so none is left out of all channels), the others hold a suffix of
// the versions, "stable" without pre-releases.
func channels(r *rand.Rand, p *pkgPlan, n int) ([]channelPlan, string) {
	style := channelStyles[r.IntN(len(channelStyles))]
	nb := len(p.versions)
	all := make([]int, nb)
	for i := range all {
		all[i] = i
	}
	chs := []channelPlan{{name: style[0], members: all}}
	def := style[0]
	for j := 1; j < n; j++ {
		name := fmt.Sprintf("%s-v%d", style[(j-1)%(len(style)-1)+1], (j-1)/(len(style)-1)+1)
		if j < len(style) {
			name = style[j]
		}
		start := r.IntN(max(1, nb*7/10))
		var m []int
		for i := start; i < nb; i++ {
			if name == "stable" && strings.Contains(p.versions[i], "-") {
				continue
			}
			m = append(m, i)
		}
		chs = append(chs, channelPlan{name: name, members: m})
		if name == "stable" {
			def = name
		}
	}
	return chs, def
}
