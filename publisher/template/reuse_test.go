package template_test

import (
	"context"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// TestReuse: bundles pinned by digest are rendered once per Cache and
// taken from Known when it has them; tags are always pulled, and a known
// bundle whose image is not the reference is not taken.
func TestReuse(t *testing.T) {
	host := registrytest.New(t).Host
	ref := func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }
	pinned := templatetest.Push(t, ref, true, templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"})
	tagged := templatetest.Push(t, ref, false, templatetest.Bundle{Package: "widget", Version: "1.2.0"})
	text := []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: " + pinned[0] + "\n  - image: " + pinned[1] + "\n  - image: " + tagged[0] + "\n")

	cache := template.NewCache()
	r := renderer(t, "")
	first, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: r, Cache: cache})
	if err != nil || first.Config == nil {
		t.Fatal(err, first.Findings)
	}
	second, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: r, Cache: cache})
	if err != nil || second.Config == nil {
		t.Fatal(err, second.Findings)
	}
	if first.Pulled != 3 || first.Reused != 0 || second.Pulled != 1 || second.Reused != 2 {
		t.Errorf("pulled/reused: first %d/%d, second %d/%d; want 3/0, 1/2", first.Pulled, first.Reused, second.Pulled, second.Reused)
	}
	if string(write(t, first.Config, host)) != string(write(t, second.Config, host)) {
		t.Error("the cached rendering differs")
	}
	// Another migration level is another rendering.
	migrated, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, render.MigrateBundleObjectToMeta), Cache: cache})
	if err != nil || migrated.Pulled != 3 {
		t.Errorf("migrated: pulled %d, err %v; want 3", migrated.Pulled, err)
	}

	byImage := map[string]declcfg.Bundle{}
	for _, b := range first.Config.Bundles {
		byImage[b.Image] = b
	}
	known := func(ref string) (template.Known, bool) {
		b, ok := byImage[ref]
		return template.Known{Bundle: b, CSV: ""}, ok
	}
	res, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: r, Known: known})
	if err != nil || res.Config == nil {
		t.Fatal(err, res.Findings)
	}
	// The head of the default channel is 1.2.0 by tag: pulled. The CSV of
	// a known bundle is only needed for the head.
	if res.Pulled != 1 || res.Reused != 2 {
		t.Errorf("with Known: pulled %d, reused %d; want 1, 2", res.Pulled, res.Reused)
	}
	// Known bundles without their CSV: the default channel's head is
	// rendered after all, for the package's description and icon.
	pinnedOnly := []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: " + pinned[0] + "\n  - image: " + pinned[1] + "\n")
	res, err = template.Render(context.Background(), "t.yaml", pinnedOnly, template.Options{Renderer: r, Known: known})
	if err != nil || res.Config == nil || res.Pulled != 1 || res.Reused != 2 {
		t.Errorf("known bundles without a CSV: pulled %d, reused %d, err %v; want 1, 2", res.Pulled, res.Reused, err)
	}

	lying := func(ref string) (template.Known, bool) {
		b, ok := byImage[pinned[0]]
		return template.Known{Bundle: b}, ok && strings.Contains(ref, "@sha256:")
	}
	res, err = template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: r, Known: lying})
	if err != nil || res.Reused != 1 || res.Pulled != 2 {
		t.Errorf("a known bundle of another image: pulled %d, reused %d, err %v; want 2, 1", res.Pulled, res.Reused, err)
	}
}

// TestMaxPulls: a template that needs more pulls than allowed is a finding
// and pulls nothing; bundles taken from Known do not count.
func TestMaxPulls(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"})
	text := []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: " + refs[0] + "\n  - image: " + refs[1] + "\n")
	res, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, ""), MaxPulls: 1})
	if err != nil || res.Config != nil || len(res.Findings) != 1 || res.Findings[0].Rule != template.RuleBundle || res.Pulled != 0 {
		t.Errorf("over the limit: %+v, pulled %d, err %v; want one TP4 and no pull", res.Findings, res.Pulled, err)
	}
	full, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, "")})
	if err != nil || full.Config == nil {
		t.Fatal(err)
	}
	known := func(ref string) (template.Known, bool) {
		for _, b := range full.Config.Bundles {
			if b.Image == ref && ref == refs[0] {
				return template.Known{Bundle: b}, true
			}
		}
		return template.Known{}, false
	}
	res, err = template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, ""), MaxPulls: 1, Known: known})
	if err != nil || res.Config == nil {
		t.Errorf("one pull with one known bundle: %+v, err %v", res.Findings, err)
	}
}

// ruledError is a refusal with a rule of its own.
type ruledError struct{}

func (ruledError) Error() string { return "the caller's limit is reached" }
func (ruledError) Rule() string  { return "LIMIT" }

// TestBudget: a caller's budget is asked before any pull, with the bundles
// in the template's order; when it grants fewer than all, nothing is
// pulled and the refusal is a finding, under its rule, at the first
// bundle left out.
func TestBudget(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"})
	text := []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: " + refs[0] + "\n  - image: " + refs[1] + "\n")
	var asked []string
	budget := func(granted int) func([]string) (int, error) {
		return func(r []string) (int, error) {
			asked = append(asked, r...)
			if granted < len(r) {
				return granted, ruledError{}
			}
			return len(r), nil
		}
	}
	res, err := template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, ""), Budget: budget(1)})
	if err != nil || res.Config != nil || res.Pulled != 0 || len(res.Findings) != 1 {
		t.Fatalf("one granted of two: %+v, pulled %d, err %v; want one finding and no pull", res.Findings, res.Pulled, err)
	}
	if f := res.Findings[0]; f.Rule != "LIMIT" || f.Line != 5 || !strings.Contains(f.Message, refs[1]) {
		t.Errorf("finding %+v, want LIMIT at line 5 naming %s", f, refs[1])
	}
	if len(asked) != 2 || asked[0] != refs[0] || asked[1] != refs[1] {
		t.Errorf("budget asked for %v, want %v", asked, refs)
	}
	res, err = template.Render(context.Background(), "t.yaml", text, template.Options{Renderer: renderer(t, ""), Budget: budget(2)})
	if err != nil || res.Config == nil || res.Pulled != 2 {
		t.Errorf("all granted: %+v, pulled %d, err %v", res.Findings, res.Pulled, err)
	}
}
