package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/reference"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/truth"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// Truth checks that each bundle blob the change adds or changes tells the
// truth about its image: the image is rendered as opm render renders it
// (Input.Renderer, registry images only, under the egress rule) and
// compared with the blob (package checks/truth). It runs where images are
// verified (Input.ImageOptions), under images.truthfulness: error (the
// default) or warning.
//
// The pulls keep to the pass's limits: each image is charged to
// limits.images with the images, references and templates checks' (an
// image they contact too costs nothing more), each has
// limits.referenceTimeout, unpacks at most limits.catalogBytes, and a
// registry that ran out of time is not asked again. A bundle image pinned
// by digest is rendered once per process (the renderer's cache, which the
// templates and references checks share): the next pull request that names
// it costs no pull.
//
// What the check cannot judge is never taken for truthful. An image whose
// registry did not answer is waited for (pending); one the registry says
// is not there or refuses, or the policy does not let be contacted, is the
// images check's finding and leaves the bundle not judged (neutral); an
// image that was pulled and does not render as a bundle is a BT9 warning
// on the blob, not judged either.
type Truth struct{}

// TruthName is the name of the bundle truthfulness check.
const TruthName = "truthfulness"

func (Truth) Name() string { return TruthName }

// maxTruthRenders bounds the bundle images rendered at once.
const maxTruthRenders = 4

// truthWhat is what happened to one bundle the check set out to judge.
type truthWhat int

const (
	truthMatch     truthWhat = iota // rendered, and the blob matches
	truthDiffers                    // rendered, and the blob differs
	truthWaiting                    // its registry could not be asked
	truthNotJudged                  // the image could not be compared (see why)
	truthOverLimit                  // left out: the pass reached limits.images
)

type truthOutcome struct {
	what     truthWhat
	why      string
	findings []checks.Finding
	wait     *checks.Wait
}

// placedBundle is a head bundle to judge and where its blob is.
type placedBundle struct {
	bundle declcfg.Bundle
	file   string
	line   int
}

func (Truth) Run(ctx context.Context, in *Input) checks.Result {
	todo, err := bundlesToJudge(ctx, in)
	if r, ok := unreadable(err); ok {
		return r
	}
	if err != nil {
		return checks.Result{Conclusion: checks.Failure, Summary: fmt.Sprintf("Could not read the touched packages: %v", err)}
	}
	if len(todo) == 0 {
		return checks.Result{Conclusion: checks.Success, Summary: "The change adds or changes no bundle blob."}
	}
	if in.Renderer == nil {
		return checks.Result{Conclusion: checks.Neutral, Summary: fmt.Sprintf("Rendering is off: the %s the change adds or changes %s not compared with their images.",
			checks.Count(len(todo), "bundle", "bundles"), map[bool]string{true: "was", false: "were"}[len(todo) == 1])}
	}
	sev := checks.SeverityError
	if in.Policy.Images.Truthfulness == images.TruthWarning {
		sev = checks.SeverityWarning
	}
	outcomes := judgeAll(ctx, in, todo, sev)

	res := checks.Result{}
	counts := map[truthWhat]int{}
	var b strings.Builder
	fmt.Fprintf(&b, "Compared the %s the change adds or changes with what their images render to (`BT` rules):\n", checks.Count(len(todo), "bundle", "bundles"))
	for i, o := range outcomes {
		counts[o.what]++
		res.Findings = append(res.Findings, o.findings...)
		if o.wait != nil {
			res.Waits = checks.AddWait(res.Waits, *o.wait)
		}
		if i < maxListed {
			fmt.Fprintf(&b, "- %s in %s: %s\n", checks.Code(todo[i].bundle.Name), checks.Code(todo[i].file), truthWords(o))
		}
	}
	if len(outcomes) > maxListed {
		fmt.Fprintf(&b, "- and %d more\n", len(outcomes)-maxListed)
	}
	var tally []string
	for _, w := range []truthWhat{truthMatch, truthDiffers, truthWaiting, truthNotJudged, truthOverLimit} {
		if n := counts[w]; n > 0 {
			tally = append(tally, fmt.Sprintf("%d %s", n, truthTally[w]))
		}
	}
	fmt.Fprintf(&b, "\n%s.\n", strings.Join(tally, ", "))
	res.Conclusion = checks.ConclusionOf(res.Findings)
	switch {
	case res.Conclusion == checks.Failure:
		res.Waits = nil
	case len(res.Waits) > 0:
		// A registry that could not be asked has not cleared the blob.
		res.Conclusion = checks.Pending
		fmt.Fprintf(&b, "Could not judge every bundle yet: %s.\n", checks.WaitList(res.Waits))
	case counts[truthNotJudged] > 0 && sev == checks.SeverityError:
		// Not judged is not truthful: the check neither passes nor
		// fails it on its own.
		res.Conclusion = checks.Neutral
	}
	res.Summary = b.String()
	return res
}

// maxListed bounds the bundles the summary names one by one.
const maxListed = 20

var truthTally = map[truthWhat]string{
	truthMatch:     "match their images",
	truthDiffers:   "differ from their images",
	truthWaiting:   "could not be pulled yet",
	truthNotJudged: "not judged",
	truthOverLimit: "not pulled, past limits.images",
}

func truthWords(o truthOutcome) string {
	switch o.what {
	case truthMatch:
		return "matches its image"
	case truthDiffers:
		return fmt.Sprintf("differs from its image (%s)", checks.Count(len(o.findings), "finding", "findings"))
	case truthWaiting:
		return "could not be pulled yet"
	case truthOverLimit:
		return "not pulled, past limits.images"
	}
	return "not judged: " + o.why
}

// bundlesToJudge lists the bundles of the touched packages that the head
// has and the base does not have as they are: added, or changed in what
// they claim of their image (truth.Claims). A bundle that moved within its
// file, or to another file, or whose other properties alone changed, is
// not judged again: the base's verdict on the same claims stands.
func bundlesToJudge(ctx context.Context, in *Input) ([]placedBundle, error) {
	cats, err := in.touched.load(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []placedBundle
	for _, c := range cats {
		own := map[string]bool{}
		for _, p := range c.pkgs {
			own[p] = true
		}
		known := map[string][]declcfg.Bundle{}
		if c.base != nil {
			for _, b := range c.base.Config.Bundles {
				known[b.Package+"\x00"+b.Name] = append(known[b.Package+"\x00"+b.Name], truth.Claims(b))
			}
		}
		for i, b := range c.head.Config.Bundles {
			if !own[b.Package] || b.Image == "" {
				continue
			}
			same := false
			for _, k := range known[b.Package+"\x00"+b.Name] {
				if reflect.DeepEqual(k, truth.Claims(b)) {
					same = true
					break
				}
			}
			if same {
				continue
			}
			at := c.head.Bundles[i]
			out = append(out, placedBundle{bundle: b, file: joinRoot(c.root, at.File), line: at.Line})
		}
	}
	return out, nil
}

// joinRoot is a path under a catalog root as the repository names it.
func joinRoot(root, file string) string { return path.Join(root, file) }

// judgeAll charges the images to the pass's budget in order, before any
// pull, so that the first bundle past limits.images is the same whichever
// render finishes first, then renders and compares them, a few at once.
func judgeAll(ctx context.Context, in *Input, todo []placedBundle, sev checks.Severity) []truthOutcome {
	out := make([]truthOutcome, len(todo))
	budget := in.imageBudget()
	sem := make(chan struct{}, maxTruthRenders)
	var wg sync.WaitGroup
	for i, pb := range todo {
		ref := pb.bundle.Image
		if _, err := reference.ParseCanonical(ref); err != nil {
			out[i] = truthOutcome{what: truthNotJudged, why: "the image is not a registry image reference"}
			continue
		}
		if ok, _ := in.Policy.Images.Admits(ref); !ok {
			// The images check reports the refusal; nothing is pulled.
			out[i] = truthOutcome{what: truthNotJudged, why: "the image policy does not let it be pulled (see the images check)"}
			continue
		}
		if budget.take([]string{ref}, true) == 0 {
			out[i] = truthOutcome{what: truthOverLimit, findings: []checks.Finding{{Rule: RuleLimitImages, Severity: checks.SeverityError,
				File: pb.file, Line: pb.line, Package: pb.bundle.Package, Bundle: pb.bundle.Name,
				Message: fmt.Sprintf("bundle %s (%s) was not compared with its image: %s", pb.bundle.Name, ref, imagesLimitError(in.Policy.Limits.Images).Error())}}}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = judgeOne(ctx, in, pb, sev)
		})
	}
	wg.Wait()
	return out
}

// judgeOne renders one bundle's image, within limits.referenceTimeout, and
// compares the blob with it.
func judgeOne(ctx context.Context, in *Input, pb placedBundle, sev checks.Severity) truthOutcome {
	ref := pb.bundle.Image
	host := ""
	if r, err := name.ParseReference(ref); err == nil {
		host = r.Context().RegistryStr()
	}
	if err := in.Breaker.Check(host); err != nil {
		return truthOutcome{what: truthWaiting, wait: &checks.Wait{Registry: host, Class: checks.WaitTransport}}
	}
	rctx := ctx
	if d := in.Policy.Limits.ReferenceTimeout; d > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	// The render takes a slot of the process's bound on the host, as the
	// images check does: on a host not heard from, or not answering, the
	// images check's contact with it goes alone and this one waits for its
	// outcome rather than dial too. Without it, every pull request on a
	// registry that never answers held its worker for the whole deadline
	// here, whatever the bound let the images check do.
	var hosts *registry.Hosts
	if in.Breaker != nil {
		hosts = in.Breaker.Hosts
	}
	leave, err := hosts.Acquire(rctx, host, in)
	if err != nil {
		return truthOutcome{what: truthWaiting, wait: &checks.Wait{Registry: host, Class: checks.WaitTransport}}
	}
	r, err := in.Renderer.RenderRef(rctx, ref)
	leave(err)
	if err != nil {
		switch c := sortContact(host, err); {
		case c.refused != nil:
			return truthOutcome{what: truthNotJudged, why: "the egress rule refused its registry (see the images check)"}
		case c.wait != nil:
			in.Breaker.Record(host, err)
			// The images check counts the references that wait on a
			// registry; the same image waiting here too is not another.
			c.wait.Count = 0
			return truthOutcome{what: truthWaiting, wait: c.wait}
		case c.answered:
			// The registry answered without the image (not found,
			// refused): the images check reports it when the change
			// adds the image.
			return truthOutcome{what: truthNotJudged, why: "its registry answered without the image (not found or refused)"}
		}
		if ctx.Err() != nil {
			return truthOutcome{what: truthWaiting, wait: &checks.Wait{Class: checks.WaitDeadline}}
		}
		return unrenderable(pb, bundleError(err))
	}
	if r.Kind != render.KindBundleImage || len(r.Config.Bundles) != 1 {
		return unrenderable(pb, fmt.Sprintf("it is a %s, not a bundle image", r.Kind))
	}
	image := r.Config.Bundles[0]
	if hasType(pb.bundle, property.TypeCSVMetadata) && r.CSVs[0] != "" {
		// The blob was migrated (opm's bundle-object-to-csv-metadata):
		// the image's CSV is migrated the same way to compare.
		if meta, err := render.CSVMetadata(r.CSVs[0]); err == nil {
			image.Properties = append(image.Properties, meta)
		}
	}
	diffs := truth.Compare(pb.bundle, image)
	if len(diffs) == 0 {
		return truthOutcome{what: truthMatch}
	}
	return truthOutcome{what: truthDiffers, findings: truth.Findings(diffs, pb.bundle, pb.file, pb.line, sev)}
}

// unrenderable is an image that was pulled and does not render as a
// bundle: a BT9 warning on the blob, and the bundle not judged.
func unrenderable(pb placedBundle, why string) truthOutcome {
	return truthOutcome{what: truthNotJudged, why: "the image does not render as a bundle",
		findings: []checks.Finding{{Rule: truth.RuleUnreadable, Severity: checks.SeverityWarning, File: pb.file, Line: pb.line,
			Package: pb.bundle.Package, Bundle: pb.bundle.Name,
			Message: fmt.Sprintf("bundle %s was not compared with its image %s: %s", pb.bundle.Name, pb.bundle.Image, why)}}}
}

// bundleError is why a pulled image did not render, without the
// reference, which the finding names already.
func bundleError(err error) string {
	var tl *render.TooLargeError
	if errors.As(err, &tl) {
		return tl.Error()
	}
	var re *render.RefError
	if errors.As(err, &re) {
		return re.Err.Error()
	}
	return err.Error()
}

func hasType(b declcfg.Bundle, typ string) bool {
	for _, p := range b.Properties {
		if p.Type == typ {
			return true
		}
	}
	return false
}
