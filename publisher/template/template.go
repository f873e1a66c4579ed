// Package template expands catalog templates into File-Based Catalog blobs,
// with the output of `opm alpha render-template` (operator-registry
// v1.65.0), byte for byte once written by render.WriteJSON or WriteYAML.
//
// Two template types are known, named by their schema:
//   - olm.template.basic ("basic"): a list of FBC blobs in which bundles are
//     given by image alone ({schema: olm.bundle, image: REF}); each is
//     replaced by the bundle its image renders to, the other blobs are kept.
//   - olm.semver ("semver"): bundle images listed under the Candidate, Fast
//     and Stable channel archetypes; the package, the channels (one per
//     minor and/or major version and archetype), their upgrade edges and the
//     default channel are generated from the bundles' versions.
//
// Render detects the type from the template's schema when none is given.
// Bundle images are rendered by a publisher/render Renderer, several at
// once, each reference once; its migration level is the template's
// --migrate-level. Bundles already known (a Cache of references pinned by
// digest, or a Known lookup the caller trusts, such as a catalog already
// merged) are not pulled again: a digest names one content, so it renders
// to one bundle.
//
// Problems in the template are findings (Result.Findings) at the template's
// file and line, with a rule id of the TP family (Rules); the returned error
// is kept for the cases where no verdict is possible: a registry that could
// not be reached, a cancelled context.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// The template types and the schemas that name them.
const (
	TypeBasic    = "basic"
	TypeSemver   = "semver"
	SchemaBasic  = "olm.template.basic"
	SchemaSemver = "olm.semver"
)

// Types lists the template types, sorted, as opm lists them.
var Types = []string{TypeBasic, TypeSemver}

var schemaOfType = map[string]string{TypeBasic: SchemaBasic, TypeSemver: SchemaSemver}

// Known is a bundle rendered before, with its CSV as JSON ("" when not
// known: then a semver template that needs the CSV for its package's
// description and icon renders the image after all).
type Known struct {
	Bundle declcfg.Bundle
	CSV    string
}

// Options configure Render.
type Options struct {
	// Type is TypeBasic, TypeSemver, or "" to detect it from the schema.
	Type string

	// Renderer renders bundle images; required. Its MigrateLevel is the
	// template's migration level. A bundle reference must render to a
	// bundle image, as opm alpha render-template requires.
	Renderer *render.Renderer

	// Concurrency is the number of bundle images rendered at once; 0
	// means 8. opm renders them one after another.
	Concurrency int

	// Cache, when set, keeps the bundles of references pinned by digest
	// across calls.
	Cache *Cache

	// MaxPulls, when above 0, is the most bundle images one Render pulls
	// from registries; a template that needs more is a finding, and none
	// is pulled. A template is data and must not make a check's work
	// unbounded.
	MaxPulls int

	// Budget, when set, is asked before any bundle is pulled, with the
	// references about to be pulled in the order the template names
	// them, and says how many of them may be; when fewer than all, err
	// says why. None is pulled then, and err is a finding at the first
	// reference left out, under err's rule when it has one (a Rule()
	// string method). It lets a caller hold the pulls of several
	// templates, and other registry work, to one limit.
	Budget func(refs []string) (n int, err error)

	// Known, when set, returns a bundle already rendered for a reference
	// pinned by digest, which is then not pulled. Only content the caller
	// trusts belongs here: what it returns is taken as is.
	Known func(ref string) (Known, bool)

	// Admit, when set, says whether a bundle reference may be pulled at
	// all, and why not. A reference it refuses is a finding at its line
	// and its registry is never contacted: a template in a pull request
	// is data, bound by the same registry allowlist as every image the
	// pull request names.
	Admit func(ref string) (ok bool, why string)

	// RefTimeout, when above 0, is the deadline of each bundle image's
	// pull, so that a registry which never answers costs it once rather
	// than the whole run's deadline.
	RefTimeout time.Duration

	// Breaker, when set, remembers the registries that ran out of time:
	// their other bundles are not pulled, and fail at once naming them.
	// Share one with the other work of the same pass.
	Breaker *registry.Breaker
}

// Result is a rendered template.
type Result struct {
	// Type is the template's type, given or detected; "" when the
	// template could not be read far enough to tell.
	Type string
	// Config is the catalog the template expands to; nil when Findings
	// hold an error.
	Config *declcfg.DeclarativeConfig
	// Findings are the template's problems, at its file and line.
	Findings []checks.Finding
	// Pulled counts the bundle images rendered from their registry,
	// Reused those taken from the Cache or Known.
	Pulled, Reused int
}

// Render expands the template data read from file (the name findings
// carry). See the package documentation for the error contract.
func Render(ctx context.Context, file string, data []byte, opts Options) (*Result, error) {
	if opts.Renderer == nil {
		return nil, errors.New("template: no renderer")
	}
	t := &run{file: file, data: data, opts: opts, res: &Result{}}
	t.pos = newPositions(data)
	typ := opts.Type
	if typ == "" {
		schema, ok := t.detect()
		if !ok {
			return t.res, nil
		}
		for tt, s := range schemaOfType {
			if s == schema {
				typ = tt
			}
		}
		if typ == "" {
			t.fail(RuleSchema, t.pos.key("schema"), "", "unknown template schema: %s (known: %s, %s)", schema, SchemaBasic, SchemaSemver)
			return t.res, nil
		}
	} else if _, ok := schemaOfType[typ]; !ok {
		return nil, fmt.Errorf("invalid template type %q, must be one of: %s", typ, strings.Join(Types, ", "))
	}
	t.res.Type = typ
	var cfg *declcfg.DeclarativeConfig
	var err error
	if typ == TypeBasic {
		cfg, err = t.basic(ctx)
	} else {
		cfg, err = t.semver(ctx)
	}
	if err != nil {
		return nil, err
	}
	if len(t.res.Findings) == 0 {
		t.res.Config = cfg
	}
	return t.res, nil
}

// run is one Render call.
type run struct {
	file string
	data []byte
	opts Options
	pos  *positions
	res  *Result
}

// fail adds an error finding at line (0 when unknown) about bundle.
func (t *run) fail(rule string, line int, bundle, format string, args ...any) {
	t.res.Findings = append(t.res.Findings, checks.Finding{
		Rule: rule, Severity: checks.SeverityError, File: t.file, Line: line, Bundle: bundle,
		Message: fmt.Sprintf(format, args...),
	})
}

// firstDocument is the template's first YAML document, or its first JSON
// value, as JSON: the part opm reads to find the schema and, for a basic
// template, the whole template. As opm's YAML-or-JSON decoder, input whose
// first non-space byte is '{' is JSON, and YAML documents are split at
// lines starting with "---", empty ones skipped.
func (t *run) firstDocument() (json.RawMessage, bool) {
	trimmed := bytes.TrimLeft(t.data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var raw json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(trimmed)).Decode(&raw); err != nil {
			t.fail(RuleSyntax, t.pos.errLine(err), "", "the template is not valid JSON: %v", err)
			return nil, false
		}
		return raw, true
	}
	doc := firstYAMLDocument(t.data)
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.fail(RuleSyntax, t.pos.errLine(err), "", "the template is not valid YAML: %v", err)
		return nil, false
	}
	return raw, true
}

// firstYAMLDocument cuts data at its first document separator that ends a
// non-empty document.
func firstYAMLDocument(data []byte) []byte {
	var doc []byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if rest, ok := bytes.CutPrefix(line, []byte("---")); ok {
			r := strings.TrimSpace(string(rest))
			if r == "" || strings.HasPrefix(r, "#") {
				if len(doc) > 0 {
					return doc
				}
				continue
			}
		}
		doc = append(doc, line...)
	}
	return doc
}

// detect reads the schema of the template's first document.
func (t *run) detect() (string, bool) {
	raw, ok := t.firstDocument()
	if !ok {
		return "", false
	}
	// A struct, as opm reads it: the key matches case-insensitively.
	var doc struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.fail(RuleSchema, t.pos.key("schema"), "", "the template's schema cannot be read: %v", err)
		return "", false
	}
	if doc.Schema == "" {
		t.fail(RuleSchema, 1, "", "the template has no schema: give schema: %s or schema: %s", SchemaBasic, SchemaSemver)
		return "", false
	}
	return doc.Schema, true
}

// bundle is one bundle reference rendered.
type bundle struct {
	cfg  *declcfg.DeclarativeConfig
	csvs []string
}

// renderBundles renders each distinct reference once, several at once, and
// returns them by reference. A reference that renders to something other
// than a bundle image is a finding at its line; a registry that cannot be
// reached is the error, since the template cannot be judged without it.
func (t *run) renderBundles(ctx context.Context, refs []string) (map[string]*bundle, error) {
	out := make(map[string]*bundle, len(refs))
	var todo []string
	for _, ref := range refs {
		if _, seen := out[ref]; seen {
			continue
		}
		out[ref] = nil
		if b := t.reuse(ref); b != nil {
			out[ref] = b
			t.res.Reused++
			continue
		}
		todo = append(todo, ref)
	}
	if max := t.opts.MaxPulls; max > 0 && len(todo) > max {
		t.fail(RuleBundle, 0, "", "the template names %d bundle images to pull; at most %d are rendered for one template", len(todo), max)
		return nil, nil
	}
	if t.opts.Budget != nil && len(todo) > 0 {
		if n, err := t.opts.Budget(todo); n < len(todo) {
			rule := RuleBundle
			var ruled interface{ Rule() string }
			if errors.As(err, &ruled) {
				rule = ruled.Rule()
			}
			why := "over the caller's budget"
			if err != nil {
				why = err.Error()
			}
			t.fail(rule, t.pos.value(todo[n]), "", "bundle %s was not pulled: %s", todo[n], why)
			return nil, nil
		}
	}
	n := t.opts.Concurrency
	if n <= 0 {
		n = 8
	}
	type answer struct {
		b   *bundle
		err error
	}
	answers := make([]answer, len(todo))
	// The first bundle whose registry cannot be asked leaves the
	// template unjudged whatever the others say: the pulls still under
	// way are called off rather than waited for.
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	var stopOnce sync.Once
	stoppedBy := -1
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, ref := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if pctx.Err() != nil {
				return
			}
			r, err := t.pull(pctx, ref)
			if err == nil && r.Kind != render.KindBundleImage {
				err = &render.RefError{Ref: ref, Kind: r.Kind, Err: fmt.Errorf("cannot render %s: %w", r.Kind, render.ErrNotAllowed)}
			}
			if err != nil {
				answers[i] = answer{err: err}
				if unreachable(err) {
					stopOnce.Do(func() { stoppedBy = i; stop() })
				}
				return
			}
			answers[i] = answer{b: &bundle{cfg: r.Config, csvs: r.CSVs}}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if stoppedBy >= 0 {
		return nil, &BundleError{Ref: todo[stoppedBy], Err: answers[stoppedBy].err}
	}
	for i, ref := range todo {
		a := answers[i]
		if a.err != nil {
			var refused *AdmitError
			if errors.As(a.err, &refused) {
				t.fail(RuleBundle, t.pos.value(ref), "", "bundle %s was not pulled: %s", ref, refused.Why)
				delete(out, ref)
				continue
			}
			t.fail(RuleBundle, t.pos.value(ref), "", "bundle %s does not render: %v", ref, refMessage(a.err))
			delete(out, ref)
			continue
		}
		t.res.Pulled++
		out[ref] = a.b
		if t.opts.Cache != nil && pinned(ref) && len(a.b.cfg.Bundles) == 1 {
			t.opts.Cache.put(t.opts.Renderer, ref, Known{Bundle: a.b.cfg.Bundles[0], CSV: a.b.csvs[0]})
		}
	}
	return out, nil
}

// pull renders one bundle reference from its registry, if the caller's
// rule admits it, within the per-reference deadline, unless its registry
// ran out of time earlier in the pass.
func (t *run) pull(ctx context.Context, ref string) (*render.Rendered, error) {
	if t.opts.Admit != nil {
		if ok, why := t.opts.Admit(ref); !ok {
			return nil, &AdmitError{Ref: ref, Why: why}
		}
	}
	host := ""
	if r, err := name.ParseReference(ref); err == nil {
		host = r.Context().RegistryStr()
	}
	if err := t.opts.Breaker.Check(host); err != nil {
		return nil, err
	}
	if d := t.opts.RefTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	r, err := t.opts.Renderer.RenderRef(ctx, ref)
	if err != nil {
		t.opts.Breaker.Record(host, err)
	}
	return r, err
}

// AdmitError is a bundle reference Options.Admit refused; nothing was
// contacted for it.
type AdmitError struct {
	Ref, Why string
}

func (e *AdmitError) Error() string { return fmt.Sprintf("bundle %s was not pulled: %s", e.Ref, e.Why) }

// BundleError is a bundle image that could not be rendered for want of an
// answer from its registry: the template could not be judged.
type BundleError struct {
	Ref string
	Err error
}

func (e *BundleError) Error() string { return fmt.Sprintf("render bundle %s: %v", e.Ref, e.Err) }
func (e *BundleError) Unwrap() error { return e.Err }

// reuse returns the bundle of a reference pinned by digest from the cache
// or the caller's known bundles.
func (t *run) reuse(ref string) *bundle {
	if !pinned(ref) {
		return nil
	}
	if t.opts.Cache != nil {
		if k, ok := t.opts.Cache.get(t.opts.Renderer, ref); ok {
			return knownBundle(k)
		}
	}
	if t.opts.Known != nil {
		if k, ok := t.opts.Known(ref); ok && k.Bundle.Image == ref {
			return knownBundle(k)
		}
	}
	return nil
}

func knownBundle(k Known) *bundle {
	return &bundle{cfg: &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{k.Bundle}}, csvs: []string{k.CSV}}
}

// pinned says whether a reference names its image by digest.
func pinned(ref string) bool { return strings.Contains(ref, "@sha256:") }

// unreachable tells the failures that say nothing about the reference
// (no answer, a rate limit, credentials refused, a cancelled run) from
// those that judge it (no such image, not a bundle image, a bundle that
// does not parse).
func unreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var berr *registry.BreakerError
	if errors.As(err, &berr) {
		return true
	}
	var terr *transport.Error
	if errors.As(err, &terr) {
		class, _ := registry.Classify(err)
		return class != registry.ClassNotFound
	}
	var nerr net.Error
	var uerr *url.Error
	return errors.As(err, &nerr) || errors.As(err, &uerr)
}

// refMessage is the renderer's message without the reference, which the
// finding names already.
func refMessage(err error) string {
	var refused *AdmitError
	if errors.As(err, &refused) {
		return "it was not pulled: " + refused.Why
	}
	// A registry's answer is worded by its class: the library's text
	// quotes what the registry sent, which may be an internal service's
	// body.
	if class, msg, ok := registry.Explain(err); ok {
		return string(class) + ": " + msg
	}
	var re *render.RefError
	if errors.As(err, &re) {
		return re.Err.Error()
	}
	return err.Error()
}

// Cache keeps bundles rendered from references pinned by digest, per
// migration level. It is safe for concurrent use.
type Cache struct {
	mu sync.Mutex
	m  map[string]Known
}

func cacheKey(r *render.Renderer, ref string) string { return r.MigrateLevel() + "\x00" + ref }

func (c *Cache) get(r *render.Renderer, ref string) (Known, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.m[cacheKey(r, ref)]
	return k, ok
}

func (c *Cache) put(r *render.Renderer, ref string, k Known) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[cacheKey(r, ref)] = k
}
