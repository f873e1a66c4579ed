package owners

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
)

// Limits that keep a hostile file from costing more than a real one could.
const (
	// maxFileSize is far above any real OWNERS or OWNERS_ALIASES file
	// (kubernetes/kubernetes' aliases are about 20 KiB).
	maxFileSize = 1 << 20
	// maxNodes bounds the values visited in one file, so YAML aliases that
	// repeat a large mapping many times cannot multiply the work.
	maxNodes = 1 << 16
)

// parser walks one file's YAML nodes and collects findings with their lines.
// Values are read as Prow reads them: sigs.k8s.io/yaml, which is YAML 1.1
// (so an unquoted yes or off is a boolean, not a login) and matches struct
// keys case-insensitively. Positions come from goyaml.v3's node tree.
type parser struct {
	file string
	// kind names the file's format in messages; empty means "an OWNERS
	// file".
	kind     string
	findings []checks.Finding
	nodes    int
	failed   bool // an error was reported: the file is unusable
}

func (p *parser) kindName() string {
	if p.kind == "" {
		return "an OWNERS file"
	}
	return p.kind
}

func (p *parser) errorf(rule string, line int, format string, args ...any) {
	p.failed = true
	p.findings = append(p.findings, finding(rule, checks.SeverityError, p.file, line, fmt.Sprintf(format, args...)))
}

func (p *parser) warnf(rule string, line int, format string, args ...any) {
	p.findings = append(p.findings, finding(rule, checks.SeverityWarning, p.file, line, fmt.Sprintf(format, args...)))
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// document decodes data as exactly one YAML document and returns its root
// node, or nil for an empty document.
func (p *parser) document(data []byte) *yaml.Node {
	if !p.sized(len(data)) {
		return nil
	}
	return p.stream(yamlnode.Decode(data))
}

// sized says whether a file of size bytes may be decoded at all.
func (p *parser) sized(size int) bool {
	if size > maxFileSize {
		p.errorf(RuleSyntax, 0, "file is %d bytes, more than the %d %s may have", size, maxFileSize, p.kindName())
		return false
	}
	return true
}

// stream is document for a file decoded already, whose size passed sized.
func (p *parser) stream(s *yamlnode.Stream) *yaml.Node {
	if s.Err != nil {
		if !errors.Is(s.Err, io.EOF) {
			p.syntaxError(s.Err)
		}
		return nil
	}
	switch {
	case s.Extra != nil:
		p.errorf(RuleSyntax, s.Extra.Line, "more than one YAML document; %s holds exactly one", p.kindName())
		return nil
	case s.ExtraErr != nil:
		p.syntaxError(s.ExtraErr)
		return nil
	}
	doc := &s.Doc
	if len(doc.Content) == 0 {
		return nil
	}
	root := p.deref(doc.Content[0])
	if isNull(root) {
		return nil
	}
	return root
}

func (p *parser) syntaxError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = err.Error()[len(m[0]):]
	}
	p.errorf(RuleSyntax, line, "invalid YAML: %s", msg)
}

// deref follows YAML aliases (*name) to the node they stand for and counts
// the visit against the file's budget. It returns nil once the budget is
// spent, which callers treat as an empty value (the error is reported once).
func (p *parser) deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	p.nodes++
	if p.nodes == maxNodes+1 {
		p.errorf(RuleSyntax, line(n), "more than %d values (YAML aliases repeat too much); %s is far smaller", maxNodes, p.kindName())
	}
	if p.nodes > maxNodes {
		return nil
	}
	return n
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
}

// kindName names what a node holds, for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if _, kind, ok := scalarString(n); !ok {
			return kind
		}
		return "a string"
	}
	return "an unexpected YAML node"
}

// scalarString returns the string a scalar holds when YAML 1.1 (as Prow
// reads it) resolves it to a string; otherwise it says what it is instead.
func scalarString(n *yaml.Node) (s, kind string, ok bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", "not a scalar", false
	}
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!str" {
		return "", "a value tagged " + n.Tag, false
	}
	if quoted || n.Style&yaml.TaggedStyle != 0 {
		return n.Value, "", true
	}
	if kind := yaml11Kind(n.Value); kind != "" {
		return "", kind, false
	}
	return n.Value, "", true
}

// yaml11Kind returns what YAML 1.1 reads a plain scalar as when that is not a
// string: "a boolean", "null" or "a number"; "" means a string. goyaml.v3
// follows YAML 1.2, where yes, on and y are strings, so it cannot decide this.
func yaml11Kind(s string) string {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
		"true", "True", "TRUE", "false", "False", "FALSE",
		"on", "On", "ON", "off", "Off", "OFF":
		return "a boolean"
	case "", "~", "null", "Null", "NULL":
		return "null"
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return "a number"
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "a number"
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return "a number"
	}
	if yaml11FloatRE.MatchString(plain) {
		return "a number"
	}
	return ""
}

var yaml11FloatRE = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// yaml11Bool reads a boolean as YAML 1.1 does.
func yaml11Bool(n *yaml.Node) (value, ok bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return false, false
	}
	switch n.Value {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// pair is one key and value of a mapping.
type pair struct {
	key   string
	line  int
	value *yaml.Node
}

// mapping returns the pairs of a mapping node in file order. A null value is
// an empty mapping. Duplicate keys are errors: which one a reader keeps is
// up to the reader, so a file that has them cannot be trusted to mean one
// thing. fold compares keys case-insensitively, as Prow matches struct keys.
func (p *parser) mapping(n *yaml.Node, what string, fold bool) ([]pair, bool) {
	n = p.deref(n)
	if isNull(n) {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(RuleStructure, n.Line, "%s must be a mapping, got %s", what, kindName(n))
		return nil, false
	}
	pairs := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := p.deref(n.Content[i])
		if k == nil {
			return nil, false
		}
		if k.Kind != yaml.ScalarNode {
			p.errorf(RuleStructure, k.Line, "%s has a key that is %s; keys must be strings", what, kindName(k))
			ok = false
			continue
		}
		if k.Value == "<<" && k.Style == 0 {
			p.errorf(RuleStructure, k.Line, "%s uses a YAML merge key (<<), which OWNERS files do not support; write the entries out", what)
			ok = false
			continue
		}
		id := k.Value
		if fold {
			id = strings.ToLower(id)
		}
		if first, dup := seen[id]; dup {
			p.errorf(RuleDuplicateKey, k.Line, "%s gives key %q twice (first on line %d)", what, k.Value, first)
			ok = false
			continue
		}
		seen[id] = k.Line
		pairs = append(pairs, pair{key: k.Value, line: k.Line, value: n.Content[i+1]})
	}
	return pairs, ok
}

// list reads a list of strings. A null value is an empty list. A single
// string is an error, not a list of one: Prow cannot read such a file either
// and silently skips it, dropping whatever else it grants or restricts.
// logins normalises the entries and rejects empty ones. Duplicates are
// dropped.
func (p *parser) list(n *yaml.Node, what string, logins bool) []string {
	out, _ := p.listLines(n, what, logins)
	return out
}

// listLines is list that also returns the line of each entry.
func (p *parser) listLines(n *yaml.Node, what string, logins bool) ([]string, []int) {
	n = p.deref(n)
	if isNull(n) {
		return nil, nil
	}
	switch n.Kind {
	case yaml.SequenceNode:
	case yaml.ScalarNode:
		if s, _, ok := scalarString(n); ok {
			p.errorf(RuleStructure, n.Line, "%s must be a list, got the string %q; write [%s]", what, s, s)
			return nil, nil
		}
		fallthrough
	default:
		p.errorf(RuleStructure, n.Line, "%s must be a list, got %s", what, kindName(n))
		return nil, nil
	}
	out := make([]string, 0, len(n.Content))
	lines := make([]int, 0, len(n.Content))
	seen := make(map[string]bool, len(n.Content))
	for _, item := range n.Content {
		item = p.deref(item)
		if item == nil {
			return nil, nil
		}
		s, kind, ok := scalarString(item)
		if !ok {
			if item.Kind == yaml.ScalarNode && (kind == "a boolean" || kind == "a number") {
				p.errorf(RuleStructure, item.Line, "%s: %q is read as %s (YAML 1.1); quote it to mean the name", what, item.Value, kind)
			} else {
				p.errorf(RuleStructure, item.Line, "%s: every entry must be a string, got %s", what, nameOfKind(item, kind))
			}
			continue
		}
		if logins {
			s = NormLogin(s)
			if s == "" {
				p.errorf(RuleStructure, item.Line, "%s: empty login", what)
				continue
			}
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
			lines = append(lines, item.Line)
		}
	}
	return out, lines
}

func nameOfKind(n *yaml.Node, scalarKind string) string {
	if n.Kind == yaml.ScalarNode {
		return scalarKind
	}
	return kindName(n)
}
