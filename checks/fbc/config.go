package fbc

import (
	"context"
	"io/fs"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// LoadConfig loads the catalog rooted at fsys whole, as opm's loader
// (declcfg.LoadFS) does for opm render: every blob typed or kept as read,
// in load order, with no validation beyond loading. It fails with the error
// opm's loader would report first.
func LoadConfig(ctx context.Context, fsys fs.FS) (*declcfg.DeclarativeConfig, error) {
	cat, err := load(ctx, fsys, Options{full: true, owned: true})
	if err != nil {
		return nil, err
	}
	if len(cat.walkErrs) > 0 {
		return nil, cat.walkErrs[0].err
	}
	out := &declcfg.DeclarativeConfig{}
	for _, f := range cat.files {
		if len(f.errs) > 0 {
			return nil, f.errs[0].err
		}
		out.Append(f.config)
	}
	return out, nil
}
