package review

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// TestOLMv1Section: under olmv1: report (the default) a change that makes
// foo installable by OLM v1 says so, before and after, in the status
// comment and the text output, and adds no check; a change that leaves
// the readiness as it was adds no section. Either way foo's storefront
// card is one line, since it does not change.
func TestOLMv1Section(t *testing.T) {
	ready := strings.Replace(fbctest.Foo, "      version: 1.0.0\n",
		"      version: 1.0.0\n  - type: olm.csv.metadata\n    value: {installModes: [{type: AllNamespaces, supported: true}]}\n", 1)
	for _, tc := range []struct {
		name, head string
		want       bool
	}{
		{"made installable", ready, true},
		{"as it was", fbctest.Foo + "# a comment\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := repo(), repo()
			path := "catalog/foo/catalog.yaml"
			head[path] = &fstest.MapFile{Data: []byte(tc.head)}
			c := &change.Change{Number: 7, Author: "alice", BaseSHA: baseSHA, HeadSHA: headSHA,
				Files: []change.File{{Path: path, Status: change.Modified}}}
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := o.Report.Conclusions()[pipeline.OLMv1Name]; ok {
				t.Error("an olmv1 check under olmv1: report")
			}
			d := o.Decide(Forge{Local: true})
			var text strings.Builder
			if err := o.WriteText(&text, d, true); err != nil {
				t.Fatal(err)
			}
			comment := o.StatusComment(d)
			line := "foo in catalog: installable (was: not installable: V1 carries neither olm.bundle.object nor olm.csv.metadata)"
			if got := strings.Contains(text.String(), "olm v1 readiness:") && strings.Contains(text.String(), line); got != tc.want {
				t.Errorf("section in the text: %v, want %v\n%s", got, tc.want, text.String())
			}
			if got := strings.Contains(comment, "#### OLM v1 readiness") && strings.Contains(comment, "foo in catalog: installable (was: not installable: V1 carries neither olm.bundle.object nor olm.csv.metadata)"); got != tc.want {
				t.Errorf("section in the status comment: %v, want %v\n%s", got, tc.want, comment)
			}
			// The card does not change: one line, whatever the readiness.
			if !strings.Contains(comment, "#### Storefront") || !strings.Contains(comment, "- foo in catalog: card unchanged\n") ||
				!strings.Contains(text.String(), "  foo in catalog: card unchanged\n") {
				t.Errorf("no one-line storefront card:\n%s\n%s", comment, text.String())
			}
		})
	}
}
