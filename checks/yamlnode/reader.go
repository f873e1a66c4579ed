package yamlnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// Problem is the kind of thing a Reader finds wrong. Each file format maps
// it to a rule id of its own, so that the same mistake reads alike in the
// policy, catalog.yaml and the service config while findings keep the ids
// their formats document.
type Problem int

const (
	// Syntax: not one well-formed YAML document.
	Syntax Problem = iota + 1
	// Type: a value of the wrong kind, such as a number where a string
	// is wanted.
	Type
	// UnknownKey: a key the format does not define, or a key that is not
	// a plain string.
	UnknownKey
	// DuplicateKey: a key given twice in one mapping, which YAML forbids
	// and decoders resolve differently.
	DuplicateKey
	// YAML11: a plain yes/no/on/off where a string or a boolean is wanted;
	// YAML 1.1 readers (opm's sigs.k8s.io/yaml among them) take it for a
	// boolean, YAML 1.2 for a string, and a file must not mean two things.
	YAML11
	// Empty: a string field that is empty or null.
	Empty
)

// Reader reads the nodes of one strict YAML file: every field has a type,
// nothing is converted, and every problem is reported at its line through
// Report. The readers of the policy file, catalog.yaml and the service
// config are all this one, so a value is refused for the same reason in
// the same words wherever it is written.
type Reader struct {
	// Report receives each problem found, at its 1-based line.
	Report func(line int, p Problem, msg string)
	// secret keeps scalar values out of messages (see Secret).
	secret bool
}

func (r *Reader) reportf(line int, p Problem, format string, args ...any) {
	r.Report(line, p, fmt.Sprintf(format, args...))
}

// Secret returns a Reader that reports to the same place but never quotes
// a value, for fields that hold secrets.
func (r *Reader) Secret() *Reader {
	return &Reader{Report: r.Report, secret: true}
}

// Document decodes data as exactly one YAML document and returns its top
// node, aliases resolved, or nil when data holds no document (empty, or
// only comments). what names the file in the message about a second
// document.
func (r *Reader) Document(data []byte, what string) *yaml.Node {
	return r.Stream(Decode(data), what)
}

// Stream is one file decoded once, for readers that each take from it
// what they need (a package's ci.yaml is read for its reviewers and for
// its catalog mapping): its first document and whether anything follows.
// Readers only read its nodes, so one Stream serves several at once.
type Stream struct {
	// Doc is the first document; Err the failure to decode it, io.EOF
	// when the stream holds none.
	Doc yaml.Node
	Err error
	// Extra is the start of a second document, nil when there is none;
	// ExtraErr the failure to decode past the first document, other than
	// the io.EOF of a stream that ends with it.
	Extra    *yaml.Node
	ExtraErr error
}

// Decode decodes the first document of data and looks for a second.
func Decode(data []byte) *Stream {
	s := &Stream{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if s.Err = dec.Decode(&s.Doc); s.Err != nil {
		return s
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		s.Extra = &extra
	case !errors.Is(err, io.EOF):
		s.ExtraErr = err
	}
	return s
}

// Stream is Document for a file decoded already.
func (r *Reader) Stream(s *Stream, what string) *yaml.Node {
	if s.Err != nil {
		if !errors.Is(s.Err, io.EOF) {
			r.Report(SyntaxLine(s.Err), Syntax, syntaxMessage(s.Err))
		}
		return nil
	}
	if s.Extra != nil {
		r.reportf(s.Extra.Line, Syntax, "a second YAML document; %s holds exactly one", what)
	} else if s.ExtraErr != nil {
		r.Report(SyntaxLine(s.ExtraErr), Syntax, syntaxMessage(s.ExtraErr))
	}
	root := Resolve(&s.Doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = Resolve(root.Content[0])
	}
	return root
}

// Fields calls fn for each key of the mapping m, reporting keys that are
// not plain strings and keys given twice. prefix is the dotted path of m
// ("merge.", "" at the top level).
func (r *Reader) Fields(m *yaml.Node, prefix string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := Resolve(m.Content[i]), m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			r.reportf(k.Line, UnknownKey, "a key that is %s; keys are field names", Describe(k))
			continue
		}
		if line, dup := seen[k.Value]; dup {
			r.reportf(k.Line, DuplicateKey, "key %s%s given twice, first at line %d", prefix, k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, v)
	}
}

// Mapping calls the field's function for each key of the mapping v,
// reporting what is not a mapping and unknown keys as well as what Fields
// reports. A null value is an absent section.
func (r *Reader) Mapping(v *yaml.Node, prefix string, fields map[string]func(*yaml.Node)) {
	v = Resolve(v)
	if IsNull(v) {
		return
	}
	if v.Kind != yaml.MappingNode {
		r.reportf(v.Line, Type, "%s is %s; want a mapping", strings.TrimSuffix(prefix, "."), Describe(v))
		return
	}
	r.Fields(v, prefix, func(key string, k, val *yaml.Node) {
		fn, ok := fields[key]
		if !ok {
			r.reportf(k.Line, UnknownKey, "unknown key %s%s; %s has %s", prefix, key, where(prefix), knownKeys(fields))
			return
		}
		fn(val)
	})
}

// Bool returns the value of a true/false field. Plain yes, no, on and off
// are refused (YAML11).
func (r *Reader) Bool(v *yaml.Node, field string) (bool, bool) {
	v = Resolve(v)
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		b, err := strconv.ParseBool(v.Value)
		if err == nil {
			return b, true
		}
		// goyaml.v3 tags True and TRUE as booleans as well.
		return strings.EqualFold(v.Value, "true"), true
	}
	if v.Kind == yaml.ScalarNode && isPlain(v) && yaml11Bool(v.Value) {
		r.reportf(v.Line, YAML11, "%s is %s, which YAML 1.1 and 1.2 read differently; write true or false", field, v.Value)
		return false, false
	}
	r.reportf(v.Line, Type, "%s is %s; want true or false", field, r.Describe(v))
	return false, false
}

// Str returns the value of a string field. Numbers, booleans and null are
// refused rather than converted ("tag: 1.10" is the number 1.1 to most YAML
// tools), and so are plain yes/no/on/off (YAML11) and empty strings.
func (r *Reader) Str(v *yaml.Node, field string) (string, bool) {
	v = Resolve(v)
	switch {
	case v.Kind == yaml.ScalarNode && v.Tag == "!!str":
		if isPlain(v) && yaml11Bool(v.Value) {
			if r.secret {
				r.reportf(v.Line, YAML11, "%s is a word YAML 1.1 readers take for a boolean; quote it", field)
			} else {
				r.reportf(v.Line, YAML11, "%s is %s, a boolean to YAML 1.1 readers; quote it if you mean the string", field, v.Value)
			}
			return "", false
		}
		if strings.TrimSpace(v.Value) == "" {
			r.reportf(v.Line, Empty, "%s is empty", field)
			return "", false
		}
		return v.Value, true
	case IsNull(v):
		r.reportf(v.Line, Empty, "%s is empty", field)
	case v.Kind == yaml.ScalarNode:
		r.reportf(v.Line, Type, "%s is %s; want a string (quote it)", field, r.Describe(v))
	default:
		r.reportf(v.Line, Type, "%s is %s; want a string", field, r.Describe(v))
	}
	return "", false
}

// Strs returns the values of a list of strings. A null is an empty list.
// The values of items that are not strings are "" in the list.
func (r *Reader) Strs(v *yaml.Node, field string) ([]string, bool) {
	v = Resolve(v)
	if IsNull(v) {
		return []string{}, true
	}
	if v.Kind != yaml.SequenceNode {
		r.reportf(v.Line, Type, "%s is %s; want a list of strings", field, r.Describe(v))
		return nil, false
	}
	out := make([]string, 0, len(v.Content))
	ok := true
	for i, item := range v.Content {
		s, good := r.Str(item, fmt.Sprintf("%s[%d]", field, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// Describe names a node's kind and, for scalars of a Reader that is not
// Secret, its value.
func (r *Reader) Describe(n *yaml.Node) string {
	d := Describe(n)
	if n.Kind == yaml.ScalarNode && !IsNull(n) && !r.secret {
		return fmt.Sprintf("%s %q", d, n.Value)
	}
	return d
}
