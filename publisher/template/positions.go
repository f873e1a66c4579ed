package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/yamlnode"
)

// positions finds the lines of a template's keys and values for findings.
// The template is decoded as opm decodes it; this second, position-keeping
// pass over its first document only places what the first one found.
type positions struct {
	data   []byte
	keys   map[string]int // lower-cased key -> first line
	values map[string]int // scalar value -> first line
	// entries are the lines of the items of the first top-level sequence
	// named entries (a basic template's blobs), in order.
	entries []int
}

func newPositions(data []byte) *positions {
	p := &positions{data: data, keys: map[string]int{}, values: map[string]int{}}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return p
	}
	var walk func(n *yaml.Node, top bool)
	walk = func(n *yaml.Node, top bool) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, true)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				key := strings.ToLower(k.Value)
				if _, ok := p.keys[key]; !ok {
					p.keys[key] = k.Line
				}
				if top && key == "entries" && v.Kind == yaml.SequenceNode && p.entries == nil {
					for _, e := range v.Content {
						p.entries = append(p.entries, e.Line)
					}
				}
				walk(v, false)
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, false)
			}
		case yaml.ScalarNode:
			if _, ok := p.values[n.Value]; !ok {
				p.values[n.Value] = n.Line
			}
		}
	}
	walk(&doc, false)
	return p
}

// key is the line of the first key named name (case-insensitively, as
// opm matches keys), or 0.
func (p *positions) key(name string) int { return p.keys[strings.ToLower(name)] }

// value is the line of the first scalar equal to v, or 0.
func (p *positions) value(v string) int { return p.values[v] }

// entry is the line of the i-th blob of a basic template, or 0.
func (p *positions) entry(i int) int {
	if i < len(p.entries) {
		return p.entries[i]
	}
	return 0
}

// errLine is the line a decoding error points at, or 0.
func (p *positions) errLine(err error) int {
	var serr *json.SyntaxError
	if errors.As(err, &serr) {
		off := int(serr.Offset)
		trimmed := len(p.data) - len(bytes.TrimLeft(p.data, " \t\r\n"))
		off += trimmed
		if off > len(p.data) {
			off = len(p.data)
		}
		return bytes.Count(p.data[:off], []byte("\n")) + 1
	}
	return yamlnode.SyntaxLine(err)
}
