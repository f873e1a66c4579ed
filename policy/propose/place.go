package propose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// errNotHere says a file holds no blob of the channel looked for.
var errNotHere = errors.New("channel not in file")

// addEntries appends entries to the olm.channel blob named channel of
// package pkg in the YAML file data, and returns the file encoded again.
// The file is edited as YAML nodes, so its comments, key order and
// quoting stay; a channel in a JSON file is refused, since rewriting a
// JSON stream would reformat blobs the proposal does not touch.
func addEntries(file string, data []byte, pkg, channel string, entries []declcfg.ChannelEntry) ([]byte, error) {
	if path.Ext(file) == ".json" {
		if !jsonHolds(data, pkg, channel) {
			return nil, errNotHere
		}
		return nil, fmt.Errorf("%s: channel %s of package %s is in a JSON file; propose edits channels in YAML files only", file, channel, pkg)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	found := false
	// spliced is the file with the entries' lines inserted, when the
	// list is one whose end can be found in the text: nothing else of
	// the file is written again.
	var spliced []byte
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		docs = append(docs, &doc)
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode || value(m, "schema") == nil || value(m, "schema").Value != declcfg.SchemaChannel ||
			value(m, "package") == nil || value(m, "package").Value != pkg || value(m, "name") == nil || value(m, "name").Value != channel {
			continue
		}
		if found {
			return nil, fmt.Errorf("%s:%d: channel %s of package %s is defined twice", file, m.Line, channel, pkg)
		}
		found = true
		list := value(m, "entries")
		if list == nil || list.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%s:%d: channel %s of package %s has no list of entries", file, m.Line, channel, pkg)
		}
		if out, ok := splice(data, list, entries); ok {
			spliced = out
		}
		for _, e := range entries {
			list.Content = append(list.Content, entryNode(e))
		}
	}
	if !found {
		return nil, errNotHere
	}
	if spliced != nil {
		return spliced, nil
	}
	var out bytes.Buffer
	if bytes.HasPrefix(data, []byte("---")) {
		out.WriteString("---\n")
	}
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if compactSequences(data) {
		return compact(out.Bytes()), nil
	}
	return out.Bytes(), nil
}

// value is the value of key in the mapping m, nil when absent.
func value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// entryNode is a channel entry as opm writes one: keys in name order.
func entryNode(e declcfg.ChannelEntry) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	add := func(k, v string) {
		n.Content = append(n.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
	}
	add("name", e.Name)
	if e.Replaces != "" {
		add("replaces", e.Replaces)
	}
	if e.SkipRange != "" {
		add("skipRange", e.SkipRange)
	}
	return n
}

// jsonHolds says whether the JSON stream data holds the channel.
func jsonHolds(data []byte, pkg, channel string) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var b struct{ Schema, Package, Name string }
		if err := dec.Decode(&b); err != nil {
			return false
		}
		if b.Schema == declcfg.SchemaChannel && b.Package == pkg && b.Name == channel {
			return true
		}
	}
}

// isCatalogFile says whether the loader reads the file.
func isCatalogFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// compactSequences says whether the YAML data writes a sequence that is a
// mapping's value at the mapping's own indentation ("key:\n- item"), as
// opm and most generators do, rather than indented under its key.
func compactSequences(data []byte) bool {
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i++ {
		key := strings.TrimRight(lines[i], " ")
		if !strings.HasSuffix(key, ":") || strings.HasPrefix(strings.TrimSpace(key), "#") || strings.HasPrefix(strings.TrimSpace(key), "- ") {
			continue
		}
		next := lines[i+1]
		indent := len(key) - len(strings.TrimLeft(key, " "))
		switch {
		case strings.HasPrefix(next, strings.Repeat(" ", indent)+"- "):
			return true
		case strings.HasPrefix(next, strings.Repeat(" ", indent+2)+"- "):
			return false
		}
	}
	return false
}

// compact rewrites YAML the encoder wrote with every sequence indented
// under its key (indentation 2) so that each sequence that is a mapping's
// value sits at the key's indentation, whole blocks moving together, so
// that a file written compactly keeps its layout and a proposal's diff is
// only what it adds.
func compact(out []byte) []byte {
	type block struct{ dash, shift int }
	var stack []block
	var b strings.Builder
	prevKey, prevIndent := false, -1
	for i, line := range strings.Split(string(out), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" {
			b.WriteString(line)
			continue
		}
		indent := len(line) - len(trimmed)
		dash := trimmed == "-" || strings.HasPrefix(trimmed, "- ")
		for len(stack) > 0 && (indent < stack[len(stack)-1].dash || indent == stack[len(stack)-1].dash && !dash) {
			stack = stack[:len(stack)-1]
		}
		shift := 0
		if len(stack) > 0 {
			shift = stack[len(stack)-1].shift
		}
		if dash && prevKey && indent == prevIndent+2 && (len(stack) == 0 || stack[len(stack)-1].dash != indent) {
			shift += 2
			stack = append(stack, block{dash: indent, shift: shift})
		}
		b.WriteString(strings.Repeat(" ", indent-shift))
		b.WriteString(trimmed)
		if !strings.HasPrefix(trimmed, "#") {
			body := strings.TrimPrefix(strings.TrimPrefix(trimmed, "-"), " ")
			prevKey = strings.HasSuffix(strings.TrimRight(body, " "), ":") && !strings.HasPrefix(body, "#")
			prevIndent = indent
			if dash && prevKey {
				// "- key:" opens a mapping whose keys sit two further in.
				prevIndent = indent + 2
			}
		}
	}
	return []byte(b.String())
}

// splice inserts entries as lines after the last item of the block
// sequence list in data, at the items' own indentation, and reports
// whether it could: a flow or empty sequence, or one whose items' lines
// cannot be told apart, is left to the encoder.
func splice(data []byte, list *yaml.Node, entries []declcfg.ChannelEntry) ([]byte, bool) {
	if list.Style&yaml.FlowStyle != 0 || len(list.Content) == 0 {
		return nil, false
	}
	lines := strings.SplitAfter(string(data), "\n")
	first, last := list.Content[0], list.Content[len(list.Content)-1]
	if first.Line < 1 || first.Line > len(lines) || last.Line < first.Line || last.Line > len(lines) {
		return nil, false
	}
	// The dash of an item sits left of its content on the item's line.
	itemLine := lines[first.Line-1]
	dash := strings.LastIndex(itemLine[:min(len(itemLine), max(first.Column-1, 0))], "-")
	if dash < 0 || strings.TrimSpace(itemLine[:dash]) != "" {
		return nil, false
	}
	// The list ends before the first line, after its last item's, that is
	// neither blank nor indented past the dashes.
	end := last.Line
	for end < len(lines) {
		l := strings.TrimRight(lines[end], "\r\n")
		trimmed := strings.TrimLeft(l, " ")
		if trimmed != "" && len(l)-len(trimmed) <= dash {
			break
		}
		end++
	}
	for end > last.Line && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	var add strings.Builder
	for _, e := range entries {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{entryNode(e)}}); err != nil {
			return nil, false
		}
		_ = enc.Close()
		for _, l := range strings.SplitAfter(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			add.WriteString(strings.Repeat(" ", dash) + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	if end == len(lines) && !strings.HasSuffix(lines[end-1], "\n") {
		lines[end-1] += "\n"
	}
	out := strings.Join(lines[:end], "") + add.String() + strings.Join(lines[end:], "")
	return []byte(out), true
}
