package release

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

func placed(t *testing.T, catalog string) *fbc.Placed {
	t.Helper()
	p, err := fbc.LoadPlaced(context.Background(), fstest.MapFS{"foo/catalog.yaml": {Data: []byte(catalog)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Unread) > 0 {
		t.Fatalf("the fixture does not load: %v", p.Unread)
	}
	return p
}

const bidi = "\u202e"

// TestNamesAreShownSafely: a name from the catalog with a bidirectional
// override reaches the finding escaped, wherever the finding names it.
func TestNamesAreShownSafely(t *testing.T) {
	channel := func(name string) string {
		return "---\nschema: olm.channel\npackage: foo\nname: \"" + name + "\"\nentries:\n  - name: foo.v1\n"
	}
	bundle := "---\nschema: olm.bundle\npackage: foo\nname: foo.v1\nimage: quay.io/x/foo:v1\nproperties:\n  - type: olm.package\n    value:\n      packageName: foo\n      version: 1.0.0-" + "x\n"
	pkg := "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n"
	base := placed(t, pkg+channel("stable")+channel("st"+bidi+"able")+bundle)
	head := placed(t, pkg+channel("stable")+bundle)
	got := Check(base, head, Options{})
	if len(got) != 1 || got[0].Rule != RuleChannelRemoved {
		t.Fatalf("findings %+v, want one %s", got, RuleChannelRemoved)
	}
	msg := got[0].Message
	if strings.Contains(msg, bidi) {
		t.Errorf("the message holds the override character: %q", msg)
	}
	if !strings.Contains(msg, `1.0.0-x in "st\u202eable"`) || !strings.Contains(msg, `channel "st\u202eable"`) {
		t.Errorf("the message does not name the channel escaped: %s", msg)
	}
	if !strings.Contains(msg, "olm.deprecations") {
		t.Errorf("the message does not point to olm.deprecations: %s", msg)
	}
}

// TestPrunable: Options.Prunable leaves a channel out.
func TestPrunable(t *testing.T) {
	base := placed(t, "---\nschema: olm.channel\npackage: foo\nname: candidate\nentries:\n  - name: foo.v1\n")
	head := placed(t, "")
	if got := Check(base, head, Options{}); len(got) != 1 {
		t.Fatalf("without prunable channels: %+v, want one finding", got)
	}
	if got := Check(base, head, Options{Prunable: func(c string) bool { return c == "candidate" }}); len(got) != 0 {
		t.Errorf("a prunable channel was judged: %+v", got)
	}
}
