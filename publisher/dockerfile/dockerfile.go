// Package dockerfile writes the Dockerfile that builds a File-Based Catalog
// image, byte for byte as `opm generate dockerfile` writes it.
//
// Teams that build their catalog image with docker or buildah keep using the
// Dockerfile opm would have given them, so switching tools changes nothing in
// their build: same stages, same cache pre-population, same labels.
package dockerfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// DefaultImage is opm's default for both the base and the builder image:
// it carries /bin/opm, which the builder stage runs to pre-populate the
// serve cache and the final stage runs as its entrypoint.
const DefaultImage = "quay.io/operator-framework/opm:latest"

// ConfigsLabel tells opm serve, catalogd and opm render where the catalog
// lives inside the image.
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// scratch is the one base image that has no opm binary. The final stage then
// cannot serve, and clusters must extract the catalog instead; the builder
// stage always needs opm.
const scratch = "scratch"

// The template reproduces opm's (alpha/action/generate_dockerfile.go since
// v1.44.0) including its whitespace: there is no blank line between the
// second FROM and the comment under it, and the file ends with a newline.
var tmpl = template.Must(template.New("Dockerfile").Parse(`# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM {{.Builder}} as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD {{.Dir}} /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM {{.Base}}

{{- if ne .Base "` + scratch + `" }}
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
{{- else }}
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache
{{- end }}

COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL ` + ConfigsLabel + `=/configs
{{- if .Labels }}

# Set other custom labels
{{- range $key, $value := .Labels }}
LABEL "{{ $key }}"="{{ $value }}"
{{- end }}
{{- end }}
`))

// Generate returns the Dockerfile that builds the catalog in dir. The
// Dockerfile is meant to sit next to dir (see dockerfilePath), so only dir's base name
// appears in it. Labels are written sorted by key, quoted but not escaped,
// as opm writes them.
func Generate(dir, baseImage, builderImage string, labels map[string]string) ([]byte, error) {
	// Checked first, as opm does: the builder stage runs opm, so a scratch
	// builder could never produce the cache.
	if builderImage == scratch {
		return nil, fmt.Errorf("invalid builder image: %q", builderImage)
	}
	if baseImage == "" {
		return nil, fmt.Errorf("base image is unset")
	}
	_, name := filepath.Split(filepath.Clean(dir))
	if name == "" {
		return nil, fmt.Errorf("index directory is unset")
	}
	var buf bytes.Buffer
	err := tmpl.Execute(&buf, struct {
		Base, Builder, Dir string
		Labels             map[string]string
	}{baseImage, builderImage, name, labels})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// dockerfilePath is where the Dockerfile for dir goes: beside dir, named after it, so
// `catalog/` gets `catalog.Dockerfile` and the ADD line can name the
// directory relative to the build context.
func dockerfilePath(dir string) string {
	parent, name := filepath.Split(filepath.Clean(dir))
	return filepath.Join(parent, name+".Dockerfile")
}

// ParseLabels turns key=value strings into labels. Later duplicates of a key
// win; a string without '=' is an error naming it.
func ParseLabels(kvs []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("invalid label %q", kv)
		}
		labels[k] = v
	}
	return labels, nil
}

// Write generates the Dockerfile for dir and creates it at dockerfilePath(dir). Like
// opm it never overwrites: an existing file is an error wrapping
// fs.ErrExist, and so is one that appears while generating. It returns the
// path written.
func Write(dir, baseImage, builderImage string, labels map[string]string) (string, error) {
	content, err := Generate(dir, baseImage, builderImage, labels)
	if err != nil {
		return "", err
	}
	path := dockerfilePath(dir)
	if _, err := os.Stat(path); err == nil {
		return "", fmt.Errorf("path %q: %w", path, os.ErrExist)
	} else if !os.IsNotExist(err) {
		return "", err
	}
	clean := filepath.Clean(dir)
	if info, err := os.Stat(clean); err != nil {
		return "", err
	} else if !info.IsDir() {
		return "", fmt.Errorf("provided root path %q is not a directory", clean)
	}
	// O_EXCL closes the window between the check above and the write: a
	// Dockerfile someone else created meanwhile is still never clobbered.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if err != nil {
		if os.IsExist(err) {
			return "", fmt.Errorf("path %q: %w", path, os.ErrExist)
		}
		return "", err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}
