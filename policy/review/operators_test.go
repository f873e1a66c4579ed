package review

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
)

// TestOperatorsReadOnce: under the operator-pipelines conventions a
// review reads each package's ci.yaml once (the policy's catalog mapping
// and the owners check share the read), and the next review of the same
// base in the process reads none; what it says is the same each time.
func TestOperatorsReadOnce(t *testing.T) {
	base := pipelinesRepo(t)
	// A tree no other test, nor an earlier run of this one in the
	// process, has read: its new ci.yaml is read once. The others may
	// come from a record another test's tree left in the process (a
	// directory with the same tree id holds the same file).
	base["operators/zz-this-run/ci.yaml"] = fmt.Sprintf("reviewers: [alice]\n# %s %d\n", t.Name(), time.Now().UnixNano())
	files := 0
	for p := range base {
		if owners.NamesApprovers(p) && strings.HasSuffix(p, "/"+owners.CIYAMLFile) {
			files++
		}
	}
	r := changetest.NewRepo(t)
	baseSHA := r.Commit("base", base)
	r.Branch("pr", baseSHA)
	r.Commit("change", map[string]string{"catalogs/v4.22/konflux/catalog.yaml": base["catalogs/v4.21/kube-green/catalog.yaml"]})
	c, baseFS, headFS, err := change.FromGit(r.Dir, baseSHA, "pr")
	if err != nil {
		t.Fatal(err)
	}
	c.Number, c.Author = 7, "gbenhaim"
	store, err := pkgindex.Open(t.TempDir(), pkgindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	counted := &changetest.CountingFS{FS: baseFS, Match: func(name string) bool { return strings.HasSuffix(name, "/"+owners.CIYAMLFile) }}
	var first string
	for i, want := range []int64{int64(files), 0} {
		counted.Reset()
		o, err := Evaluate(context.Background(), &PR{Change: c, Base: counted, Head: headFS, EventsRead: true, Index: store})
		if err != nil {
			t.Fatal(err)
		}
		if !o.Valid() {
			t.Fatalf("policy findings: %+v", o.PolicyFindings)
		}
		switch n := counted.Reads(); {
		case i == 0 && (n < 1 || n > want):
			t.Errorf("review 1 read %d ci.yaml files, want 1 to %d (the base has %d)", n, want, files)
		case i > 0 && n != want:
			t.Errorf("review %d read %d ci.yaml files, want %d (the base has %d)", i+1, n, want, files)
		}
		out, err := json.Marshal(map[string]any{"owners": o.Owners, "report": o.Report})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = string(out)
		} else if string(out) != first {
			t.Errorf("review %d says\n%s\nthe first said\n%s", i+1, out, first)
		}
	}
	if !strings.Contains(first, "operators/kube-green/ci.yaml") {
		t.Errorf("the review names no ci.yaml's reviewers:\n%s", first)
	}
}
