package yamlnode

import (
	"testing"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

func TestSyntaxError(t *testing.T) {
	var n yaml.Node
	err := yaml.Unmarshal([]byte("a: b\nc: d: e\n"), &n)
	if err == nil {
		t.Fatal("want a syntax error")
	}
	if got := SyntaxLine(err); got != 2 {
		t.Errorf("line %d, want 2 (%v)", got, err)
	}
	if got, want := syntaxMessage(err), "invalid YAML: mapping values are not allowed in this context"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestDescribe(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("m: {}\nl: []\nn: null\nb: true\ni: 1\nf: 1.5\ns: x\na: &x y\nr: *x\nq: 'yes'\np: yes\n"), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	want := map[string]string{"m": "a mapping", "l": "a list", "n": "null", "b": "a boolean", "i": "an integer", "f": "a number"}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i].Value, Resolve(root.Content[i+1])
		if w, ok := want[k]; ok && Describe(v) != w {
			t.Errorf("%s: Describe = %q, want %q", k, Describe(v), w)
		}
		switch k {
		case "n":
			if !IsNull(v) {
				t.Errorf("n: not null")
			}
		case "r":
			if v.Value != "y" {
				t.Errorf("alias resolved to %q", v.Value)
			}
		case "q":
			if isPlain(v) {
				t.Errorf("a quoted scalar counted as plain")
			}
		case "p":
			if !isPlain(v) || !yaml11Bool(v.Value) {
				t.Errorf("plain yes is a YAML 1.1 boolean")
			}
		}
	}
}
