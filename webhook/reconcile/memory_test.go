package reconcile

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/webhook/membudget"
)

// TestTooLargeForMemory: a pull request whose check would read more than
// the service's whole memory budget gets a failed run that says so and
// names the file, without a verdict on the catalog; one that fits is
// checked, and gives back what it reserved.
func TestTooLargeForMemory(t *testing.T) {
	budget := membudget.New(membudget.Options{Size: 4000})
	e := newEnvWith(t, catalogRepo(""), func(o *AppOptions) { o.Memory = budget })
	big := e.openPR("alice", "big", map[string]string{"catalog/foo/big.json": strings.Repeat(" ", 5000)})
	e.process(big, "opened")
	r := e.run(big.HeadSHA(), CheckRunName)
	if r.Conclusion != "failure" || r.Title != "Too large for this service's memory" ||
		!strings.Contains(r.Summary, "`catalog/foo/big.json` (head, 5000 bytes)") || !strings.Contains(r.Summary, "Nothing was judged invalid") {
		t.Errorf("run: %s %q\n%s", r.Conclusion, r.Title, r.Summary)
	}

	small := e.openPR("alice", "small", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(small, "opened")
	if r := e.run(small.HeadSHA(), CheckRunName); r.Title == "Too large for this service's memory" || r.Conclusion == "" {
		t.Errorf("a change that fits: %s %q", r.Conclusion, r.Title)
	}
	if budget.InUse() != 0 {
		t.Errorf("%d bytes still reserved after the checks", budget.InUse())
	}
}
