package fbc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/cases"
)

// meta is one decoded FBC document: its schema, package and name looked up
// case-insensitively, and the object re-encoded as canonical JSON.
//
// The decoding mirrors opm's declcfg.Meta on purpose: the JSON and YAML
// decoders call UnmarshalJSON exactly where opm's do, so both the verdicts
// and the error texts come out the same (see spec rules L13-L16).
type meta struct {
	Schema  string
	Package string
	Name    string
	// Blob is the object re-encoded with sorted keys and numbers that have
	// passed through float64, which is what opm's typed decoders see.
	Blob []byte
}

var folder = cases.Fold()

func (m *meta) UnmarshalJSON(blob []byte) error {
	obj := map[string]any{}
	if err := json.Unmarshal(blob, &obj); err != nil {
		return errors.New(prettyJSONError(blob, err))
	}
	if err := m.extractKeys(obj); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return err
	}
	m.Blob = buf.Bytes()
	return nil
}

// extractKeys rejects keys that differ only by Unicode case folding (L14) and
// requires schema, package and name to be strings when present (L15).
func (m *meta) extractKeys(obj map[string]any) error {
	byFold := make(map[string][]string, len(obj))
	for k := range obj {
		f := folder.String(k)
		byFold[f] = append(byFold[f], k)
	}
	var dups []string
	for f, keys := range byFold {
		if len(keys) > 1 {
			sort.Strings(keys)
			dups = append(dups, fmt.Sprintf("duplicate keys for key %q: %v", f, keys))
		}
	}
	if len(dups) > 0 {
		// opm joins these as an aggregate in map order; sorting makes ours stable.
		sort.Strings(dups)
		if len(dups) == 1 {
			return errors.New(dups[0])
		}
		return errors.New("[" + strings.Join(dups, ", ") + "]")
	}
	for _, f := range [...]struct {
		key string
		dst *string
	}{{"schema", &m.Schema}, {"package", &m.Package}, {"name", &m.Name}} {
		keys, ok := byFold[folder.String(f.key)]
		if !ok {
			continue
		}
		v := obj[keys[0]]
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected value for key %q to be a string, got %t: %v", keys[0], v, v)
		}
		*f.dst = s
	}
	return nil
}

// prettyJSONError renders a decode error the way opm's pretty unmarshaler
// does: the error, its offset, and the object indented with a " <==" marker
// at the offending byte.
func prettyJSONError(data []byte, err error) string {
	offset := int64(-1)
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		offset = te.Offset
		err = te
	case errors.As(err, &se):
		offset = se.Offset
		err = se
	}
	if len(data) == 0 || offset < 0 || offset > int64(len(data)) {
		return err.Error()
	}
	const marker = " <=="
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s at offset %d (indicated by%s)\n", err.Error(), offset, marker)

	var pretty []byte
	var ind bytes.Buffer
	if json.Indent(&ind, data, "", "    ") == nil {
		pretty = ind.Bytes()
	} else {
		pretty = data
	}
	if int(offset) == len(data) {
		sb.Write(pretty)
		sb.WriteString(marker)
		return sb.String()
	}
	// Walk both texts in step: every byte of data appears, in order, in the
	// indented text, so the offset maps across.
	p, at := 0, 0
	for i, b := range data {
		if i == int(offset) {
			at = p
			break
		}
		if p >= len(pretty) {
			return err.Error()
		}
		for pretty[p] != b {
			p++
			if p >= len(pretty) {
				return err.Error()
			}
		}
		p++
	}
	sb.Write(pretty[:at])
	sb.WriteString(marker + " ")
	sb.Write(pretty[at:])
	return sb.String()
}
