// Package yamlnode is the one strict, position-reporting YAML reader that
// the policy file, catalog.yaml reference lists and the service config
// share: Reader decodes exactly one document and reads typed fields
// (mappings with known keys, strings, lists of strings, booleans),
// refusing conversions and the YAML 1.1 booleans that a YAML 1.2 parser
// reads as strings, and reports each problem at its line. Decode keeps a
// file decoded (Stream) for several readers that take different keys from
// it, each reporting as Document would. The helpers
// below it split syntax errors into line and message, resolve aliases and
// describe nodes in words for messages.
package yamlnode

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"
)

var syntaxLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// yaml11Bool reports whether a plain scalar is one that YAML 1.1 reads as a
// boolean and YAML 1.2 (the parser here) as a string.
func yaml11Bool(s string) bool { return yaml11Bools[s] }

var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// SyntaxLine and syntaxMessage split a YAML syntax error into its line and
// the message without the "yaml: line N:" prefix, which the finding's
// position already says.
func SyntaxLine(err error) int {
	if m := syntaxLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func syntaxMessage(err error) string {
	msg := syntaxLineRE.ReplaceAllString(err.Error(), "")
	return "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")
}

// Resolve follows aliases to the node they stand for.
func Resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isPlain reports whether a scalar was written without quotes or block style.
func isPlain(n *yaml.Node) bool {
	return n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// IsNull reports whether a node is a null scalar.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// Describe names the kind of a node for messages.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!str":
			return "a string"
		}
		return "a " + strings.TrimPrefix(n.Tag, "!!")
	}
	return "empty"
}

// where names the mapping a dotted key prefix ("merge.") points into, for
// messages about its keys: "merge", or "the top level" for "".
func where(prefix string) string {
	if prefix == "" {
		return "the top level"
	}
	return strings.TrimSuffix(prefix, ".")
}

// knownKeys lists the keys of a mapping's field table in words, sorted:
// "a", "a and b", "a, b and c". An unknown-key message offers them.
func knownKeys[V any](fields map[string]V) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 1 {
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
