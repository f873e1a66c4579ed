// Package assemble builds a catalog directory from a catalog.yaml reference
// list: every referenced catalog image rendered, as `opm render -o yaml`
// renders it, into <out>/<catalog name>/<reference name>/index.yaml.
//
// It does what the OLM docs' yq + opm render script does, with three
// differences that matter to a publisher:
//
//   - references are rendered in parallel, with bounded concurrency, since
//     the time goes into waiting on registries, not into computing;
//   - the result is all or nothing: it is built in a temporary directory
//     beside the output and renamed into place only when every reference
//     rendered, so a failed run never leaves a half-written catalog that a
//     later build step would publish;
//   - with a cache directory, a reference whose tag still points at the
//     digest it pointed at last time is taken from the cache after a single
//     HEAD request, without downloading a layer.
package assemble

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/tmpdir"
)

// DefaultConcurrency is how many references are rendered at once when
// Options.Concurrency is 0. Rendering is mostly waiting on registries, so
// the bound is set by what a registry tolerates rather than by cores; 16 is
// the overall bound the image check uses too.
const DefaultConcurrency = 16

// IndexFile is the name of each reference's rendered catalog, as in the
// catalog repositories that publish from a catalog.yaml.
const IndexFile = "index.yaml"

// Options configure an Assembler.
type Options struct {
	// Concurrency bounds the references rendered at once; 0 means
	// DefaultConcurrency.
	Concurrency int

	// CacheDir, when set, holds rendered references keyed by image
	// digest. It is created when missing.
	CacheDir string

	// InsecureRegistries are registries (host or host:port) reached over
	// plain HTTP. Loopback and private addresses always are.
	InsecureRegistries []string

	// Keychain resolves registry credentials; nil means
	// registry.DefaultKeychain, the one every command uses.
	Keychain authn.Keychain

	// Transport carries registry requests; nil means timeout.Default(),
	// which bounds how long a silent registry can hold an assembly.
	Transport http.RoundTripper

	// Progress, when set, is told what happens to each reference. It is
	// called from one goroutine at a time.
	Progress func(Event)
}

// Assembler assembles catalogs. It is safe for concurrent use, but two
// assemblies into the same output directory race for the final rename.
type Assembler struct {
	opts     Options
	renderer *render.Renderer
	insecure map[string]bool
}

// New checks the options and returns an Assembler.
func New(opts Options) (*Assembler, error) {
	if opts.Concurrency < 0 {
		return nil, fmt.Errorf("concurrency %d: want a positive number", opts.Concurrency)
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Keychain == nil {
		opts.Keychain = registry.DefaultKeychain()
	}
	if opts.Transport == nil {
		opts.Transport = timeout.Default()
	}
	r, err := render.New(render.Options{
		InsecureRegistries: opts.InsecureRegistries,
		Keychain:           opts.Keychain,
		Transport:          opts.Transport,
	})
	if err != nil {
		return nil, err
	}
	a := &Assembler{opts: opts, renderer: r, insecure: map[string]bool{}}
	for _, h := range opts.InsecureRegistries {
		a.insecure[h] = true
	}
	return a, nil
}

// Result says how each reference was assembled, in catalog.yaml order.
type Result struct {
	// Dir is the catalog's directory: <out>/<catalog name>.
	Dir        string
	References []RefResult
}

// RefResult is one assembled reference.
type RefResult struct {
	Name  string
	Image string
	// Digest is the image's digest when it was resolved (always with a
	// cache directory, else only for references pinned by digest).
	Digest string
	// Cached is set when the output came from the cache.
	Cached bool
	// Bytes is the size of the rendered index.yaml.
	Bytes int
}

// Assemble renders every reference of f into out/<f.Name>/<ref>/index.yaml,
// replacing out as a whole. f must have been parsed without findings: its
// names are used as directory names. On any failure out is left as it was
// and the error is an *Error when references failed.
func (a *Assembler) Assemble(ctx context.Context, f *catalogyaml.File, out string) (*Result, error) {
	if err := checkFile(f); err != nil {
		return nil, err
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	if err := checkReplaceable(out); err != nil {
		return nil, err
	}
	if a.opts.CacheDir != "" {
		if err := os.MkdirAll(a.opts.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("cache directory: %w", err)
		}
	}

	results, failures := a.renderAll(ctx, f.References)
	if len(failures) > 0 {
		return nil, &Error{Path: f.Path, Failures: failures}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	// The temporary directory is a sibling of out, so the final rename
	// stays on one file system and is atomic. Those of killed runs are
	// removed first; a sweep that fails leaves them for the next run and
	// is no reason to fail this one.
	prefix := "." + filepath.Base(out) + ".assemble-"
	_, _ = tmpdir.Sweep(filepath.Dir(out), prefix, time.Now())
	tmp, err := tmpdir.Make(filepath.Dir(out), prefix)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed into place
	catDir := filepath.Join(tmp, f.Name)
	for i, r := range f.References {
		dir := filepath.Join(catDir, r.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, IndexFile), results[i].data, 0o644); err != nil {
			return nil, err
		}
	}
	// MkdirTemp makes the directory 0700; the output is as readable as
	// any directory the build step creates.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := replaceDir(tmp, out); err != nil {
		return nil, err
	}

	res := &Result{Dir: filepath.Join(out, f.Name)}
	for i, r := range f.References {
		res.References = append(res.References, RefResult{
			Name: r.Name, Image: r.Image, Digest: results[i].digest,
			Cached: results[i].cached, Bytes: len(results[i].data),
		})
	}
	return res, nil
}

// checkFile refuses a reference list that was not checked: its names
// become paths, so a name that is not a plain directory name must never
// reach the file system.
func checkFile(f *catalogyaml.File) error {
	if f == nil || f.Name == "" {
		return errors.New("catalog.yaml has no name")
	}
	if len(f.References) == 0 {
		return errors.New("catalog.yaml has no references")
	}
	seen := map[string]bool{}
	for _, n := range append([]string{f.Name}, refNames(f)...) {
		if n == "" || n == "." || n == ".." || strings.ContainsAny(n, `/\`) || filepath.Base(n) != n {
			return fmt.Errorf("name %q cannot be a directory name; parse catalog.yaml with catalogyaml.Parse and fix its findings first", n)
		}
	}
	for _, n := range refNames(f) {
		if seen[n] {
			return fmt.Errorf("duplicate reference name %q; parse catalog.yaml with catalogyaml.Parse and fix its findings first", n)
		}
		seen[n] = true
	}
	return nil
}

func refNames(f *catalogyaml.File) []string {
	names := make([]string, len(f.References))
	for i, r := range f.References {
		names[i] = r.Name
	}
	return names
}

// checkReplaceable refuses to replace a directory that does not look like
// an earlier assembly (directories of directories of index.yaml only), so
// that "-o ." in a repository cannot swap the repository away.
func checkReplaceable(out string) error {
	cats, err := os.ReadDir(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	foreign := func(p string) error {
		return fmt.Errorf("output directory %s holds %s, which assemble does not write; refusing to replace it", out, p)
	}
	for _, c := range cats {
		if !c.IsDir() {
			return foreign(c.Name())
		}
		refs, err := os.ReadDir(filepath.Join(out, c.Name()))
		if err != nil {
			return err
		}
		for _, r := range refs {
			if !r.IsDir() {
				return foreign(filepath.Join(c.Name(), r.Name()))
			}
			files, err := os.ReadDir(filepath.Join(out, c.Name(), r.Name()))
			if err != nil {
				return err
			}
			for _, fl := range files {
				if fl.Name() != IndexFile || fl.IsDir() {
					return foreign(filepath.Join(c.Name(), r.Name(), fl.Name()))
				}
			}
		}
	}
	return nil
}

// replaceDir puts the directory tmp at out. An existing out is first
// renamed aside, so that out is at every moment either the old or the new
// tree, and put back if the second rename fails.
func replaceDir(tmp, out string) error {
	old := ""
	if _, err := os.Lstat(out); err == nil {
		old = tmp + ".old"
		if err := os.Rename(out, old); err != nil {
			return fmt.Errorf("move the old output aside: %w", err)
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		if old != "" {
			if rerr := os.Rename(old, out); rerr != nil {
				return fmt.Errorf("move the new output into place: %w (and restoring the old one from %s: %v)", err, old, rerr)
			}
		}
		return fmt.Errorf("move the new output into place: %w", err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// rendered is one reference's output before it is written.
type rendered struct {
	data   []byte
	digest string
	cached bool
}

// renderAll renders the references with at most Concurrency at once. It
// goes on after a failure, so that one run names every broken reference.
func (a *Assembler) renderAll(ctx context.Context, refs []catalogyaml.Reference) ([]rendered, []Failure) {
	results := make([]rendered, len(refs))
	errs := make([]error, len(refs))
	var mu sync.Mutex
	report := func(e Event) {
		if a.opts.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		a.opts.Progress(e)
	}
	for _, r := range refs {
		report(Event{Name: r.Name, Image: r.Image, State: StateQueued})
	}
	sem := make(chan struct{}, a.opts.Concurrency)
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				report(Event{Name: r.Name, Image: r.Image, State: StateFailed, Err: errs[i]})
				return
			}
			defer func() { <-sem }()
			results[i], errs[i] = a.renderRef(ctx, r, func(s State) {
				report(Event{Name: r.Name, Image: r.Image, State: s})
			})
			e := Event{Name: r.Name, Image: r.Image, State: StateDone, Digest: results[i].digest, Cached: results[i].cached, Bytes: len(results[i].data)}
			if errs[i] != nil {
				e = Event{Name: r.Name, Image: r.Image, State: StateFailed, Err: errs[i]}
			}
			report(e)
		}()
	}
	wg.Wait()
	var failures []Failure
	for i, err := range errs {
		if err != nil {
			class, msg := classify(err)
			failures = append(failures, Failure{Name: refs[i].Name, Image: refs[i].Image, Line: refs[i].Line, Class: class, Message: msg, Err: err})
		}
	}
	return results, failures
}

// renderRef renders one reference, through the cache when there is one.
func (a *Assembler) renderRef(ctx context.Context, r catalogyaml.Reference, state func(State)) (rendered, error) {
	if a.opts.CacheDir == "" {
		state(StateRendering)
		data, err := a.render(ctx, r.Image)
		return rendered{data: data}, err
	}
	state(StateResolving)
	digest, err := a.resolve(ctx, r.Image)
	if err != nil {
		return rendered{}, err
	}
	key := cacheKey(r.Image, digest)
	if data, ok := a.cacheGet(key); ok {
		return rendered{data: data, digest: digest, cached: true}, nil
	}
	state(StateRendering)
	data, err := a.render(ctx, r.Image)
	if err != nil {
		return rendered{}, err
	}
	// The tag is rendered, not the digest, so that a bundle image's
	// image field reads as written (as opm's does). If the tag moved
	// while rendering, what was rendered may not be what digest names:
	// then the output is used but not cached.
	if again, err := a.resolve(ctx, r.Image); err == nil && again == digest {
		if err := a.cachePut(key, data); err != nil {
			return rendered{}, fmt.Errorf("cache: %w", err)
		}
	}
	return rendered{data: data, digest: digest}, nil
}

// render renders one image as `opm render IMAGE -o yaml`.
func (a *Assembler) render(ctx context.Context, image string) ([]byte, error) {
	cfg, err := a.renderer.RenderOne(ctx, image)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := render.WriteYAML(&buf, cfg); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// resolve returns the digest the reference names now: its own digest, or
// what a HEAD request for its tag answers. HEAD downloads nothing and does
// not count against pull limits.
func (a *Assembler) resolve(ctx context.Context, image string) (string, error) {
	if spec, ok := strings.CutPrefix(image, render.LayoutPrefix); ok {
		d, err := render.LayoutDigest(spec)
		if err != nil {
			return "", err
		}
		return d.String(), nil
	}
	var opts []name.Option
	if a.insecure[registryOf(image)] {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(image, append(opts, name.StrictValidation)...)
	if err != nil {
		return "", err
	}
	if d, ok := ref.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(a.opts.Keychain)}
	if a.opts.Transport != nil {
		// Credentials go to the image's registry alone.
		ropts = append(ropts, remote.WithTransport(egress.Credentials(a.opts.Transport, ref.Context().RegistryStr())))
	}
	desc, err := remote.Head(ref, ropts...)
	var terr *transport.Error
	if errors.As(err, &terr) && classOf(err) == registry.ClassTransport {
		// Some registries and proxies answer HEAD with an error they would
		// not give a GET; a GET of the manifest still downloads no layer.
		d, gerr := remote.Get(ref, ropts...)
		if gerr != nil {
			return "", gerr
		}
		return d.Digest.String(), nil
	}
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

// registryOf is the host[:port] of an image reference as written.
func registryOf(image string) string {
	host, _, ok := strings.Cut(image, "/")
	if !ok {
		return ""
	}
	return host
}

// Failure is a reference that could not be assembled.
type Failure struct {
	Name  string
	Image string
	// Line is the reference's line in catalog.yaml.
	Line    int
	Class   Class
	Message string
	Err     error
}

// Error is an assembly that failed because references did; it names every
// one of them.
type Error struct {
	// Path is the catalog.yaml's path, as given to catalogyaml.Parse.
	Path     string
	Failures []Failure
}

func (e *Error) Error() string {
	var sb strings.Builder
	noun := "references"
	if len(e.Failures) == 1 {
		noun = "reference"
	}
	fmt.Fprintf(&sb, "%d %s failed; the output was left as it was:", len(e.Failures), noun)
	fs := append([]Failure(nil), e.Failures...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Line < fs[j].Line })
	for _, f := range fs {
		fmt.Fprintf(&sb, "\n  %s:%d: %s (%s): %s: %s", e.Path, f.Line, f.Name, f.Image, f.Class, f.Message)
	}
	return sb.String()
}
