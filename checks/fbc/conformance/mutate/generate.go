// Package mutate generates invalid (and some valid) variants of valid
// File-Based Catalogs for differential testing against `opm validate`.
//
// A seed catalog is a map of slash-separated relative paths to file contents
// (YAML or JSON FBC). Each mutation kind (see Mutations) edits a parsed copy
// of a seed and the result is rendered back to files: YAML files as "---"
// separated documents with sorted keys, JSON files as a stream of objects.
// Files that are neither (README.md, .indexignore, ...) are kept byte for
// byte. Textual mutations (unquoted scalars, bad separators, trailing commas,
// comment-only documents, JSON followed by YAML) act on the rendering.
//
// Generation is deterministic: every case draws from its own math/rand/v2
// PCG stream seeded from Options.Seed and the case's identity, so the same
// inputs always give the same cases, in the same order.
package mutate

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Seed is a valid catalog to mutate.
type Seed struct {
	Name  string
	Files map[string]string
}

// Case is one generated catalog.
type Case struct {
	// Name is "<seed>/<mutation>[+<mutation>...]", each mutation written as
	// kind[:variant][@target].
	Name string
	Seed string
	// Mutations are the kind[:variant] of each applied mutation, in order.
	Mutations []string
	Files     map[string]string
}

// Options tune Generate.
type Options struct {
	// Seed seeds every random choice.
	Seed uint64
	// Reps is how many instances of each single mutation (kind and variant)
	// are drawn per seed catalog, each with its own random target. 0 means 1.
	Reps int
	// Combos is how many combinations of 2–3 mutations are drawn per seed
	// catalog.
	Combos int
}

// Generate applies every mutation to every seed, then random combinations.
// Seeds are taken in name order; seeds whose rendering is identical to an
// earlier seed's are skipped, and so are cases whose files are identical to
// an earlier case's.
func Generate(seeds []Seed, opts Options) []Case {
	if opts.Reps <= 0 {
		opts.Reps = 1
	}
	seeds = append([]Seed(nil), seeds...)
	sort.Slice(seeds, func(i, j int) bool { return seeds[i].Name < seeds[j].Name })

	var out []Case
	seen := map[string]bool{}
	add := func(cs Case) {
		k := fingerprint(cs.Files)
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, cs)
	}
	seenSeed := map[string]bool{}
	for _, s := range seeds {
		base := parseCatalog(s.Files)
		k := fingerprint(base.render())
		if seenSeed[k] {
			continue
		}
		seenSeed[k] = true

		for _, mu := range mutators {
			variants := mu.variants
			if len(variants) == 0 {
				variants = []string{""}
			}
			for _, v := range variants {
				for rep := 0; rep < opts.Reps; rep++ {
					id := fmt.Sprintf("%s/%s:%s#%d", s.Name, mu.name, v, rep)
					m := &mctx{c: base.clone(), r: newRand(opts.Seed, id)}
					detail, ok := mu.apply(m, v)
					if !ok {
						break
					}
					label := label(mu.name, v, detail)
					add(Case{
						Name:      s.Name + "/" + label,
						Seed:      s.Name,
						Mutations: []string{kindName(mu.name, v)},
						Files:     m.c.render(),
					})
				}
			}
		}

		for i := 0; i < opts.Combos; i++ {
			id := fmt.Sprintf("%s/combo#%d", s.Name, i)
			r := newRand(opts.Seed, id)
			for attempt := 0; attempt < 20; attempt++ {
				m := &mctx{c: base.clone(), r: r}
				n := 2 + r.IntN(2)
				var labels, kinds []string
				ok := true
				used := map[string]bool{}
				for len(kinds) < n {
					mu := mutators[r.IntN(len(mutators))]
					if used[mu.name] {
						continue
					}
					used[mu.name] = true
					v := ""
					if len(mu.variants) > 0 {
						v = mu.variants[r.IntN(len(mu.variants))]
					}
					detail, applied := mu.apply(m, v)
					if !applied {
						ok = false
						break
					}
					labels = append(labels, label(mu.name, v, detail))
					kinds = append(kinds, kindName(mu.name, v))
				}
				if !ok {
					continue
				}
				add(Case{
					Name:      s.Name + "/" + strings.Join(labels, "+"),
					Seed:      s.Name,
					Mutations: kinds,
					Files:     m.c.render(),
				})
				break
			}
		}
	}
	// Names must be unique even when two draws hit the same target.
	count := map[string]int{}
	for i := range out {
		count[out[i].Name]++
		if n := count[out[i].Name]; n > 1 {
			out[i].Name = fmt.Sprintf("%s#%d", out[i].Name, n)
		}
	}
	return out
}

// Render parses and re-renders a seed unchanged: the baseline every case of
// that seed starts from.
func Render(s Seed) map[string]string { return parseCatalog(s.Files).render() }

// SeedsFromFS reads one seed per top-level directory of fsys, named
// prefix+directory name.
func SeedsFromFS(fsys fs.FS, prefix string) ([]Seed, error) {
	des, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var seeds []Seed
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		files := map[string]string{}
		err := fs.WalkDir(fsys, de.Name(), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			rel := strings.TrimPrefix(p, de.Name()+"/")
			files[path.Clean(rel)] = string(b)
			return nil
		})
		if err != nil {
			return nil, err
		}
		seeds = append(seeds, Seed{Name: prefix + de.Name(), Files: files})
	}
	return seeds, nil
}

func kindName(name, variant string) string {
	if variant == "" {
		return name
	}
	return name + ":" + variant
}

var tokenRE = regexp.MustCompile(`ZZRAWTOKEN[0-9]+ZZ`)

func label(name, variant, detail string) string {
	l := kindName(name, variant)
	if detail != "" {
		l += "@" + tokenRE.ReplaceAllString(detail, "<unquoted>")
	}
	return l
}

func newRand(seed uint64, id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

func fingerprint(files map[string]string) string {
	h := fnv.New128a()
	for _, p := range sortedKeys(files) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(p), p, len(files[p]), files[p])
	}
	return string(h.Sum(nil))
}
