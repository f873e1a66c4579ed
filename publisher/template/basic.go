package template

import (
	"bytes"
	"context"
	"encoding/json"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
)

// basicDoc is an olm.template.basic template: a schema and the blobs.
type basicDoc struct {
	Schema  string            `json:"schema"`
	Entries []json.RawMessage `json:"entries"`
}

// basic expands an olm.template.basic template: its entries are loaded as
// opm's loader loads blobs, and each bundle given by image alone is
// replaced by what the image renders to. opm reads the first document only.
func (t *run) basic(ctx context.Context) (*declcfg.DeclarativeConfig, error) {
	raw, ok := t.firstDocument()
	if !ok {
		return nil, nil
	}
	var doc basicDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.fail(RuleField, t.pos.key("entries"), "", "the template does not decode: %v", err)
		return nil, nil
	}
	if doc.Schema != SchemaBasic {
		t.fail(RuleSchema, t.pos.key("schema"), "", "template has unknown schema (%q), should be %q", doc.Schema, SchemaBasic)
		return nil, nil
	}
	// The entries go through the catalog loader, so that each blob is
	// typed, or kept as read, exactly as opm's loader does it.
	var stream bytes.Buffer
	for _, e := range doc.Entries {
		stream.Write(e)
		stream.WriteByte('\n')
	}
	cfg, err := fbc.LoadConfig(ctx, fstest.MapFS{"entries.json": {Data: stream.Bytes()}})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t.fail(RuleField, t.pos.key("entries"), "", "an entry does not load: %v", err)
		return nil, nil
	}

	var refs []string
	for i, b := range cfg.Bundles {
		line := t.pos.value(b.Image)
		if line == 0 {
			line = t.pos.entry(i)
		}
		if b.Image == "" || b.Package != "" || len(b.Properties) > 0 || len(b.RelatedImages) > 0 {
			t.fail(RuleField, line, b.Name, "a bundle of a basic template is given by its image alone ({schema: olm.bundle, image: REF}); this one has %s", bundleExtras(b))
			continue
		}
		refs = append(refs, b.Image)
	}
	if len(t.res.Findings) > 0 {
		return nil, nil
	}
	rendered, err := t.renderBundles(ctx, refs)
	if err != nil || len(t.res.Findings) > 0 {
		return nil, err
	}
	var bundles []declcfg.Bundle
	for _, ref := range refs {
		bundles = append(bundles, rendered[ref].cfg.Bundles...)
	}
	cfg.Bundles = bundles
	return cfg, nil
}

// bundleExtras says what a template bundle has besides its image.
func bundleExtras(b declcfg.Bundle) string {
	switch {
	case b.Image == "":
		return "no image"
	case b.Package != "":
		return "a package"
	case len(b.Properties) > 0:
		return "properties"
	default:
		return "relatedImages"
	}
}
