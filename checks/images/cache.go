package images

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// facts is what the registries told about one manifest. Content addressed
// by digest does not change, so the facts about repo@digest can be kept:
// only that the image exists and what it holds, never a failure, which may
// be mended by a push.
type facts struct {
	// Key is the digest reference the facts are about, so that a cache
	// file can be checked against the name it was looked up by.
	Key       string `json:"key"`
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType,omitempty"`
	// Index is set once known whether the manifest is an index.
	Index *bool `json:"index,omitempty"`
	// Labels and Platforms are read from the content only when a check
	// needs them; the Known flags tell an empty answer from none.
	Labels         map[string]string `json:"labels,omitempty"`
	LabelsKnown    bool              `json:"labelsKnown,omitempty"`
	Platforms      []v1.Platform     `json:"platforms,omitempty"`
	PlatformsKnown bool              `json:"platformsKnown,omitempty"`
}

// cacheVersion names the on-disk layout; a change of facts starts afresh.
const cacheVersion = "images-v1"

// cache keeps facts in memory and, with a directory, on disk, one JSON file
// per digest reference. The disk is only an optimisation: errors reading or
// writing it are logged and otherwise ignored.
type cache struct {
	mu  sync.Mutex
	mem map[string]facts
	dir string
	log *slog.Logger
}

func newCache(dir string, log *slog.Logger) *cache {
	if dir != "" {
		dir = filepath.Join(dir, cacheVersion)
	}
	return &cache{mem: map[string]facts{}, dir: dir, log: log}
}

func (c *cache) file(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(c.dir, hex.EncodeToString(sum[:])+".json")
}

func (c *cache) get(key string) (facts, bool) {
	c.mu.Lock()
	f, ok := c.mem[key]
	c.mu.Unlock()
	if ok || c.dir == "" {
		return f, ok
	}
	data, err := os.ReadFile(c.file(key))
	if err != nil {
		if !os.IsNotExist(err) {
			c.log.Warn("image cache unreadable", "error", err)
		}
		return facts{}, false
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Key != key || f.Digest == "" {
		c.log.Warn("image cache entry ignored", "file", c.file(key))
		return facts{}, false
	}
	c.mu.Lock()
	c.mem[key] = f
	c.mu.Unlock()
	return f, true
}

func (c *cache) put(f facts) {
	c.mu.Lock()
	c.mem[f.Key] = f
	c.mu.Unlock()
	if c.dir == "" {
		return
	}
	if err := c.write(f); err != nil {
		c.log.Warn("image cache not written", "error", err)
	}
}

// write replaces the entry atomically, so that concurrent runs sharing a
// cache directory never read half a file.
func (c *cache) write(f facts) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.file(f.Key))
}
