package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// decodeFirst decodes the first document of a bundle file into v, the way
// opm's bundle parser does (k8s.io/apimachinery's YAMLOrJSONDecoder with a
// 30-byte sniff buffer): a file whose first non-space byte within 30 bytes is
// '{' is tried as JSON first and, if that fails, read again as YAML from the
// start; anything else is YAML. Only the first document counts.
//
// The fallback matters for parity: a JSON annotations file with a number
// where a string belongs fails as JSON but succeeds as YAML, because the
// YAML path converts scalars to the target field's type.
func decodeFirst(data []byte, v any) error {
	sniff := data[:min(len(data), 30)]
	if !bytes.HasPrefix(bytes.TrimLeftFunc(sniff, unicode.IsSpace), []byte("{")) {
		return decodeYAMLFirst(data, v)
	}
	jsonErr := json.NewDecoder(bytes.NewReader(data)).Decode(v)
	if jsonErr == nil || errors.Is(jsonErr, io.EOF) {
		return jsonErr
	}
	rest, ok := skipLineSpace(data)
	if !ok {
		return jsonErr
	}
	if err := decodeYAMLFirst(rest, v); err != nil {
		return jsonErr
	}
	return nil
}

// skipLineSpace drops leading white space up to and including the first
// newline, as the apimachinery decoder does before its YAML retry.
func skipLineSpace(data []byte) ([]byte, bool) {
	i := 0
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError {
			return nil, false
		}
		if !unicode.IsSpace(r) {
			return data[i:], true
		}
		i += size
		if r == '\n' {
			return data[i:], true
		}
	}
	return nil, false
}

// decodeYAMLFirst reads the first YAML document (split on "---" lines as
// apimachinery's YAMLReader splits them) and decodes it with sigs.k8s.io/yaml.
func decodeYAMLFirst(data []byte, v any) error {
	doc, err := firstYAMLDocument(data)
	if err != nil {
		return err
	}
	if len(doc) == 0 {
		return io.EOF
	}
	return yaml.Unmarshal(doc, v)
}

func firstYAMLDocument(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		if bytes.HasPrefix(line, []byte("---")) {
			trimmed := strings.TrimSpace(string(line[3:]))
			if trimmed != "" && trimmed[0] != '#' {
				return nil, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if buf.Len() != 0 {
				return buf.Bytes(), nil
			}
		}
		buf.Write(line)
	}
	return buf.Bytes(), nil
}

// object is a manifest decoded as Kubernetes' unstructured.Unstructured
// decodes one: a JSON object whose integers that fit int64 stay int64 and
// whose other numbers become float64. Re-encoding it with encoding/json then
// gives the bytes opm stores in olm.bundle.object: sorted keys, compact, HTML
// escaped, "1.0" written as "1".
type object map[string]any

// UnmarshalJSON keeps sigs.k8s.io/yaml from converting YAML scalars by
// target type: like unstructured.Unstructured, an object takes the plain
// YAML-to-JSON result.
func (o *object) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		c, err := convertNumbers(v)
		if err != nil {
			return err
		}
		m[k] = c
	}
	*o = m
	return nil
}

func convertNumbers(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, fmt.Errorf("json: cannot unmarshal number %s into Go value of type float64", v)
		}
		return f, nil
	case map[string]any:
		for k, e := range v {
			c, err := convertNumbers(e)
			if err != nil {
				return nil, err
			}
			v[k] = c
		}
	case []any:
		for i, e := range v {
			c, err := convertNumbers(e)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
	}
	return v, nil
}

// kind is the object's kind, "" when absent or not a string.
func (o object) kind() string {
	s, _ := o["kind"].(string)
	return s
}

// apiVersion is the object's apiVersion, "" when absent or not a string.
func (o object) apiVersion() string {
	s, _ := o["apiVersion"].(string)
	return s
}

// decodeManifest decodes the first document of a manifest file. As with
// unstructured.Unstructured, an object without a kind is an error, so the
// parser skips the file.
func decodeManifest(data []byte) (object, error) {
	var o object
	if err := decodeFirst(data, &o); err != nil {
		return nil, err
	}
	if o.kind() == "" {
		//lint:ignore ST1005 opm's message, which render reproduces
		return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", bytes.TrimSpace(data))
	}
	return o, nil
}
