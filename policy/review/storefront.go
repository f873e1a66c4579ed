package review

import (
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/storefront"
)

// cardsSection is the summary's storefront section: for each touched
// package, the fields of its card that the change alters, before and
// after; an unchanged card is one line.
func (o *Outcome) cardsSection() string {
	if len(o.Cards) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n#### Storefront\n\nEach touched package's card as OperatorHub shows it (the default channel's head, the `olm.package` blob), where the change alters it.\n\n")
	for _, c := range o.Cards {
		changes := storefront.Diff(c.Base, c.Head)
		if len(changes) == 0 {
			fmt.Fprintf(&b, "- %s in %s: card unchanged\n", checks.MarkdownText(c.Package), checks.MarkdownText(c.Root))
			continue
		}
		fmt.Fprintf(&b, "- %s in %s:\n", checks.MarkdownText(c.Package), checks.MarkdownText(c.Root))
		for _, ch := range changes {
			fmt.Fprintf(&b, "  - %s: %s → %s\n", ch.Field, shownValue(ch.Before, checks.MarkdownText), shownValue(ch.After, checks.MarkdownText))
		}
	}
	return b.String()
}

// writeCardsText is cardsSection for a terminal.
func (o *Outcome) writeCardsText(b *strings.Builder) {
	if len(o.Cards) == 0 {
		return
	}
	b.WriteString("storefront: each touched package's card as OperatorHub shows it\n")
	for _, c := range o.Cards {
		changes := storefront.Diff(c.Base, c.Head)
		if len(changes) == 0 {
			fmt.Fprintf(b, "  %s in %s: card unchanged\n", checks.VisibleLine(c.Package), checks.VisibleLine(c.Root))
			continue
		}
		fmt.Fprintf(b, "  %s in %s:\n", checks.VisibleLine(c.Package), checks.VisibleLine(c.Root))
		for _, ch := range changes {
			fmt.Fprintf(b, "    %s: %s -> %s\n", ch.Field, shownValue(ch.Before, checks.VisibleLine), shownValue(ch.After, checks.VisibleLine))
		}
	}
}

// shownValue is a card field's value as a section shows it, "(none)"
// when it is empty.
func shownValue(s string, show func(string) string) string {
	if s == "" {
		return "(none)"
	}
	return show(s)
}
