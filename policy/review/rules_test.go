package review

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestRuleIDs: every rule id follows the one documented scheme (a family
// prefix and a number), is unique across the engines, has a name and a
// description, and its family is in docs/rules.md.
func TestRuleIDs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	scheme := regexp.MustCompile(`^(L|C|M|P|OW|CY|IM|RF|PK|LM|TP|RG|V|BT)([0-9]+)$`)
	seen := map[string]string{}
	families := map[string]bool{}
	for _, r := range Rules() {
		m := scheme.FindStringSubmatch(r.ID)
		if m == nil {
			t.Errorf("rule %q (%s) does not follow the scheme FAMILY+NUMBER of docs/rules.md", r.ID, r.Name)
			continue
		}
		families[m[1]] = true
		if prev, dup := seen[r.ID]; dup {
			t.Errorf("rule id %s is used twice: %s and %s", r.ID, prev, r.Name)
		}
		seen[r.ID] = r.Name
		if r.Name == "" || r.Description == "" {
			t.Errorf("rule %s has no name or no description", r.ID)
		}
	}
	for f := range families {
		if !strings.Contains(string(doc), "| `"+f+"` |") {
			t.Errorf("family %s is not in docs/rules.md's table", f)
		}
	}
	if len(families) != 14 {
		t.Errorf("%d rule families in use, want the 14 the scheme names", len(families))
	}
}
