// Package errtree parses the error trees printed by operator-registry's
// model validation (alpha/model/error.go) and puts them in a canonical form,
// so that two trees that differ only in the order of map-ordered siblings
// compare equal.
//
// A tree looks like this:
//
//	invalid index:
//	├── invalid package "foo":
//	│   └── invalid channel "fast":
//	│       └── channel must contain at least one bundle
//	└── invalid package "bar":
//	    └── invalid channel "stable":
//	        └── multiple channel heads found in graph: bar.v0.1.0, bar.v0.2.0
//
// Packages, channels and bundles are visited in Go map order, so their order
// among siblings is random. They are always inner nodes (a validation node is
// only printed when it has children). Leaves keep a fixed order relative to
// each other. Canonical therefore sorts the inner nodes among the slots they
// occupy and leaves every leaf where it is, which keeps the fixed-order part
// of the comparison strict.
package errtree

import (
	"sort"
	"strings"
)

// Root is how every model-validation error tree starts.
const Root = "invalid index"

const (
	branch = "├── "
	last   = "└── "
	pipe   = "│   "
	blank  = "    "
)

// Node is one line of a tree (plus any continuation lines of a multi-line
// leaf message).
type Node struct {
	Text     string
	Children []*Node
}

// IsTree reports whether msg is a model-validation error tree.
func IsTree(msg string) bool {
	return msg == Root || strings.HasPrefix(msg, Root+":\n")
}

// Parse reads a tree. It never fails: a line that is not a node line at the
// expected depth is taken as a continuation of the previous node's text.
func Parse(msg string) *Node {
	lines := strings.Split(msg, "\n")
	root := &Node{Text: lines[0]}
	// stack[d] is the last node seen at depth d (root is depth 0).
	stack := []*Node{root}
	prev := root
	for _, line := range lines[1:] {
		depth, text, ok := nodeLine(line, len(stack))
		if !ok {
			prev.Text += "\n" + line
			continue
		}
		n := &Node{Text: text}
		parent := stack[depth-1]
		parent.Children = append(parent.Children, n)
		stack = append(stack[:depth], n)
		prev = n
	}
	return root
}

// nodeLine splits a line into its depth (1 for children of the root) and its
// text. maxDepth bounds the depth: a node can be at most one level below the
// deepest open node.
func nodeLine(line string, maxDepth int) (int, string, bool) {
	rest := line
	depth := 1
	for {
		switch {
		case strings.HasPrefix(rest, branch):
			return depth, rest[len(branch):], depth <= maxDepth
		case strings.HasPrefix(rest, last):
			return depth, rest[len(last):], depth <= maxDepth
		case strings.HasPrefix(rest, pipe):
			rest = rest[len(pipe):]
		case strings.HasPrefix(rest, blank):
			rest = rest[len(blank):]
		default:
			return 0, "", false
		}
		depth++
		if depth > maxDepth {
			return 0, "", false
		}
	}
}

// Canonicalize orders n in place: inner nodes are sorted (by their own
// canonical rendering) among the positions inner nodes occupy; leaves stay put.
func (n *Node) Canonicalize() {
	var slots []int
	var inner []*Node
	for i, c := range n.Children {
		c.Canonicalize()
		if len(c.Children) > 0 {
			slots = append(slots, i)
			inner = append(inner, c)
		}
	}
	keys := make(map[*Node]string, len(inner))
	for _, c := range inner {
		keys[c] = c.String()
	}
	sort.SliceStable(inner, func(i, j int) bool { return keys[inner[i]] < keys[inner[j]] })
	for k, i := range slots {
		n.Children[i] = inner[k]
	}
}

// String renders the tree in operator-registry's format.
func (n *Node) String() string {
	var b strings.Builder
	b.WriteString(n.Text)
	for i, c := range n.Children {
		c.render(&b, "", i == len(n.Children)-1)
	}
	return b.String()
}

func (n *Node) render(b *strings.Builder, prefix string, isLast bool) {
	b.WriteByte('\n')
	b.WriteString(prefix)
	if isLast {
		b.WriteString(last)
		prefix += blank
	} else {
		b.WriteString(branch)
		prefix += pipe
	}
	b.WriteString(n.Text)
	for i, c := range n.Children {
		c.render(b, prefix, i == len(n.Children)-1)
	}
}

// Canonical returns msg with the random sibling order removed. Messages that
// are not trees are returned unchanged.
func Canonical(msg string) string {
	if !IsTree(msg) {
		return msg
	}
	t := Parse(msg)
	t.Canonicalize()
	return t.String()
}

// Equal reports whether two opm messages are the same: trees are compared
// with unordered inner siblings, anything else byte for byte.
func Equal(a, b string) bool {
	if IsTree(a) != IsTree(b) {
		return false
	}
	return Canonical(a) == Canonical(b)
}
