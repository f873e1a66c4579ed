package propose

import (
	"io/fs"
	"testing/fstest"
)

// singleFile is a tree of one catalog file, so that the loader reads the
// package's files and nothing else of a large catalog.
type singleFile struct {
	name string
	data []byte
}

func (s singleFile) Open(name string) (fs.File, error) {
	return fstest.MapFS{s.name: {Data: s.data}}.Open(name)
}
