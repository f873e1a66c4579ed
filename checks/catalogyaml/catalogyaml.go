// Package catalogyaml reads catalog.yaml reference lists: the file that names
// a catalog, the repository and tag its image is published to, and the
// catalog images it is assembled from.
//
//	name: my-catalog
//	repo: quay.io/example/catalog
//	tag: latest
//	references:
//	- name: foo-operator
//	  image: quay.io/example/foo-operator-catalog:v1.2.0
//
// The parser is strict on purpose. Each reference name becomes a directory of
// the assembled catalog and the key that ownership and diffs are decided by,
// so a name that could escape that directory, or that appears twice, is an
// error rather than something to guess about. Every problem is reported with
// its file and line, all of them at once.
//
// DiffLists compares two versions of a list entry by entry, reading only
// what rendering reads, so that a change can be judged entry by entry even
// when the strict parser refuses one side. Which paths own an entry is the
// owners package's business; the format and its diff are this package's,
// and exist nowhere else.
package catalogyaml

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
)

// File is a parsed catalog.yaml. Fields that are absent are empty, with line
// 0.
type File struct {
	// Path is the path the file was read from, as given to Parse.
	Path string

	Name     string
	NameLine int
	Repo     string
	RepoLine int
	Tag      string
	TagLine  int

	// References lists the entries in file order, duplicates and entries
	// with problems included: the findings say what is wrong with them.
	References []Reference
}

// Reference is one entry of the references list.
type Reference struct {
	Name string
	// Image is the image reference as written.
	Image string
	// Line is the line of the entry itself; ImageLine that of its image
	// value (0 when the entry has no image).
	Line      int
	ImageLine int
	// Ref is Image parsed, or nil when it does not parse or names an OCI
	// image layout (oci:DIR[:TAG]).
	Ref name.Reference
}

// Rule ids of the findings Parse reports.
const (
	RuleSyntax       = "CY1"
	RuleUnknownField = "CY2"
	RuleFieldType    = "CY3"
	RuleMissingField = "CY4"
	RuleName         = "CY5"
	RuleDuplicate    = "CY6"
	RuleImage        = "CY7"
)

// Rules describes the rule ids, for reporters that publish a catalogue.
var Rules = []checks.Rule{
	{ID: RuleSyntax, Name: "YAMLSyntax", Description: "The file is not a single well-formed YAML document."},
	{ID: RuleUnknownField, Name: "UnknownField", Description: "A field that catalog.yaml does not define, or one given twice."},
	{ID: RuleFieldType, Name: "FieldType", Description: "A field holds the wrong kind of value."},
	{ID: RuleMissingField, Name: "MissingField", Description: "A required field is missing or empty."},
	{ID: RuleName, Name: "DirectoryName", Description: "A catalog or reference name that cannot be a single directory name."},
	{ID: RuleDuplicate, Name: "DuplicateName", Description: "Two references share a name."},
	{ID: RuleImage, Name: "ImageReference", Description: "An image reference that does not parse."},
}

// parser collects findings for one file.
type parser struct {
	*yamlnode.Reader
	path     string
	findings []checks.Finding
}

// problemRules maps what the shared reader finds to catalog.yaml's rule ids.
var problemRules = map[yamlnode.Problem]string{
	yamlnode.Syntax:       RuleSyntax,
	yamlnode.Type:         RuleFieldType,
	yamlnode.UnknownKey:   RuleUnknownField,
	yamlnode.DuplicateKey: RuleUnknownField,
	yamlnode.YAML11:       RuleFieldType,
	yamlnode.Empty:        RuleMissingField,
}

func (p *parser) errorf(line int, rule, format string, args ...any) {
	p.findings = append(p.findings, checks.Finding{
		Rule:     rule,
		Severity: checks.SeverityError,
		File:     p.path,
		Line:     line,
		Message:  fmt.Sprintf(format, args...),
	})
}

// Parse reads the catalog.yaml in data; path names it in findings. It
// returns what it could read even when there are findings, so that callers
// can go on with the entries that are fine. A file with findings is invalid.
func Parse(path string, data []byte) (*File, []checks.Finding) {
	p := &parser{path: path}
	p.Reader = &yamlnode.Reader{Report: func(line int, pr yamlnode.Problem, msg string) {
		p.errorf(line, problemRules[pr], "%s", msg)
	}}
	f := &File{Path: path}

	root := p.Document(data, "catalog.yaml")
	if root == nil {
		if len(p.findings) == 0 {
			p.errorf(0, RuleSyntax, "the file is empty; want a mapping with name and references")
		}
		return f, p.findings
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, RuleFieldType, "the top level is %s; want a mapping with name and references", yamlnode.Describe(root))
		return f, p.findings
	}

	p.Fields(root, "", func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			f.Name, f.NameLine = p.str(v, "name"), v.Line
			if f.Name != "" {
				p.dirName(v.Line, "catalog name", f.Name)
			}
		case "repo":
			f.Repo, f.RepoLine = p.str(v, "repo"), v.Line
			if f.Repo != "" {
				if _, err := name.NewRepository(f.Repo); err != nil {
					p.errorf(v.Line, RuleImage, "repo %q is not a valid image repository%s", f.Repo, imageHint(f.Repo))
				}
			}
		case "tag":
			f.Tag, f.TagLine = p.str(v, "tag"), v.Line
			if f.Tag != "" {
				if _, err := name.NewTag("example.com/x:" + f.Tag); err != nil || strings.ContainsAny(f.Tag, ":/@") {
					p.errorf(v.Line, RuleImage, "tag %q is not a valid image tag", f.Tag)
				}
			}
		case "references":
			f.References = p.references(v)
		default:
			p.errorf(k.Line, RuleUnknownField, "unknown field %q; catalog.yaml has name, repo, tag and references", key)
		}
	})
	if f.NameLine == 0 {
		p.errorf(root.Line, RuleMissingField, "missing field name: the catalog's name")
	}

	// Duplicates are reported at the later entry, naming the first, since
	// the later one is usually the addition that clashes.
	first := map[string]int{}
	for _, r := range f.References {
		if r.Name == "" {
			continue
		}
		if line, dup := first[r.Name]; dup {
			p.errorf(r.Line, RuleDuplicate, "duplicate reference name %q, first used at line %d", r.Name, line)
			continue
		}
		first[r.Name] = r.Line
	}
	slices.SortStableFunc(p.findings, func(a, b checks.Finding) int { return cmp.Compare(a.Line, b.Line) })
	return f, p.findings
}

// imageHint explains the usual reasons a reference does not parse; the
// parser's own error only repeats the reference.
func imageHint(s string) string {
	repo, _, _ := strings.Cut(s, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if _, path, ok := strings.Cut(repo, "/"); ok && path != strings.ToLower(path) {
		return ": repository names must be lower-case"
	}
	switch {
	case strings.ContainsAny(s, " \t"):
		return ": it contains white space"
	case strings.Contains(s, "@") && !strings.Contains(s, "@sha256:") && !strings.Contains(s, "@sha512:"):
		return ": a digest is written @sha256:<64 hex digits>"
	case strings.Contains(s, "@"):
		return ": the digest must be the algorithm and its full hex value"
	}
	return ""
}

func (p *parser) references(v *yaml.Node) []Reference {
	v = yamlnode.Resolve(v)
	if yamlnode.IsNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, RuleFieldType, "references is %s; want a list of entries with name and image", yamlnode.Describe(v))
		return nil
	}
	refs := make([]Reference, 0, len(v.Content))
	for i, item := range v.Content {
		item = yamlnode.Resolve(item)
		where := fmt.Sprintf("references[%d]", i)
		if item.Kind != yaml.MappingNode {
			p.errorf(item.Line, RuleFieldType, "%s is %s; want an entry with name and image", where, yamlnode.Describe(item))
			continue
		}
		r := Reference{Line: item.Line}
		seenName := false
		p.Fields(item, where+".", func(key string, k, v *yaml.Node) {
			switch key {
			case "name":
				seenName = true
				r.Name = p.str(v, where+".name")
				if r.Name != "" {
					p.dirName(v.Line, "reference name", r.Name)
				}
			case "image":
				r.Image, r.ImageLine = p.str(v, where+".image"), v.Line
				if r.Image == "" {
					return
				}
				// oci:DIR[:TAG] names an image in an OCI image layout, as
				// render accepts it: a catalog assembled offline, such
				// as the demo's. It has no registry reference.
				if dir, ok := strings.CutPrefix(r.Image, "oci:"); ok && dir != "" && !strings.HasPrefix(dir, ":") {
					return
				}
				ref, err := name.ParseReference(r.Image)
				if err != nil {
					p.errorf(v.Line, RuleImage, "%s.image %q is not a valid image reference%s", where, r.Image, imageHint(r.Image))
					return
				}
				r.Ref = ref
			default:
				p.errorf(k.Line, RuleUnknownField, "unknown field %q in %s; an entry has name and image", key, where)
			}
		})
		if !seenName {
			p.errorf(item.Line, RuleMissingField, "%s has no name", where)
		}
		if r.ImageLine == 0 {
			p.errorf(item.Line, RuleMissingField, "%s has no image", where)
		}
		refs = append(refs, r)
	}
	return refs
}

// str returns the value of a string field, or "" when it is not one (and
// that is reported).
func (p *parser) str(v *yaml.Node, field string) string {
	s, _ := p.Str(v, field)
	return s
}

// dirName reports a name that cannot be used as one directory name. The rule
// is the DNS-1123 label, as for Kubernetes object names: it keeps out path
// separators, "." and "..", and names that differ only in case, which
// collide on case-insensitive file systems.
func (p *parser) dirName(line int, what, s string) {
	if msg := dns1123Label(s); msg != "" {
		p.errorf(line, RuleName, "%s %q cannot be a directory name: %s", what, s, msg)
	}
}

// dns1123Label says why s is not a DNS-1123 label, or "" if it is one.
func dns1123Label(s string) string {
	const rule = "want a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	switch {
	case len(s) > 63:
		return fmt.Sprintf("%d characters, at most 63 allowed", len(s))
	case strings.ContainsAny(s, `/\`):
		return "it contains a path separator; " + rule
	case s == "." || s == "..":
		return "it names a directory itself; " + rule
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return rule
		}
	}
	return ""
}

// ImageRef is the image of one entry, with where it is written.
type ImageRef struct {
	Name  string // the entry's name
	Image string // as written
	File  string
	Line  int // the line of the image field
}

// ImageRefs are the images the entries name, in order, for the checks that
// look them up in registries. Entries whose image is missing, does not
// parse or names an OCI image layout are left out: Parse has reported the
// first two with their lines, and a layout is no registry image.
func (f *File) ImageRefs() []ImageRef {
	out := make([]ImageRef, 0, len(f.References))
	for _, r := range f.References {
		if r.Ref == nil {
			continue
		}
		out = append(out, ImageRef{Name: r.Name, Image: r.Image, File: f.Path, Line: r.ImageLine})
	}
	return out
}
