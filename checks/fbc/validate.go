package fbc

import (
	"bytes"
	"context"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
)

func validate(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	paths, walkErrs := listFiles(fsys)
	if c := CacheFrom(ctx); c != nil {
		// A tree validated already in the pass, under another catalog
		// root, is not validated again.
		if k, ok := contentKey(fsys, paths, walkErrs, opts); ok {
			v, err := c.tree(treeKey{sum: k, what: 'v'}, func() (any, bool, error) {
				cat, err := loadListed(ctx, fsys, paths, walkErrs, opts)
				if err != nil {
					return nil, false, err
				}
				return validateLoaded(fsys, cat), cat.read(), nil
			})
			if err != nil {
				return nil, err
			}
			return v.(*Result).clone(), nil
		}
	}
	return validateListed(ctx, fsys, paths, walkErrs, opts)
}

// clone is a copy of r that shares nothing a caller could change with r.
func (r *Result) clone() *Result {
	out := *r
	out.Findings = slices.Clone(r.Findings)
	out.Images = slices.Clone(r.Images)
	out.PackageNames = slices.Clone(r.PackageNames)
	if r.PackagePlaces != nil {
		out.PackagePlaces = make(map[string][]Place, len(r.PackagePlaces))
		for k, v := range r.PackagePlaces {
			out.PackagePlaces[k] = slices.Clone(v)
		}
	}
	return &out
}

// validateListed validates the files paths that listFiles listed in fsys.
func validateListed(ctx context.Context, fsys fs.FS, paths []string, walkErrs []loadError, opts Options) (*Result, error) {
	cat, err := loadListed(ctx, fsys, paths, walkErrs, opts)
	if err != nil {
		return nil, err
	}
	return validateLoaded(fsys, cat), nil
}

// validateLoaded validates cat, loaded from fsys.
func validateLoaded(fsys fs.FS, cat *catalog) *Result {
	res := &Result{}
	var probs []problem
	for _, e := range cat.walkErrs {
		probs = append(probs, loadProblem(e))
	}
	for _, f := range cat.files {
		res.Stats.Files++
		res.Stats.Bytes += f.size
		res.Stats.Packages += len(f.packages)
		res.Stats.Channels += len(f.channels)
		res.Stats.Bundles += len(f.bundles)
		res.Stats.Deprecations += len(f.deps)
		res.Stats.Others += f.others
		res.Images = append(res.Images, f.images...)
		res.fastDocs += f.fastDocs
		for _, e := range f.errs {
			probs = append(probs, loadProblem(e))
		}
	}
	res.PackageNames, res.PackagePlaces = packageNames(cat)
	m, convProbs := convert(cat)
	tree, modelProbs := validateModel(m)

	// opm reports one thing: its loader's first error, else the first
	// conversion error, else the model's error tree.
	switch {
	case len(probs) > 0:
		res.OPMMessage = probs[0].opm
	case len(convProbs) > 0:
		res.OPMMessage = convProbs[0].opm
	case len(tree.children) > 0:
		res.OPMMessage = tree.String()
	}
	probs = append(probs, convProbs...)
	probs = append(probs, modelProbs...)
	refineLines(fsys, probs)
	res.Findings = findings(probs)
	return res
}

func packageNames(cat *catalog) ([]string, map[string][]Place) {
	places := map[string][]Place{}
	for _, f := range cat.files {
		seen := map[string]bool{}
		add := func(name string, at pos) {
			if !seen[name] {
				seen[name] = true
				places[name] = append(places[name], Place{File: at.File, Line: at.Line})
			}
		}
		for _, p := range f.packages {
			add(p.name, p.pos)
		}
		for _, c := range f.channels {
			add(c.pkg, c.pos)
		}
		for _, b := range f.bundles {
			add(b.pkg, b.pos)
			for _, p := range b.packages {
				add(p.PackageName, b.pos)
			}
		}
		for _, d := range f.deps {
			add(d.pkg, d.pos)
		}
	}
	names := make([]string, 0, len(places))
	for n := range places {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, places
}

func loadProblem(e loadError) problem {
	return problem{rule: e.rule, phase: phaseLoad, at: e.pos, opm: e.err.Error()}
}

// findings turns problems into findings in file and line order.
func findings(probs []problem) []checks.Finding {
	out := make([]checks.Finding, 0, len(probs))
	for _, p := range probs {
		msg := p.message
		if msg == "" {
			msg = p.opm
		}
		// A multi-line text (opm's pretty-printed JSON errors, a blob
		// quoted with its trailing newline) stays whole: its last line
		// may be the one that names the problem ("is missing root schema
		// field"). The reporters keep it readable: text indents the
		// continuation lines, annotations escape the breaks.
		out = append(out, checks.Finding{
			Rule:     p.rule,
			Severity: checks.SeverityError,
			File:     p.at.File,
			Line:     p.at.Line,
			Package:  p.pkg,
			Channel:  p.channel,
			Bundle:   p.bundle,
			Message:  msg,
		})
	}
	// A file that does not load takes its blobs with it, and what they
	// declared is then missing elsewhere ("unknown package"): those are
	// follow-on errors, listed after the load errors that cause them.
	sort.SliceStable(out, func(i, j int) bool {
		if li, lj := isLoadRule(out[i].Rule), isLoadRule(out[j].Rule); li != lj {
			return li
		}
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// isLoadRule says whether rule is one of loading and decoding (L*), whose
// errors drop blobs that later rules then miss.
func isLoadRule(rule string) bool {
	return len(rule) > 1 && rule[0] == 'L' && rule[1] >= '0' && rule[1] <= '9'
}

// refineLines moves each problem that names a needle to the first line of
// its blob containing that text. Files are read again only when a problem
// needs it, so a valid catalog costs nothing here.
func refineLines(fsys fs.FS, probs []problem) {
	cache := map[string][]byte{}
	for i := range probs {
		p := &probs[i]
		if p.needle == "" || p.at.File == "" || p.at.End <= p.at.Start {
			continue
		}
		data, ok := cache[p.at.File]
		if !ok {
			data, _ = readFile(fsys, p.at.File)
			cache[p.at.File] = data
		}
		if p.at.End > len(data) {
			continue
		}
		blob := data[p.at.Start:p.at.End]
		if k := find(blob, p.needle); k >= 0 {
			p.at.Line += bytes.Count(blob[:k], []byte("\n"))
		}
	}
}

// field is a needle for the line on which key is followed by value, as in
// "name: foo.v1.0.0" or "\"name\": \"foo.v1.0.0\"".
func field(key, value string) string { return key + "\x00" + value }

// find returns the offset of the first line of blob matching needle, or -1.
func find(blob []byte, needle string) int {
	key, value, isField := strings.Cut(needle, "\x00")
	if !isField {
		return bytes.Index(blob, []byte(needle))
	}
	for off := 0; off < len(blob); {
		end := bytes.IndexByte(blob[off:], '\n')
		if end < 0 {
			end = len(blob) - off
		}
		line := blob[off : off+end]
		if k := bytes.Index(line, []byte(key)); k >= 0 && bytes.Contains(line[k+len(key):], []byte(value)) {
			return off
		}
		off += end + 1
	}
	return -1
}
