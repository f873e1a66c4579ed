package errtree

import "testing"

const a = `invalid index:
├── invalid package "foo":
│   └── invalid channel "fast":
│       └── channel must contain at least one bundle
└── invalid package "bar":
    └── invalid channel "stable":
        └── multiple channel heads found in graph: bar.v0.1.0, bar.v0.2.0`

const b = `invalid index:
├── invalid package "bar":
│   └── invalid channel "stable":
│       └── multiple channel heads found in graph: bar.v0.1.0, bar.v0.2.0
└── invalid package "foo":
    └── invalid channel "fast":
        └── channel must contain at least one bundle`

const withLeaves = `invalid index:
└── invalid package "foo":
    ├── default channel must be set
    ├── invalid channel "b":
    │   ├── channel must contain at least one bundle
    │   └── invalid deprecation: message must be set
    ├── invalid channel "a":
    │   └── invalid bundle "x":
    │       ├── skip[0] is empty
    │       └── bundle image must be set
    └── duplicate versions found in bundles: [{0.0.0: [x, y]}]`

func TestRoundTrip(t *testing.T) {
	for _, s := range []string{a, b, withLeaves, "invalid index"} {
		if got := Parse(s).String(); got != s {
			t.Errorf("round trip changed the tree:\n%s\n---\n%s", s, got)
		}
	}
}

func TestEqual(t *testing.T) {
	if !Equal(a, b) {
		t.Errorf("reordered packages should be equal")
	}
	want := `invalid index:
└── invalid package "foo":
    ├── default channel must be set
    ├── invalid channel "a":
    │   └── invalid bundle "x":
    │       ├── skip[0] is empty
    │       └── bundle image must be set
    ├── invalid channel "b":
    │   ├── channel must contain at least one bundle
    │   └── invalid deprecation: message must be set
    └── duplicate versions found in bundles: [{0.0.0: [x, y]}]`
	if got := Canonical(withLeaves); got != want {
		t.Errorf("Canonical:\n%s\nwant:\n%s", got, want)
	}
	// Leaves keep their fixed order.
	swapped := `invalid index:
└── invalid package "foo":
    └── invalid channel "a":
        └── invalid bundle "x":
            ├── bundle image must be set
            └── skip[0] is empty`
	orig := `invalid index:
└── invalid package "foo":
    └── invalid channel "a":
        └── invalid bundle "x":
            ├── skip[0] is empty
            └── bundle image must be set`
	if Equal(orig, swapped) {
		t.Errorf("leaf order must matter")
	}
	if Equal("duplicate package \"foo\"", "duplicate package \"bar\"") {
		t.Errorf("different flat messages compare equal")
	}
	if Equal(a, "x") {
		t.Errorf("tree equals flat message")
	}
}

func TestContinuationLines(t *testing.T) {
	s := "invalid index:\n└── invalid package \"foo\":\n    └── some leaf\nwith a second line"
	n := Parse(s)
	if got := n.Children[0].Children[0].Text; got != "some leaf\nwith a second line" {
		t.Errorf("continuation: %q", got)
	}
	if n.String() != s {
		t.Errorf("round trip: %q", n.String())
	}
}
