package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// artifact is the part of an entry of goreleaser's dist/artifacts.json
// that a release is judged by.
type artifact struct {
	Name   string         `json:"name"`
	Path   string         `json:"path"`
	Goos   string         `json:"goos"`
	Goarch string         `json:"goarch"`
	Type   string         `json:"type"`
	Extra  map[string]any `json:"extra"`
}

func (a artifact) extra(key string) string {
	s, _ := a.Extra[key].(string)
	return s
}

func readArtifacts(dist string) ([]artifact, error) {
	file := filepath.Join(dist, "artifacts.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []artifact
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// image is an image the release pushed: the id of its kos entry, its
// reference as pushed and its digest.
type image struct {
	ID, Name, Digest string
}

// readImages lists the images of dist, in a fixed order.
func readImages(dist string) ([]image, error) {
	arts, err := readArtifacts(dist)
	if err != nil {
		return nil, err
	}
	var out []image
	for _, a := range arts {
		if a.Type != "Docker Manifest" {
			continue
		}
		d := a.extra("Digest")
		if d == "" {
			return nil, fmt.Errorf("%s: image %s has no digest", filepath.Join(dist, "artifacts.json"), a.Name)
		}
		out = append(out, image{ID: a.extra("ID"), Name: a.Name, Digest: d})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// imageOf is the image the kos entry id pushed, repository@digest: every
// tag it pushed must name the same digest.
func imageOf(dist, id string) (string, error) {
	images, err := readImages(dist)
	if err != nil {
		return "", err
	}
	var repo, digest string
	for _, im := range images {
		if im.ID != id {
			continue
		}
		ref, err := name.ParseReference(im.Name)
		if err != nil {
			return "", fmt.Errorf("image %s: %w", im.Name, err)
		}
		r := ref.Context().Name()
		if digest != "" && (digest != im.Digest || repo != r) {
			return "", fmt.Errorf("kos entry %q pushed two images: %s@%s and %s@%s", id, repo, digest, r, im.Digest)
		}
		repo, digest = r, im.Digest
	}
	if digest == "" {
		return "", fmt.Errorf("%s: no image of the kos entry %q", filepath.Join(dist, "artifacts.json"), id)
	}
	return repo + "@" + digest, nil
}

// fingerprints maps each binary, archive and image of dist to its digest,
// keyed by what names it whichever dist directory or registry the release
// wrote to: a binary by its platform, an archive by its name, an image by
// its kos entry and its repository without the registry.
func fingerprints(dist string) (map[string]string, error) {
	arts, err := readArtifacts(dist)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range arts {
		var key string
		switch a.Type {
		case "Binary":
			key = fmt.Sprintf("binary %s %s/%s", a.Name, a.Goos, a.Goarch)
		case "Archive":
			key = "archive " + a.Name
		case "Docker Manifest":
			ref, err := name.ParseReference(a.Name)
			if err != nil {
				return nil, fmt.Errorf("image %s: %w", a.Name, err)
			}
			out[fmt.Sprintf("image %s %s", a.extra("ID"), ref.Context().RepositoryStr())] = a.extra("Digest")
			continue
		default:
			continue
		}
		sum, err := fileSHA256(a.Path)
		if err != nil {
			return nil, err
		}
		out[key] = sum
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no binaries, archives or images", filepath.Join(dist, "artifacts.json"))
	}
	return out, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// compare prints the digest of every binary, archive and image of the
// dist directories a and b and fails naming those that differ or that only
// one of them has.
func compare(a, b string, w io.Writer) error {
	fa, err := fingerprints(a)
	if err != nil {
		return err
	}
	fb, err := fingerprints(b)
	if err != nil {
		return err
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var diffs []string
	for _, k := range sorted {
		switch {
		case fa[k] == "":
			diffs = append(diffs, fmt.Sprintf("%s: only in %s", k, b))
		case fb[k] == "":
			diffs = append(diffs, fmt.Sprintf("%s: only in %s", k, a))
		case fa[k] != fb[k]:
			diffs = append(diffs, fmt.Sprintf("%s: %s in %s, %s in %s", k, fa[k], a, fb[k], b))
		default:
			fmt.Fprintf(w, "same %s %s\n", fa[k], k)
		}
	}
	if len(diffs) > 0 {
		return errors.New("the releases differ:\n  " + strings.Join(diffs, "\n  "))
	}
	return nil
}
