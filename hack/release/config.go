package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// localConfig turns the release configuration in into the one an offline
// release runs: every kos entry on base and pushing to registry (each
// repository keeps its path), and neither a GitHub release nor a
// changelog, which need GitHub and a real tag; and, with dist, its own
// dist directory, so that two releases can be compared. Everything else, the builds,
// archives, checksums and SBOMs, stays as the real release has it.
// goreleaser templates neither base_image nor repositories, so this is a
// second file rather than a variable.
func localConfig(in []byte, base, registry, dist string) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(in, &cfg); err != nil {
		return nil, err
	}
	if base != "" {
		if _, err := name.NewDigest(base); err != nil {
			return nil, fmt.Errorf("base %q: want an image pinned by digest: %w", base, err)
		}
	}
	if registry != "" {
		if _, err := name.NewRegistry(registry); err != nil {
			return nil, fmt.Errorf("registry %q: %w", registry, err)
		}
	}
	kos, _ := cfg["kos"].([]any)
	if len(kos) == 0 {
		return nil, errors.New("no kos entries: nothing builds the images")
	}
	for i, k := range kos {
		ko, ok := k.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("kos[%d] is not a mapping", i)
		}
		if base != "" {
			ko["base_image"] = base
		}
		if registry == "" {
			continue
		}
		repos, _ := ko["repositories"].([]any)
		if len(repos) == 0 {
			return nil, fmt.Errorf("kos[%d] (%v) names no repositories", i, ko["id"])
		}
		for j, r := range repos {
			s, _ := r.(string)
			repo, err := name.NewRepository(s)
			if err != nil {
				return nil, fmt.Errorf("kos[%d].repositories[%d] %q: %w", i, j, s, err)
			}
			repos[j] = registry + "/" + strings.TrimPrefix(repo.RepositoryStr(), "/")
		}
	}
	if dist != "" {
		cfg["dist"] = dist
	}
	cfg["release"] = map[string]any{"disable": "true"}
	cfg["changelog"] = map[string]any{"disable": "true"}
	return yaml.Marshal(cfg)
}

func writeLocalConfig(in, out, base, registry, dist string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	local, err := localConfig(data, base, registry, dist)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	header := fmt.Sprintf("# Written by hack/release config from %s for an offline release; do not edit.\n", in)
	return os.WriteFile(out, append([]byte(header), local...), 0o644)
}
