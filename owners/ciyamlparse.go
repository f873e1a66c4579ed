package owners

import "github.com/catalogbot/catalogbot/checks"

// ReadCIYAML parses one operators/<package>/ci.yaml as Load does, for a
// reader that asks about one file (the policy's notes): one grammar, one
// parser. See parseCIYAML.
func ReadCIYAML(name string, data []byte) (*CIYAML, []checks.Finding) {
	return parseCIYAML(name, data)
}
