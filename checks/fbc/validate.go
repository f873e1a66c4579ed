package fbc

import (
	"context"
	"io/fs"
)

// validate is a placeholder until the loader lands.
func validate(ctx context.Context, fsys fs.FS, opts Options) (*Result, error) {
	return &Result{}, nil
}
