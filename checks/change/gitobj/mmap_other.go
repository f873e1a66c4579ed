//go:build !unix

package gitobj

import "github.com/go-git/go-billy/v5"

// mapIndex maps nothing where there is no mmap: the index is read.
func mapIndex(billy.Filesystem, string) ([]byte, func(), bool) { return nil, nil, false }
