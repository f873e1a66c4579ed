package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestBaseIndexReproducible builds the local base twice from one CA bundle
// and once from another: the digest depends on the bundle and on nothing
// else, and every platform of the release has an image.
func TestBaseIndexReproducible(t *testing.T) {
	digest := func(ca string) string {
		t.Helper()
		idx, err := baseIndex([]byte(ca))
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var platforms []string
		for _, m := range im.Manifests {
			platforms = append(platforms, m.Platform.String())
		}
		if got := strings.Join(platforms, ","); got != "linux/amd64,linux/arm64" {
			t.Errorf("platforms %s, want linux/amd64,linux/arm64", got)
		}
		return d.String()
	}
	a, b := digest("bundle one\n"), digest("bundle one\n")
	if a != b {
		t.Errorf("two builds of the base: %s and %s", a, b)
	}
	if c := digest("bundle two\n"); c == a {
		t.Errorf("a different CA bundle gave the same base %s", c)
	}
	if _, err := baseIndex(nil); err == nil {
		t.Error("an empty CA bundle was accepted")
	}
}

// TestLocalConfig rewrites the project's .goreleaser.yaml for a loopback
// registry: every image moves to the registry on the local base, the
// GitHub release and the changelog go, and the builds stay.
func TestLocalConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	base := "127.0.0.1:5000/catalogbot-base@sha256:20a8461b2a982228b0d72e30bb9c8868a624b84e0bed58f4751d6f6da76dc283"
	out, err := localConfig(src, base, "127.0.0.1:5000", "bin/release/a")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Dist   string `json:"dist"`
		Builds []any  `json:"builds"`
		Kos    []struct {
			ID           string   `json:"id"`
			BaseImage    string   `json:"base_image"`
			Repositories []string `json:"repositories"`
		} `json:"kos"`
		Release   map[string]any `json:"release"`
		Changelog map[string]any `json:"changelog"`
	}
	if err := yaml.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Dist != "bin/release/a" || len(cfg.Builds) != 1 || cfg.Release["disable"] != "true" || cfg.Changelog["disable"] != "true" {
		t.Errorf("local config: dist %q, %d builds, release %v, changelog %v", cfg.Dist, len(cfg.Builds), cfg.Release, cfg.Changelog)
	}
	want := map[string]string{
		"catalogbot": "127.0.0.1:5000/catalogbot/catalogbot",
		"action":     "127.0.0.1:5000/catalogbot/catalogbot-action",
	}
	if len(cfg.Kos) != len(want) {
		t.Fatalf("%d kos entries, want %d", len(cfg.Kos), len(want))
	}
	for _, k := range cfg.Kos {
		if k.BaseImage != base || len(k.Repositories) != 1 || k.Repositories[0] != want[k.ID] {
			t.Errorf("kos %s: base %s, repositories %v; want %s on %s", k.ID, k.BaseImage, k.Repositories, want[k.ID], base)
		}
	}

	if _, err := localConfig(src, "127.0.0.1:5000/catalogbot-base:local", "", ""); err == nil || !strings.Contains(err.Error(), "pinned by digest") {
		t.Errorf("a base by tag: %v, want an error asking for a digest", err)
	}
}

// writeDist writes a dist directory with one binary, one archive and one
// image, as goreleaser's artifacts.json lists them.
func writeDist(t *testing.T, binary, digest string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "catalogbot")
	if err := os.WriteFile(bin, []byte(binary), 0o644); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "catalogbot.tar.gz")
	if err := os.WriteFile(arc, []byte("archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	arts := []map[string]any{
		{"name": "catalogbot", "path": bin, "goos": "linux", "goarch": "amd64", "type": "Binary"},
		{"name": "catalogbot.tar.gz", "path": arc, "type": "Archive"},
		{"name": "checksums.txt", "path": filepath.Join(dir, "checksums.txt"), "type": "Checksum"},
		{"name": "127.0.0.1:1234/catalogbot/catalogbot-action:0.0.0-local", "type": "Docker Manifest", "extra": map[string]any{"ID": "action", "Digest": digest}},
	}
	data, err := json.Marshal(arts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "artifacts.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompare(t *testing.T) {
	const d1 = "sha256:f56d0f7df1850d2a32af54f3f4f350ae0226bec5acdde0663e84e7f4ba299007"
	const d2 = "sha256:03d27b40eb05dbd20fee624e8007b3b0ac9722cc36ced3e8e0f14a9f1965a7b4"
	tests := []struct {
		name       string
		binB, digB string
		want       []string
	}{
		{"same", "bin", d1, nil},
		{"binary differs", "bin2", d1, []string{"binary catalogbot linux/amd64: sha256:"}},
		{"image differs", "bin", d2, []string{"image action catalogbot/catalogbot-action: " + d1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			err := compare(writeDist(t, "bin", d1), writeDist(t, tt.binB, tt.digB), &out)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(out.String(), "same "); n != 3 {
					t.Errorf("%d artifacts the same, want 3:\n%s", n, out.String())
				}
				return
			}
			if err == nil {
				t.Fatal("two different releases compared equal")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}

	dist := writeDist(t, "bin", d1)
	ref, err := imageOf(dist, "action")
	if want := "127.0.0.1:1234/catalogbot/catalogbot-action@" + d1; err != nil || ref != want {
		t.Errorf("imageOf: %q, %v; want %q", ref, err, want)
	}
	if _, err := imageOf(dist, "catalogbot"); err == nil {
		t.Error("imageOf found an image of a kos entry the release has not")
	}
}
