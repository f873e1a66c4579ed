package pipeline

import (
	"context"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/storefront"
)

// Card is the storefront card (package storefront) of one package the
// change touches, in one catalog root, on the base and on the head; nil
// where the side has no olm.package blob of it.
type Card struct {
	Root, Package string
	Base, Head    *storefront.Card
}

// Cards are the storefront cards of every package the change touches, for
// the summary: what users see of each before they install it. They read
// the packages as OLMv1Readiness loaded them.
func Cards(ctx context.Context, in *Input) ([]Card, error) {
	cats, err := in.touched.load(ctx, in)
	if err != nil {
		return nil, err
	}
	var out []Card
	// A package's card is made once a tree (see perTree).
	type made struct {
		p    *fbc.Placed
		name string
	}
	cards := map[made]*storefront.Card{}
	of := func(p *fbc.Placed, name string) *storefront.Card {
		return perTree(cards, made{p, name}, func() *storefront.Card { return storefront.Of(&p.Config, name) })
	}
	for _, c := range cats {
		for _, name := range c.pkgs {
			card := Card{Root: c.root, Package: name, Head: of(c.head, name)}
			if c.base != nil {
				card.Base = of(c.base, name)
			}
			if card.Base != nil || card.Head != nil {
				out = append(out, card)
			}
		}
	}
	return out, nil
}
