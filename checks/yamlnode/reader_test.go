package yamlnode

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

// TestReader: each field reader refuses what it must, in the same words
// for every format, at the value's line, with the problem each format maps
// to its own rule id.
func TestReader(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		secret bool
		read   func(r *Reader, v *yaml.Node) any
		want   any
		report []string // "line problem: message"
	}{
		{"string", "a: x", false, str, "x", nil},
		{"string, quoted yes", `a: "yes"`, false, str, "yes", nil},
		{"string, plain yes", "a: yes", false, str, "", []string{"1 5: a is yes, a boolean to YAML 1.1 readers; quote it if you mean the string"}},
		{"string, plain yes, secret", "a: yes", true, str, "", []string{"1 5: a is a word YAML 1.1 readers take for a boolean; quote it"}},
		{"string, number", "a: 1.10", false, str, "", []string{`1 2: a is a number "1.10"; want a string (quote it)`}},
		{"string, number, secret", "a: 1.10", true, str, "", []string{"1 2: a is a number; want a string (quote it)"}},
		{"string, null", "a:", false, str, "", []string{"1 6: a is empty"}},
		{"string, blank", `a: "  "`, false, str, "", []string{"1 6: a is empty"}},
		{"string, list", "a: [x]", false, str, "", []string{"1 2: a is a list; want a string"}},
		{"string through an alias", "x: &v hello\na: *v", false, str, "hello", nil},
		{"strings", "a: [x, z]", false, strs, []string{"x", "z"}, nil},
		{"strings, null is empty", "a: ~", false, strs, []string{}, nil},
		{"strings, a bad item", "a:\n- x\n- 7", false, strs, []string{"x", ""}, []string{"3 2: a[1] is an integer \"7\"; want a string (quote it)"}},
		{"strings, a mapping", "a: {x: 1}", false, strs, []string(nil), []string{"1 2: a is a mapping; want a list of strings"}},
		{"bool", "a: true", false, boolean, true, nil},
		{"bool, TRUE", "a: TRUE", false, boolean, true, nil},
		{"bool, plain on", "a: on", false, boolean, false, []string{"1 5: a is on, which YAML 1.1 and 1.2 read differently; write true or false"}},
		{"bool, string", `a: "true"`, false, boolean, false, []string{`1 2: a is a string "true"; want true or false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			r := &Reader{Report: func(line int, p Problem, msg string) {
				got = append(got, fmt.Sprintf("%d %d: %s", line, p, msg))
			}}
			if tt.secret {
				r = r.Secret()
			}
			root := r.Document([]byte(tt.doc), "test.yaml")
			v := valueOf(t, root, "a")
			if out := tt.read(r, v); fmt.Sprint(out) != fmt.Sprint(tt.want) || (out == nil) != (tt.want == nil) {
				t.Errorf("value %#v, want %#v", out, tt.want)
			}
			if !slices.Equal(got, tt.report) {
				t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.report, "\n"))
			}
		})
	}
}

func str(r *Reader, v *yaml.Node) any     { s, _ := r.Str(v, "a"); return s }
func strs(r *Reader, v *yaml.Node) any    { s, _ := r.Strs(v, "a"); return s }
func boolean(r *Reader, v *yaml.Node) any { b, _ := r.Bool(v, "a"); return b }

func valueOf(t *testing.T, root *yaml.Node, key string) *yaml.Node {
	t.Helper()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	t.Fatalf("no key %q", key)
	return nil
}

// TestReaderMappingAndDocument: the document and mapping checks every
// format shares.
func TestReaderMappingAndDocument(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		report []string
	}{
		{"fine", "a: x\nb: y", nil},
		{"unknown key", "a: x\nc: y", []string{"2 3: unknown key c; the top level has a and b"}},
		{"duplicate key", "a: x\na: y", []string{"2 4: key a given twice, first at line 1"}},
		{"key not a string", "1: x", []string{"1 3: a key that is an integer; keys are field names"}},
		{"second document", "a: x\n---\nb: y", []string{"2 1: a second YAML document; test.yaml holds exactly one"}},
		{"syntax", "a: [x", []string{"1 1: invalid YAML: did not find expected ',' or ']'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			r := &Reader{Report: func(line int, p Problem, msg string) {
				got = append(got, fmt.Sprintf("%d %d: %s", line, p, msg))
			}}
			if root := r.Document([]byte(tt.doc), "test.yaml"); root != nil {
				r.Mapping(root, "", map[string]func(*yaml.Node){"a": func(*yaml.Node) {}, "b": func(*yaml.Node) {}})
			}
			if !slices.Equal(got, tt.report) {
				t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.report, "\n"))
			}
		})
	}
	var none []string
	r := &Reader{Report: func(line int, p Problem, msg string) { none = append(none, msg) }}
	if root := r.Document([]byte("# only a comment\n"), "x"); root != nil || len(none) > 0 {
		t.Errorf("a file of comments: root %v, reported %v; want no document and nothing reported", root, none)
	}
}
