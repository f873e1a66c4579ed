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
		for _, e := range entries {
			list.Content = append(list.Content, entryNode(e))
		}
	}
	if !found {
		return nil, errNotHere
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
