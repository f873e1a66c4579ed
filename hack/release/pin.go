package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

var (
	// topKey is a line that opens a top-level key of the YAML file.
	topKey = regexp.MustCompile(`^[^\s#][^:]*:`)
	// imageLine is the image key of the runs mapping, its value and any
	// comment after it.
	imageLine = regexp.MustCompile(`^(\s+)image:(\s*)(.*)$`)
)

// pinAction returns the action metadata src with runs.image set to the
// image ref, repository@sha256:..., as a docker:// image: the runner then
// pulls the released image instead of building action.Dockerfile. Only
// that line changes, so the comments and the generated blocks stay as the
// release commit's parent has them.
func pinAction(src []byte, ref string) ([]byte, error) {
	d, err := name.NewDigest(ref)
	if err != nil {
		return nil, fmt.Errorf("image %q: want repository@sha256:digest: %w", ref, err)
	}
	value := "docker://" + d.String()

	lines := bytes.SplitAfter(src, []byte("\n"))
	runs := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("runs:")) {
			runs = i
			break
		}
	}
	if runs < 0 {
		return nil, errors.New("no runs: mapping")
	}
	indent := ""
	found := -1
	for i := runs + 1; i < len(lines); i++ {
		l := string(bytes.TrimRight(lines[i], "\r\n"))
		if topKey.MatchString(l) {
			break
		}
		trimmed := strings.TrimLeft(l, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		// The first key of the block sets its indentation; an image
		// key deeper down (under env, say) is not runs.image.
		if indent == "" {
			indent = l[:len(l)-len(trimmed)]
		}
		if m := imageLine.FindStringSubmatch(l); m != nil && m[1] == indent {
			found = i
			break
		}
	}
	if found < 0 {
		return nil, fmt.Errorf("line %d: runs has no image key", runs+1)
	}
	m := imageLine.FindStringSubmatch(string(bytes.TrimRight(lines[found], "\r\n")))
	eol := lines[found][len(bytes.TrimRight(lines[found], "\r\n")):]
	lines[found] = append([]byte(m[1]+"image: "+value), eol...)
	out := bytes.Join(lines, nil)

	// The rewrite is textual; read it back to be sure it says what it
	// should where the runner looks.
	var meta struct {
		Runs struct {
			Using string `json:"using"`
			Image string `json:"image"`
		} `json:"runs"`
	}
	if err := yaml.Unmarshal(out, &meta); err != nil {
		return nil, fmt.Errorf("line %d: the rewritten file is not YAML: %w", found+1, err)
	}
	if meta.Runs.Image != value {
		return nil, fmt.Errorf("line %d: the rewrite left runs.image %q, want %q", found+1, meta.Runs.Image, value)
	}
	if meta.Runs.Using != "docker" {
		return nil, fmt.Errorf("runs.using is %q: only a docker action runs an image", meta.Runs.Using)
	}
	return out, nil
}

// pinFile rewrites the action metadata file in place.
func pinFile(file, ref string) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	out, err := pinAction(src, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, out, 0o644)
}
