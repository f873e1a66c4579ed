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
	// Catalogs that hold the same files load to the same trees: a
	// package's card is made once for all of them.
	type made struct {
		p    *fbc.Placed
		name string
	}
	cards := map[made]*storefront.Card{}
	of := func(p *fbc.Placed, name string) *storefront.Card {
		k := made{p, name}
		card, ok := cards[k]
		if !ok {
			card = storefront.Of(&p.Config, name)
			cards[k] = card
		}
		return card
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
