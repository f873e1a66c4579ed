// Package storefront is a package's card as OperatorHub shows it: the
// display name, icon and categories of the default channel's head bundle
// (its olm.csv.metadata), the description and icon of the olm.package
// blob, the default channel, each channel with its head, and what
// olm.deprecations retires. A pull request that changes a package changes
// what users see before they install it; Diff says what, field by field,
// so a reviewer sees it without rendering the catalog.
package storefront

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// Card is one package's storefront card.
type Card struct {
	Package     string
	DisplayName string
	// Icon is the media type and size, with a note when the media type
	// is not one OperatorHub shows; "" when there is no icon.
	Icon string
	// Description is the first non-empty line of the olm.package
	// description, else of the CSV's description annotation.
	Description    string
	Categories     []string
	DefaultChannel string
	// Channels are "name: head" in the catalog's order; a channel with no
	// single head shows every head.
	Channels []string
	// Deprecations are the olm.deprecations entries, as "what: message".
	Deprecations []string
}

// iconTypes are the media types OperatorHub displays.
var iconTypes = []string{"image/png", "image/jpeg", "image/gif", "image/svg+xml"}

// Of is the card of package pkg in cfg, nil when cfg has no blob of it.
// cfg must hold whole blobs (fbc.LoadPlacedWhole, fbc.LoadConfig): the
// icon and the CSV metadata are not kept otherwise.
func Of(cfg *declcfg.DeclarativeConfig, pkg string) *Card {
	var c *Card
	for _, p := range cfg.Packages {
		if p.Name != pkg {
			continue
		}
		c = &Card{Package: pkg, DefaultChannel: p.DefaultChannel, Description: firstLine(p.Description)}
		if p.Icon != nil {
			c.Icon = fmt.Sprintf("%s, %d bytes", p.Icon.MediaType, len(p.Icon.Data))
			if !slices.Contains(iconTypes, p.Icon.MediaType) {
				c.Icon += fmt.Sprintf(" (OperatorHub shows %s only)", strings.Join(iconTypes, ", "))
			}
			if len(p.Icon.Data) == 0 {
				c.Icon += " (empty)"
			}
		}
		break
	}
	if c == nil {
		return nil
	}
	var heads []string
	gb := graph.NewBuilder(cfg)
	for _, ch := range cfg.Channels {
		if ch.Package != pkg {
			continue
		}
		g, ok := gb.Build(pkg, ch.Name)
		if !ok || slices.ContainsFunc(c.Channels, func(s string) bool { return strings.HasPrefix(s, ch.Name+": ") }) {
			continue
		}
		c.Channels = append(c.Channels, ch.Name+": "+strings.Join(g.Heads, ", "))
		if ch.Name == c.DefaultChannel {
			heads = g.Heads
		}
	}
	if len(heads) == 1 {
		if meta := csvMetadata(cfg, pkg, heads[0]); meta != nil {
			c.DisplayName = meta.DisplayName
			if c.Description == "" {
				c.Description = firstLine(meta.Annotations["description"])
			}
			for _, cat := range strings.Split(meta.Annotations["categories"], ",") {
				if cat = strings.TrimSpace(cat); cat != "" {
					c.Categories = append(c.Categories, cat)
				}
			}
		}
	}
	for _, d := range cfg.Deprecations {
		if d.Package != pkg {
			continue
		}
		for _, e := range d.Entries {
			what := e.Reference.Schema
			if e.Reference.Name != "" {
				what += " " + e.Reference.Name
			}
			c.Deprecations = append(c.Deprecations, what+": "+firstLine(e.Message))
		}
	}
	return c
}

// csvMetadata is the olm.csv.metadata of bundle name of pkg, nil when it
// has none.
func csvMetadata(cfg *declcfg.DeclarativeConfig, pkg, name string) *property.CSVMetadata {
	for _, b := range cfg.Bundles {
		if b.Package != pkg || b.Name != name {
			continue
		}
		for _, p := range b.Properties {
			if p.Type != property.TypeCSVMetadata {
				continue
			}
			var m property.CSVMetadata
			if json.Unmarshal(p.Value, &m) == nil {
				return &m
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// Field is one line of a card: its name and value.
type Field struct{ Name, Value string }

// Fields are the card's lines, in the order OperatorHub shows them.
func (c *Card) Fields() []Field {
	if c == nil {
		return nil
	}
	return []Field{
		{"display name", c.DisplayName},
		{"icon", c.Icon},
		{"description", c.Description},
		{"categories", strings.Join(c.Categories, ", ")},
		{"default channel", c.DefaultChannel},
		{"channels", strings.Join(c.Channels, "; ")},
		{"deprecations", strings.Join(c.Deprecations, "; ")},
	}
}

// Change is a field that differs between two cards.
type Change struct{ Field, Before, After string }

// Diff lists the fields that differ between before and after, either of
// which may be nil (the package is new, or gone).
func Diff(before, after *Card) []Change {
	b, a := before.Fields(), after.Fields()
	n := max(len(b), len(a))
	var out []Change
	for i := range n {
		var f, fb, fa string
		if i < len(b) {
			f, fb = b[i].Name, b[i].Value
		}
		if i < len(a) {
			f, fa = a[i].Name, a[i].Value
		}
		if fb != fa {
			out = append(out, Change{f, fb, fa})
		}
	}
	return out
}
