// Package rebuild is the scheduled job of a catalog.yaml repository:
// assemble the catalog, validate it, build its image and publish it only
// when its digest changed, and say what moved since the last publication.
//
// A scheduled rebuild exists because a catalog.yaml names its references by
// tag: when a referenced catalog image is re-pushed under the same tag, or
// the base image gets a security fix, nothing in the repository changes and
// no push event fires. Running on a schedule picks those moves up; the
// reproducible build makes a run with nothing moved a no-op ("unchanged").
package rebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/publisher/assemble"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/catalogyaml"
)

// Options configure a rebuild.
type Options struct {
	// Image is the target: a registry reference or oci:DIR[:TAG].
	Image string
	// Base, OPMImage, Platforms and Epoch are passed to build.Build.
	Base      string
	OPMImage  string
	Platforms []string
	Epoch     time.Time
	// CacheDir keeps rendered references across runs (assemble's cache).
	// Without one a temporary cache is used for the run: the cache is
	// what resolves every reference to a digest, which drift needs.
	CacheDir string
	// InsecureRegistries are reached over plain HTTP.
	InsecureRegistries []string
	// Keychain and Transport reach registries; nil means the defaults.
	Keychain  authn.Keychain
	Transport http.RoundTripper
	// Validate validates the assembled catalog; nil means fbc.Validate.
	Validate func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error)
	// Progress is assemble's progress callback.
	Progress func(assemble.Event)
}

// Status is what a rebuild did.
type Status string

const (
	// Published: the target had another digest, or none, and now has
	// the built one.
	Published Status = "published"
	// Unchanged: the target already had the built digest; nothing was
	// written.
	Unchanged Status = "unchanged"
	// Invalid: the assembled catalog does not validate; nothing was
	// built or written. Result.Findings holds why.
	Invalid Status = "invalid"
)

// Drift kinds.
const (
	DriftReference = "reference" // a reference's tag names another digest
	DriftAdded     = "added"     // a reference the last image did not record
	DriftRemoved   = "removed"   // a recorded reference no longer listed
	DriftBase      = "base"      // the base image resolves to another digest
)

// Drift is one input that moved since the last published image.
type Drift struct {
	Kind string
	// Name is the reference (its image as written) or the base's name.
	Name string
	// Was and Now are digests; empty when absent on that side.
	Was, Now string
}

func (d Drift) String() string {
	switch d.Kind {
	case DriftAdded:
		return fmt.Sprintf("reference %s added at %s", d.Name, d.Now)
	case DriftRemoved:
		return fmt.Sprintf("reference %s removed (was %s)", d.Name, d.Was)
	case DriftBase:
		return fmt.Sprintf("base %s moved: %s -> %s", d.Name, d.Was, d.Now)
	}
	return fmt.Sprintf("reference %s moved: %s -> %s", d.Name, d.Was, d.Now)
}

// Result is the outcome of a rebuild.
type Result struct {
	Status Status
	// Digest is the built image's digest (empty when Invalid).
	Digest string
	// Previous is the digest the target had before, empty if none.
	Previous string
	// References maps each reference to the digest it resolved to.
	References map[string]string
	// Drift lists what moved against the previous image's annotations;
	// nil when there was no previous image or it carried none.
	Drift []Drift
	// Findings is the validation result when Status is Invalid.
	Findings *fbc.Result
}

// Rebuild assembles f into a temporary directory, validates it, builds the
// catalog image and pushes it to o.Image unless it is there already. f
// must have been parsed without findings. An invalid catalog is reported
// in the result, with a nil error, and nothing is pushed.
func Rebuild(ctx context.Context, f *catalogyaml.File, o Options) (*Result, error) {
	if o.Image == "" {
		return nil, errors.New("no target image")
	}
	if o.Validate == nil {
		o.Validate = fbc.Validate
	}
	tmp, err := os.MkdirTemp("", "catalogbot-rebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cache := o.CacheDir
	if cache == "" {
		cache = filepath.Join(tmp, "cache")
	}
	asm, err := assemble.New(assemble.Options{
		CacheDir:           cache,
		InsecureRegistries: o.InsecureRegistries,
		Keychain:           o.Keychain,
		Transport:          o.Transport,
		Progress:           o.Progress,
	})
	if err != nil {
		return nil, err
	}
	assembled, err := asm.Assemble(ctx, f, filepath.Join(tmp, "out"))
	if err != nil {
		return nil, err
	}
	res := &Result{References: map[string]string{}}
	for _, r := range assembled.References {
		res.References[r.Image] = r.Digest
	}

	// The catalog root is the assembled directory, so that the image's
	// /configs holds <reference>/index.yaml as the repository would.
	vres, err := o.Validate(ctx, os.DirFS(assembled.Dir), fbc.Options{})
	if err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	if !vres.Valid() {
		res.Status, res.Findings = Invalid, vres
		return res, nil
	}

	ropts := []remote.Option{remote.WithContext(ctx)}
	if o.Keychain != nil {
		ropts = append(ropts, remote.WithAuthFromKeychain(o.Keychain))
	} else {
		ropts = append(ropts, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	}
	if o.Transport != nil {
		ropts = append(ropts, remote.WithTransport(o.Transport))
	}
	img, err := build.Build(ctx, assembled.Dir, build.Options{
		Base:       o.Base,
		OPMImage:   o.OPMImage,
		Platforms:  o.Platforms,
		References: res.References,
		Epoch:      o.Epoch,
		Insecure:   o.InsecureRegistries,
		Remote:     ropts,
	})
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	res.Digest = img.Digest.String()

	// The previous image is read before the push replaces it.
	prev, err := ReadPublished(ctx, o.Image, o.InsecureRegistries, ropts)
	if err != nil {
		return nil, fmt.Errorf("read the published image: %w", err)
	}
	if prev != nil {
		res.Previous = prev.Digest
		res.Drift = Compare(prev.Annotations, res.References, img.BaseName, img.BaseDigest)
	}

	pushed, err := build.Push(ctx, img, o.Image, build.PushOptions{Insecure: o.InsecureRegistries, Remote: ropts})
	if err != nil {
		return nil, err
	}
	res.Status = Published
	if pushed.Unchanged {
		res.Status = Unchanged
	}
	return res, nil
}

// Image is a published catalog image: its digest and the annotations of
// its manifest (or index).
type Image struct {
	Digest      string
	Annotations map[string]string
}

// ReadPublished reads the image the target names now, or nil when there is
// none. Only the manifest is read.
func ReadPublished(ctx context.Context, target string, insecure []string, ropts []remote.Option) (*Image, error) {
	var raw []byte
	var digest string
	if spec, ok := strings.CutPrefix(target, build.LayoutPrefix); ok {
		dir, tag := build.SplitLayout(spec)
		p, err := layout.FromPath(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		idx, err := p.ImageIndex()
		if err != nil {
			return nil, err
		}
		m, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		tagged := match.Annotation("org.opencontainers.image.ref.name", tag)
		i := slices.IndexFunc(m.Manifests, tagged)
		if i < 0 {
			return nil, nil
		}
		digest = m.Manifests[i].Digest.String()
		if raw, err = p.Bytes(m.Manifests[i].Digest); err != nil {
			return nil, err
		}
	} else {
		var nopts []name.Option
		if host, _, _ := strings.Cut(target, "/"); slices.Contains(insecure, host) {
			nopts = append(nopts, name.Insecure)
		}
		ref, err := name.ParseReference(target, nopts...)
		if err != nil {
			return nil, fmt.Errorf("image %q: %w", target, err)
		}
		desc, err := remote.Get(ref, append(slices.Clone(ropts), remote.WithContext(ctx))...)
		var terr *transport.Error
		if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		digest, raw = desc.Digest.String(), desc.Manifest
	}
	// Manifests and indexes both keep annotations at the top level.
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", digest, err)
	}
	return &Image{Digest: digest, Annotations: m.Annotations}, nil
}

// Compare lists what moved between the annotations of a published image
// and the current inputs, references first (sorted), then the base. An
// image without catalogbot's annotations gives no drift: there is nothing
// to compare against.
func Compare(anns map[string]string, refs map[string]string, baseName, baseDigest string) []Drift {
	var drift []Drift
	if s, ok := anns[build.AnnReferences]; ok {
		var was map[string]string
		if err := json.Unmarshal([]byte(s), &was); err == nil {
			names := make([]string, 0, len(was)+len(refs))
			for n := range was {
				names = append(names, n)
			}
			for n := range refs {
				if _, ok := was[n]; !ok {
					names = append(names, n)
				}
			}
			sort.Strings(names)
			for _, n := range names {
				w, inWas := was[n]
				now, inNow := refs[n]
				switch {
				case !inWas:
					drift = append(drift, Drift{Kind: DriftAdded, Name: n, Now: now})
				case !inNow:
					drift = append(drift, Drift{Kind: DriftRemoved, Name: n, Was: w})
				case w != now:
					drift = append(drift, Drift{Kind: DriftReference, Name: n, Was: w, Now: now})
				}
			}
		}
	}
	// A base given by another name is a change of configuration, not
	// drift; only the same name resolving elsewhere is reported.
	if w := anns[build.AnnBaseDigest]; w != "" && anns[build.AnnBaseName] == baseName && w != baseDigest {
		drift = append(drift, Drift{Kind: DriftBase, Name: baseName, Was: w, Now: baseDigest})
	}
	return drift
}
