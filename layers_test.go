package catalogbot_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of the module (see README, Architecture). Imports point down
// only: leaves, then engines, then the review core and the publish flow,
// then the front ends, which translate between the world and the core. A
// rule written in a front end, or an engine that reaches up into the core,
// is a rule that exists twice; these tests keep the tree honest.

const module = "github.com/catalogbot/catalogbot"

// leaves hold what everything shares and decide nothing. They may import
// the finding types in checks, the strict YAML reader, and their own
// sub-packages.
var leaves = []string{
	"checks",
	"checks/change",
	"checks/yamlnode",
	"checks/registry",
	"checks/registry/egress",
	"checks/catalogyaml",
	"checks/reference",
	"checks/platform",
	"publisher/tmpdir",
}

var leafMayImport = []string{"checks", "checks/yamlnode"}

// core is the one review core and the one publish flow.
var core = []string{"policy/review/pipeline", "policy/review", "publisher/publish"}

// frontEnds translate between GitHub, a terminal or a workflow and the core.
var frontEnds = []string{"webhook", "cmd"}

// rule is a forbidden edge: a package matching from may not import (or,
// with deps, depend on at any distance) a package matching to.
type rule struct {
	why      string
	from, to func(pkg string) bool
	deps     bool
	// allow, when set, lets some edges that to matches through.
	allow func(from, to string) bool
}

// under matches the packages at or below any of the paths.
func under(paths ...string) func(string) bool {
	return func(pkg string) bool {
		for _, p := range paths {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return true
			}
		}
		return false
	}
}

// exactly matches the packages named.
func exactly(paths ...string) func(string) bool {
	return func(pkg string) bool { return slices.Contains(paths, pkg) }
}

func not(f func(string) bool) func(string) bool { return func(p string) bool { return !f(p) } }

func and(fs ...func(string) bool) func(string) bool {
	return func(p string) bool {
		for _, f := range fs {
			if !f(p) {
				return false
			}
		}
		return true
	}
}

// helperPackage matches the test helper packages (<pkg>test, like
// httptest), which only tests may import.
func helperPackage(pkg string) bool {
	last := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.HasSuffix(last, "test") && last != "test"
}

var rules = []rule{
	{
		why:   "a leaf imports only checks, yamlnode and its own sub-packages",
		from:  exactly(leaves...),
		to:    func(string) bool { return true },
		allow: leafAllowed,
	},
	{
		why:  "nothing under checks/ reaches the GitHub App or the CLI",
		from: under("checks"),
		to:   under(frontEnds...),
		deps: true,
	},
	{
		why:  "a publisher depends on no check, no review core, no policy, no OWNERS and no front end",
		from: under("publisher"),
		to:   under("checks/images", "policy/review/pipeline", "policy/review", "policy", "owners", "webhook", "cmd"),
		deps: true,
	},
	{
		why:  "an engine never imports the review core, the publish flow or a front end",
		from: and(under("checks/fbc", "checks/images", "checks/fbcreport", "checks/release", "owners", "policy", "publisher"), not(exactly(core...))),
		to:   under(append(slices.Clone(core), frontEnds...)...),
		deps: true,
	},
	{
		why:  "the App's intake runs any Processor and knows nothing of the reconciler",
		from: exactly("webhook"),
		to:   under("webhook/reconcile"),
		deps: true,
	},
	{
		why:  "only the front ends import the front ends",
		from: not(under(frontEnds...)),
		to:   under(frontEnds...),
	},
	{
		why:  "test helper packages are for tests",
		from: not(helperPackage),
		to:   helperPackage,
	},
}

// leafAllowed says whether the leaf from may import to.
func leafAllowed(from, to string) bool {
	return slices.Contains(leafMayImport, to) || strings.HasPrefix(to, from+"/")
}

// violations lists the forbidden edges of a graph: for each package, its
// direct imports and its dependencies, all inside the module and relative
// to it.
func violations(imports, deps map[string][]string) []string {
	var out []string
	for _, pkg := range sortedKeys(imports) {
		for _, r := range rules {
			if !r.from(pkg) {
				continue
			}
			edges := imports[pkg]
			if r.deps {
				edges = deps[pkg]
			}
			for _, to := range edges {
				if to == pkg || !r.to(to) {
					continue
				}
				if r.allow != nil && r.allow(pkg, to) {
					continue
				}
				out = append(out, fmt.Sprintf("%s -> %s: %s", pkg, to, r.why))
			}
		}
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestLayers fails on any import that points the wrong way in the module
// as it is, non-test code only.
func TestLayers(t *testing.T) {
	imports := goList(t, "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	deps := goList(t, "{{.ImportPath}} {{join .Deps \" \"}}", "./...")
	if len(imports) < 20 {
		t.Fatalf("go list found %d packages; the module has more", len(imports))
	}
	for _, v := range violations(imports, deps) {
		t.Error(v)
	}
}

// TestLayerRules: each rule catches the edge it forbids and lets the edges
// the layers allow through, so TestLayers cannot pass by matching nothing.
func TestLayerRules(t *testing.T) {
	tests := []struct {
		from, to string
		deps     bool // a dependency at a distance, not a direct import
		bad      bool
	}{
		{"checks/yamlnode", "checks", false, false},
		{"checks/catalogyaml", "checks/yamlnode", false, false},
		{"checks/registry", "checks/registry/internal/x", false, false},
		{"checks/catalogyaml", "checks/fbc", false, true},
		{"checks/change", "owners", false, true},
		{"checks/fbc", "webhook", true, true},
		{"checks/release", "cmd/catalogbot", true, true},
		{"publisher/build", "checks/images", false, true},
		{"publisher/assemble", "policy", true, true},
		{"publisher/publish", "owners", true, true},
		{"publisher/publish", "checks/fbc", false, false},
		{"publisher/publish", "checks/registry", false, false},
		{"owners", "policy/review", false, true},
		{"checks/images", "policy/review/pipeline", true, true},
		{"publisher/render", "publisher/publish", true, true},
		{"policy/review", "policy/review/pipeline", false, false},
		{"webhook", "policy/review", false, false},
		{"webhook", "webhook/reconcile", true, true},
		{"webhook/reconcile", "webhook", false, false},
		{"policy", "webhook/ghapi", false, true},
		{"policy/review", "webhook/githubtest", false, true},
		{"webhook", "checks/change/changetest", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.from+" to "+tt.to, func(t *testing.T) {
			imports := map[string][]string{tt.from: nil}
			deps := map[string][]string{tt.from: {tt.to}}
			if !tt.deps {
				imports[tt.from] = []string{tt.to}
			}
			got := violations(imports, deps)
			if (len(got) > 0) != tt.bad {
				t.Errorf("violations %q; want forbidden=%v", got, tt.bad)
			}
		})
	}
}

// goList runs go list over the module's non-test packages and returns, for
// each, the module's packages in the listed field, relative to the module.
func goList(t *testing.T, format string, pattern string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", format, pattern)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkg, ok := relative(fields[0])
		if !ok {
			continue
		}
		var edges []string
		for _, f := range fields[1:] {
			if rel, ok := relative(f); ok {
				edges = append(edges, rel)
			}
		}
		graph[pkg] = edges
	}
	return graph
}

func relative(pkg string) (string, bool) {
	if pkg == module {
		return "", false
	}
	return strings.CutPrefix(pkg, module+"/")
}
