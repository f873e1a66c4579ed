package fbcgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"sigs.k8s.io/yaml"
)

// Documents in the field order of operator-registry's declcfg structs, which
// is what `opm render -o json` writes. YAML output sorts keys anyway.

type iconDoc struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type packageDoc struct {
	Schema         string   `json:"schema"`
	Name           string   `json:"name"`
	DefaultChannel string   `json:"defaultChannel"`
	Icon           *iconDoc `json:"icon,omitempty"`
	Description    string   `json:"description,omitempty"`
}

type entryDoc struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

type channelDoc struct {
	Schema  string     `json:"schema"`
	Name    string     `json:"name"`
	Package string     `json:"package"`
	Entries []entryDoc `json:"entries"`
}

type property struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type bundleDoc struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name"`
	Package       string         `json:"package"`
	Image         string         `json:"image"`
	Properties    []property     `json:"properties"`
	RelatedImages []relatedImage `json:"relatedImages,omitempty"`
}

// emitter writes documents in one format and counts them.
type emitter struct {
	w    io.Writer
	json bool
	n    int64
	err  error
	// YAML: long base64 strings are swapped for short placeholders before
	// the JSON→YAML conversion and put back afterwards. A base64 string is
	// always written as one plain scalar, so the result is byte-identical
	// to converting the whole document (the tests check this), only much
	// faster.
	blobs [][]byte
	buf   bytes.Buffer
}

const placeholderPrefix = "ZQXPLACEHOLDER"

func (e *emitter) write(p []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
}

// b64 returns the value to store for a base64 string: the string itself in
// JSON mode, a placeholder in YAML mode.
func (e *emitter) b64(raw []byte) string {
	if e.json {
		return base64.StdEncoding.EncodeToString(raw)
	}
	e.blobs = append(e.blobs, raw)
	return placeholderPrefix + strconv.Itoa(len(e.blobs)-1) + "X"
}

func (e *emitter) emit(doc any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	if e.json {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(doc); err != nil {
		e.err = err
		return
	}
	if e.json {
		e.write(e.buf.Bytes())
		return
	}
	y, err := yaml.JSONToYAML(e.buf.Bytes())
	if err != nil {
		e.err = fmt.Errorf("convert to YAML: %w", err)
		return
	}
	e.write([]byte("---\n"))
	if len(e.blobs) == 0 {
		e.write(y)
		return
	}
	prefix := []byte(placeholderPrefix)
	for {
		i := bytes.Index(y, prefix)
		if i < 0 {
			break
		}
		j := i + len(prefix)
		k := j + bytes.IndexByte(y[j:], 'X')
		idx, err := strconv.Atoi(string(y[j:k]))
		if err != nil || idx >= len(e.blobs) {
			e.err = fmt.Errorf("fbcgen: bad placeholder %q", y[i:k+1])
			return
		}
		e.write(y[:i])
		e.writeBase64(e.blobs[idx])
		y = y[k+1:]
	}
	e.write(y)
	e.blobs = e.blobs[:0]
}

func (e *emitter) writeBase64(raw []byte) {
	var buf [3072]byte // multiple of 4; encodes 2304 input bytes
	for len(raw) > 0 {
		n := min(len(raw), 2304)
		base64.StdEncoding.Encode(buf[:], raw[:n])
		e.write(buf[:base64.StdEncoding.EncodedLen(n)])
		raw = raw[n:]
	}
}
