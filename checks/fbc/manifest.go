package fbc

import (
	"bytes"
	"unicode"

	"sigs.k8s.io/yaml"
)

// checkManifest reports whether a decoded bundle object converts to JSON as
// opm requires (apimachinery's yaml.ToJSON): text that starts with '{' after
// leading space is taken as JSON without further checks, anything else must
// parse as YAML.
func checkManifest(data []byte) error {
	if bytes.HasPrefix(bytes.TrimLeftFunc(data, unicode.IsSpace), []byte("{")) {
		return nil
	}
	_, err := yaml.YAMLToJSON(data)
	return err
}
