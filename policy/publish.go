package policy

import (
	"io/fs"

	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// PublishTarget is one catalog's publication: what the publish flow takes
// for it.
type PublishTarget struct {
	// Catalog is the catalog's name, "" for the one catalog of a policy
	// with no catalogs list.
	Catalog string
	Source  publish.Source
	// Options hold the image and the build the policy names; the rest
	// (credentials, caches, the user agent) are the caller's. Image is ""
	// when the catalog is not published.
	Options publish.Options
}

// PublishInputs translates the policy into what the publish flow takes for
// the repository tree at one commit, one entry per catalog: the reference
// list when the repository has one (one catalog, assembled from it), else
// each catalog's roots with its publish target. The roots are the ones the
// pull request check validated as that catalog (see Targets), so what is
// published is what was checked. The App on a push and `catalogbot publish
// --repo` both use it, so that one commit gives the same images whichever
// publishes them.
func (p *Policy) PublishInputs(tree fs.FS) ([]PublishTarget, error) {
	opts := func(image string) publish.Options {
		return publish.Options{
			Image: image,
			Build: build.Options{Base: p.Publish.Base, OPMImage: p.Publish.OPMImage, Platforms: p.Publish.Platforms},
		}
	}
	if list := p.Catalog.ReferenceListIn(tree); list != "" {
		return []PublishTarget{{
			Source:  publish.Source{Tree: tree, ReferenceList: list},
			Options: opts(p.Publish.Image),
		}}, nil
	}
	targets, err := p.Targets(tree)
	if err != nil {
		return nil, err
	}
	out := make([]PublishTarget, 0, len(targets))
	for _, t := range targets {
		out = append(out, PublishTarget{
			Catalog: t.Name,
			Source:  publish.Source{Tree: tree, Roots: t.Roots},
			Options: opts(t.Image),
		})
	}
	return out, nil
}
