package assemble

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// cacheVersion changes whenever rendering changes its output, so that
// entries written by an older catalogbot are not reused.
const cacheVersion = "assemble-v1"

// cacheKey names the rendered output of image at digest. The image as
// written is part of the key because a bundle image's output carries it.
func cacheKey(image, digest string) string {
	h := sha256.Sum256([]byte(cacheVersion + "\x00" + image + "\x00" + digest))
	return hex.EncodeToString(h[:])
}

func (a *Assembler) cachePath(key string) string {
	return filepath.Join(a.opts.CacheDir, key+".yaml")
}

// cacheGet returns a cached output. An unreadable entry is a miss: the
// cache only ever saves work.
func (a *Assembler) cacheGet(key string) ([]byte, bool) {
	data, err := os.ReadFile(a.cachePath(key))
	return data, err == nil
}

// cachePut stores an output through a temporary file and a rename, so a
// reader, or a run killed halfway, never sees a partial entry.
func (a *Assembler) cachePut(key string, data []byte) error {
	f, err := os.CreateTemp(a.opts.CacheDir, "."+key+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, a.cachePath(key))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
