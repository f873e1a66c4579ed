package policy

import (
	"io/fs"

	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/publisher/publish"
)

// PublishInput translates the policy into what the publish flow takes for
// the repository tree at one commit: the source (the reference list when
// the repository has one, else the catalog roots) and the image and build
// the publish section names. The rest of the options (credentials, caches,
// the user agent) are the caller's; Image is "" when the policy publishes
// nothing. The App on a push and `catalogbot publish --repo` both use it,
// so that one commit gives one image whichever publishes it.
func (p *Policy) PublishInput(tree fs.FS) (publish.Source, publish.Options) {
	src := publish.Source{
		Tree:          tree,
		ReferenceList: p.Catalog.ReferenceListIn(tree),
		Roots:         p.Catalog.Roots,
	}
	opts := publish.Options{
		Image: p.Publish.Image,
		Build: build.Options{Base: p.Publish.Base, OPMImage: p.Publish.OPMImage, Platforms: p.Publish.Platforms},
	}
	return src, opts
}
