package catalogbot_test

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of the module (see docs/architecture.md). Imports point down
// only, and the top-level directories show it:
//
//	cmd -> webhook -> policy -> {owners, publisher} -> checks
//
// A rule written in a front end, or an engine that reaches up into the
// core, is a rule that exists twice; these tests keep the tree honest.

const module = "github.com/catalogbot/catalogbot"

// tiers ranks the top-level directories: a package may import from its own
// directory or from one of a lower tier, never from its own tier or above.
var tiers = map[string]int{
	"checks":    0,
	"owners":    1,
	"publisher": 1,
	"policy":    2,
	"webhook":   3,
	"cmd":       4,
	// hack holds the project's own tools (the release's, hack/release):
	// above the product, which never imports them.
	"hack": 5,
}

// engines are the checks/ packages that decide something about a catalog.
// Every other package under checks/ is a leaf: it decides nothing and may
// import only the finding types, the strict YAML reader and its own
// sub-packages.
var engines = []string{"checks/fbc", "checks/images", "checks/release", "checks/fbcreport", "checks/olmv1", "checks/storefront", "checks/truth"}

// top is the top-level directory of a package.
func top(pkg string) string {
	dir, _, _ := strings.Cut(pkg, "/")
	return dir
}

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

func anything(string) bool { return true }

// helperPackage matches the test helper packages (<pkg>test, like
// httptest), which only tests may import.
func helperPackage(pkg string) bool {
	last := pkg[strings.LastIndex(pkg, "/")+1:]
	return strings.HasSuffix(last, "test") && last != "test"
}

// runsUp says whether an import from one package to another crosses from a
// top-level directory into one of the same tier or above.
func runsUp(from, to string) bool {
	f, t := top(from), top(to)
	return f != t && tiers[f] <= tiers[t]
}

var rules = []rule{
	{
		why:   "imports run down the directories: cmd -> webhook -> policy -> {owners, publisher} -> checks",
		from:  anything,
		to:    anything,
		allow: func(from, to string) bool { return !runsUp(from, to) },
	},
	{
		why:  "a leaf under checks/ imports only checks, checks/yamlnode and its own sub-packages",
		from: and(under("checks"), not(under(engines...)), not(helperPackage)),
		to:   anything,
		allow: func(from, to string) bool {
			return to == "checks" || to == "checks/yamlnode" || strings.HasPrefix(to, from+"/")
		},
	},
	{
		why:  "the policy a review applies knows nothing of the review core",
		from: exactly("policy"),
		to:   under("policy/review"),
		deps: true,
	},
	{
		why:  "the publisher's engines know nothing of the publish flow",
		from: and(under("publisher"), not(under("publisher/publish"))),
		to:   under("publisher/publish"),
		deps: true,
	},
	{
		// The signing stack (sigstore, its KMS providers) is hundreds of
		// packages; reading a policy or a delivery needs none of it, and
		// a key's name is told from a file's by keyref alone.
		why:  "the policy reader and the App's intake do not link the signing stack",
		from: exactly("policy", "webhook"),
		to:   and(under("publisher/sign", "publisher/publish"), not(exactly("publisher/sign/keyref"))),
		deps: true,
	},
	{
		why:  "the App's intake runs any Processor and knows nothing of the reconciler",
		from: exactly("webhook"),
		to:   under("webhook/reconcile"),
		deps: true,
	},
	{
		why:  "test helper packages are for tests",
		from: not(helperPackage),
		to:   helperPackage,
	},
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

// TestDirectoryEdges counts the imports between top-level directories that
// run back up, test code included: the directories themselves must show
// the layers, so the count is 0 and a new edge names itself.
func TestDirectoryEdges(t *testing.T) {
	imports := goList(t, "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	for _, dir := range []string{"checks", "owners", "policy", "publisher", "webhook", "cmd"} {
		if _, ok := tiers[dir]; !ok {
			t.Fatalf("directory %s has no tier", dir)
		}
	}
	up := map[string]int{}
	for pkg, edges := range imports {
		if _, ok := tiers[top(pkg)]; !ok && strings.Contains(pkg, "/") {
			t.Errorf("package %s is in a top-level directory with no tier", pkg)
		}
		for _, to := range edges {
			if runsUp(pkg, to) {
				up[top(pkg)+" -> "+top(to)]++
			}
		}
	}
	for _, edge := range slices.Sorted(maps.Keys(up)) {
		t.Errorf("%s: %d imports run back up", edge, up[edge])
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
		{"checks/registry", "checks/registry/timeout", false, false},
		{"checks/catalogyaml", "checks/fbc", false, true},
		{"checks/change", "owners", false, true},
		{"checks/fbc", "webhook", false, true},
		{"checks/images", "checks/fbc", false, false},
		{"checks/images", "policy/review/pipeline", false, true},
		{"owners", "checks/change", false, false},
		{"owners", "publisher/render", false, true},
		{"publisher/render", "owners", false, true},
		{"publisher/build", "checks/registry", false, false},
		{"publisher/assemble", "policy", false, true},
		{"publisher/render", "publisher/publish", true, true},
		{"publisher/publish", "publisher/render", false, false},
		{"policy", "owners", false, false},
		{"policy", "policy/review", true, true},
		{"policy", "publisher/sign", true, true},
		{"webhook", "publisher/sign", true, true},
		{"webhook", "publisher/sign/keyref", false, false},
		{"policy/publishing", "publisher/sign", false, false},
		{"policy/review", "policy/review/pipeline", false, false},
		{"policy/review", "publisher/render", false, false},
		{"policy/review", "cmd/catalogbot", false, true},
		{"policy", "webhook/ghapi", false, true},
		{"webhook", "policy/review", false, false},
		{"webhook", "webhook/reconcile", true, true},
		{"webhook/reconcile", "webhook", false, false},
		{"cmd/catalogbot", "webhook/reconcile", false, false},
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
