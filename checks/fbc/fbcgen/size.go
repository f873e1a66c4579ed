package fbcgen

import "math"

// The size model: estimatePackage predicts the bytes writePackage writes
// for a planned package without generating any text. Its constants were
// fitted by least squares on generated packages (per-bundle documents of
// 100 packages); over a whole catalog it is within a few percent.

func b64len(n float64) float64 { return math.Ceil(n/3) * 4 }

func iconBytes(p *pkgPlan) float64 {
	if p.iconPNG {
		return float64(p.iconSize*(p.iconSize+1) + 866)
	}
	return 2900
}

func estimatePackage(p *pkgPlan, format string) float64 {
	json := format == "json"
	est := b64len(iconBytes(p)) + 1.05*float64(p.pkgDescBytes) + 300
	entries := 0
	for _, ch := range p.channels {
		entries += len(ch.members)
	}
	if json {
		est += 170 * float64(entries)
	} else {
		est += 97 * float64(entries)
	}
	for i := 0; i < p.nBundles; i++ {
		frac := 1.0
		if p.nBundles > 1 {
			frac = 0.75 + 0.25*float64(i)/float64(p.nBundles-1)
		}
		var ncrd, nver, ndv, gvk, crdJSON float64
		for _, c := range p.crds {
			if c.intro > i {
				continue
			}
			nv := float64(len(c.versions))
			ncrd++
			nver += nv
			ndv += nv * float64(c.nDesc)
			gvk += nv * float64(len(c.group)+len(c.kind))
			f := float64(max(500, c.schemaBytes-4300))
			crdJSON += 680 + 4809*nv + 1.008*nv*f*frac
		}
		nrel := float64(3 + p.operands)
		nreq, nreqpkg := float64(len(p.reqGVK)), float64(len(p.reqPkg))
		desc := float64(p.descBytes)
		if p.payload == payloadCSVMetadata {
			if json {
				est += 4584 + 595*ncrd + 2059*nver + 473*ndv + 558*nreq + 272*nreqpkg + 184*nrel + 0.962*desc
			} else {
				est += 3002 + 660*ncrd + 883*nver + 282*ndv + 258*nreq + 223*nreqpkg + 121*nrel + 0.981*desc
			}
			continue
		}
		csvJSON := 4678 + 870*ncrd + 722*nver + 181*ndv + 239*nreq + 1.316*iconBytes(p) + 299*nrel + 1.01*desc
		nobj := ncrd + 1 + float64(len(p.others))
		objs := crdJSON + csvJSON + 450*float64(len(p.others))
		fixed := 250 + 3*float64(len(p.name)) + 90*nver + gvk + 130*nrel + 110*nreq + 110*nreqpkg
		if json {
			fixed *= 1.6
		}
		est += fixed + b64len(objs) + 45*nobj
	}
	return est
}

// EstimatedBytes predicts the size of the catalog Write would produce for s.
func (s Spec) EstimatedBytes() int64 {
	s, err := s.normalize()
	if err != nil {
		return 0
	}
	var est float64
	for _, p := range plan(s) {
		est += estimatePackage(p, s.Format)
	}
	return int64(math.Round(est))
}

// SpecForSize returns a mixed-payload Spec (DefaultSeed, 3 channels per
// package) whose output is about targetBytes in the given format ("yaml" or
// "json"). It keeps 15 bundles per package, like merged-all (so 110 MB is
// about 100 packages x 15 bundles, and 27.5/55/110 MB differ only in the
// number of packages), and picks the package count from the size model.
// Targets too small for a few such packages get fewer bundles per package.
// Sizes do not depend on the seed, so the Spec may be reseeded.
func SpecForSize(targetBytes int64, format string) Spec {
	if format == "" {
		format = "yaml"
	}
	target := float64(max(targetBytes, 1))
	var best Spec
	bestErr := math.Inf(1)
	for _, bundles := range []int{15, 12, 10, 8, 6, 5, 4, 3, 2, 1} {
		s := Spec{BundlesPerPackage: bundles, ChannelsPerPackage: 3, Seed: DefaultSeed, Payload: PayloadMixed, Format: format}
		// Add packages until the estimate passes the target, then keep
		// whichever of the last two counts is closer.
		all := s
		all.Packages = int(target/float64(bundles*5000)) + 5
		var sum float64
		for n, p := range plan(all) {
			prev := sum
			sum += estimatePackage(p, format)
			if sum >= target {
				s.Packages = n + 1
				if n > 0 && target-prev < sum-target {
					s.Packages, sum = n, prev
				}
				break
			}
		}
		if s.Packages == 0 {
			continue
		}
		err := math.Abs(sum-target) / target
		if s.Packages >= 4 && err <= 0.05 {
			return s
		}
		if err < bestErr {
			best, bestErr = s, err
		}
	}
	return best
}
