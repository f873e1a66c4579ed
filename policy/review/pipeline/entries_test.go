package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/checks/release"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// pkgCatalog is a valid catalog of package pkg whose stable channel has a
// bundle of each version, each replacing the one before.
func pkgCatalog(pkg string, versions ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nschema: olm.package\nname: %s\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: %s\nname: stable\nentries:\n", pkg, pkg)
	for i, v := range versions {
		fmt.Fprintf(&b, "  - name: %s.v%s\n", pkg, v)
		if i > 0 {
			fmt.Fprintf(&b, "    replaces: %s.v%s\n", pkg, versions[i-1])
		}
	}
	for _, v := range versions {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: %s\nname: %s.v%s\nimage: quay.io/example/%s-bundle:v%s\nproperties:\n  - type: olm.package\n    value:\n      packageName: %s\n      version: %s\n",
			pkg, pkg, v, pkg, v, pkg, v)
	}
	return b.String()
}

// pushCatalog pushes a catalog image to ref holding each package's
// catalog in configs/<package>/catalog.yaml, and returns ref.
func pushCatalog(t *testing.T, ref string, pkgs map[string]string) string {
	t.Helper()
	var entries []rendertest.Entry
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		entries = append(entries, rendertest.Entry{Name: "configs/" + name + "/catalog.yaml", Body: pkgs[name]})
	}
	registrytest.Push(t, ref, rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"}, rendertest.Layer(t, entries...)))
	return ref
}

// listRepo is a repository that assembles cool-catalog from catalog.yaml,
// whose entries foo and bar alice and bob own, with list as its
// catalog.yaml.
func listRepo(list string) map[string]string {
	return map[string]string{
		"OWNERS":                  "approvers:\n  - root-admin\n",
		"cool-catalog/foo/OWNERS": "approvers:\n  - alice\n",
		"cool-catalog/bar/OWNERS": "approvers:\n  - bob\n",
		"catalog.yaml":            list,
	}
}

// TestReferenceEntriesOwnPackages: an entry brings only the packages its
// owners may approve. alice's entry foo whose new image also holds bob's
// package bar needs bob, and is a duplicate package in the catalog the
// list assembles; one that holds a package new to the catalog needs the
// owners of the path an entry of that name would have (here the root's);
// what foo held already, and a new image of foo alone, alice approves.
func TestReferenceEntriesOwnPackages(t *testing.T) {
	host := registrytest.New(t).Host
	foo := pkgCatalog("foo", "1.0.0")
	bar := pkgCatalog("bar", "1.0.0")
	fooV1 := pushCatalog(t, host+"/foo-index:v1", map[string]string{"foo": foo})
	fooV2 := pushCatalog(t, host+"/foo-index:v2", map[string]string{"foo": pkgCatalog("foo", "1.0.0", "1.1.0")})
	smuggles := pushCatalog(t, host+"/foo-index:smuggle", map[string]string{"foo": foo, "bar": bar})
	newPkg := pushCatalog(t, host+"/foo-index:baz", map[string]string{"foo": foo, "baz": pkgCatalog("baz", "1.0.0")})
	withExtra := pushCatalog(t, host+"/foo-index:extra", map[string]string{"foo": foo, "foo-extra": pkgCatalog("foo-extra", "1.0.0")})
	withExtra2 := pushCatalog(t, host+"/foo-index:extra2", map[string]string{"foo": pkgCatalog("foo", "1.0.0", "1.1.0"), "foo-extra": pkgCatalog("foo-extra", "1.0.0")})
	barV1 := pushCatalog(t, host+"/bar-index:v1", map[string]string{"bar": bar})
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		base, head string
		renderer   *render.Renderer
		approvers  []string
		wantOwners checks.Conclusion
		// wantPackage is the package the owners summary must name as
		// needing wantNeeds.
		wantPackage, wantNeeds string
		wantRefs               checks.Conclusion
		// wantRefRule is the rule of an error the references check must
		// report on catalog.yaml, naming wantRefText.
		wantRefRule, wantRefText string
	}{
		{name: "a new image of foo alone", base: refList("foo", fooV1, "bar", barV1), head: refList("foo", fooV2, "bar", barV1),
			renderer: renderer, wantOwners: checks.Success, wantRefs: checks.Success},
		{name: "foo smuggles bob's package", base: refList("foo", fooV1, "bar", barV1), head: refList("foo", smuggles, "bar", barV1),
			renderer: renderer, wantOwners: checks.Failure, wantPackage: "package bar (home cool-catalog/bar/", wantNeeds: "needs bob",
			wantRefs: checks.Failure, wantRefRule: "C2", wantRefText: `package "bar"`},
		{name: "bob approves, the duplicate still fails", base: refList("foo", fooV1, "bar", barV1), head: refList("foo", smuggles, "bar", barV1),
			renderer: renderer, approvers: []string{"bob"}, wantOwners: checks.Success,
			wantRefs: checks.Failure, wantRefRule: "C2", wantRefText: `package "bar"`},
		{name: "foo brings bar, which has no entry of its own", base: refList("foo", fooV1), head: refList("foo", smuggles),
			renderer: renderer, wantOwners: checks.Failure, wantPackage: "package bar (home cool-catalog/bar/", wantNeeds: "needs bob",
			wantRefs: checks.Success},
		{name: "foo brings a package new to the catalog", base: refList("foo", fooV1, "bar", barV1), head: refList("foo", newPkg, "bar", barV1),
			renderer: renderer, wantOwners: checks.Failure, wantPackage: "package baz (home cool-catalog/baz/", wantNeeds: "needs root-admin",
			wantRefs: checks.Success},
		{name: "what foo held already stays foo's", base: refList("foo", withExtra, "bar", barV1), head: refList("foo", withExtra2, "bar", barV1),
			renderer: renderer, wantOwners: checks.Success, wantRefs: checks.Success},
		{name: "offline, the entry is owned by its name", base: refList("foo", fooV1, "bar", barV1), head: refList("foo", smuggles, "bar", barV1),
			wantOwners: checks.Success, wantRefs: checks.Neutral},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, h := listRepo(tt.base), listRepo(tt.head)
			c := diff(b, h, nil)
			c.Author = "alice"
			var approvals []owners.Approval
			for _, a := range tt.approvers {
				approvals = append(approvals, owners.Approval{User: a, SHA: "h"})
			}
			in := &Input{Change: c, Base: tree(b), Head: tree(h), Policy: policy.Default(), Renderer: tt.renderer, Approvals: approvals}
			ctx := context.Background()
			own := Owners{}.Run(ctx, in)
			if own.Conclusion != tt.wantOwners {
				t.Errorf("owners = %s, want %s\n%s", own.Conclusion, tt.wantOwners, own.Summary)
			}
			if tt.wantPackage != "" && !strings.Contains(own.Summary, tt.wantPackage) || !strings.Contains(own.Summary, tt.wantNeeds) {
				t.Errorf("owners summary does not name %q needing %q:\n%s", tt.wantPackage, tt.wantNeeds, own.Summary)
			}
			refs := References{}.Run(ctx, in)
			if refs.Conclusion != tt.wantRefs {
				t.Errorf("references = %s, want %s\n%s\n%+v", refs.Conclusion, tt.wantRefs, refs.Summary, refs.Findings)
			}
			if tt.wantRefRule != "" && !slices.ContainsFunc(refs.Findings, func(f checks.Finding) bool {
				return f.Rule == tt.wantRefRule && f.Severity == checks.SeverityError && f.File == "catalog.yaml" && f.Line > 0 &&
					strings.Contains(f.Message, tt.wantRefText)
			}) {
				t.Errorf("references findings = %+v, want a %s error on catalog.yaml naming %s", refs.Findings, tt.wantRefRule, tt.wantRefText)
			}
		})
	}
}

// TestReferenceEntriesRelease: the release guard compares an entry's base
// rendering with its head rendering. A new image that drops a released
// bundle is a finding on the entry's image line; one that adds a release,
// or moves a package to another entry whole, is not.
func TestReferenceEntriesRelease(t *testing.T) {
	host := registrytest.New(t).Host
	fooV1 := pushCatalog(t, host+"/foo-index:v1", map[string]string{"foo": pkgCatalog("foo", "1.0.0", "1.1.0")})
	fooV2 := pushCatalog(t, host+"/foo-index:v2", map[string]string{"foo": pkgCatalog("foo", "1.0.0", "1.1.0", "1.2.0")})
	dropped := pushCatalog(t, host+"/foo-index:dropped", map[string]string{"foo": pkgCatalog("foo", "1.1.0", "1.2.0")})
	barV1 := pushCatalog(t, host+"/bar-index:v1", map[string]string{"bar": pkgCatalog("bar", "1.0.0")})
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		head     string
		approver string
		want     checks.Conclusion
		wantRule string
		wantSev  checks.Severity
	}{
		{name: "a new release", head: refList("foo", fooV2, "bar", barV1), want: checks.Success},
		{name: "a released bundle dropped", head: refList("foo", dropped, "bar", barV1), want: checks.Failure,
			wantRule: release.RuleBundleRemoved, wantSev: checks.SeverityError},
		{name: "a root approver allows it", head: refList("foo", dropped, "bar", barV1), approver: "root-admin", want: checks.Success,
			wantRule: release.RuleBundleRemoved, wantSev: checks.SeverityWarning},
		{name: "the entry renamed, same image", head: refList("foo2", fooV1, "bar", barV1), want: checks.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, h := listRepo(refList("foo", fooV1, "bar", barV1)), listRepo(tt.head)
			c := diff(b, h, nil)
			c.Author = "alice"
			in := &Input{Change: c, Base: tree(b), Head: tree(h), Policy: policy.Default(), Renderer: renderer}
			if tt.approver != "" {
				in.Approvals = []owners.Approval{{User: tt.approver, SHA: "h"}}
			}
			res := Release{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Fatalf("release = %s, want %s\n%s\n%+v", res.Conclusion, tt.want, res.Summary, res.Findings)
			}
			if tt.wantRule == "" {
				return
			}
			if !slices.ContainsFunc(res.Findings, func(f checks.Finding) bool {
				return f.Rule == tt.wantRule && f.Severity == tt.wantSev && f.File == "catalog.yaml" && f.Line == 6 && f.Bundle == "foo.v1.0.0" &&
					strings.Contains(f.Message, `reference "foo"`)
			}) {
				t.Errorf("findings = %+v, want %s on catalog.yaml:6 about foo.v1.0.0", res.Findings, tt.wantRule)
			}
		})
	}
}

// TestReferenceEntriesAssembled: the assembled catalog's problems that the
// base has already, on entries the change leaves as they are, are not the
// change's; an unchanged entry that no longer renders is a warning and is
// left out, and the rest is still validated.
func TestReferenceEntriesAssembled(t *testing.T) {
	host := registrytest.New(t).Host
	fooV1 := pushCatalog(t, host+"/foo-index:v1", map[string]string{"foo": pkgCatalog("foo", "1.0.0")})
	fooV2 := pushCatalog(t, host+"/foo-index:v2", map[string]string{"foo": pkgCatalog("foo", "1.0.0", "1.1.0")})
	fooBroken := pushCatalog(t, host+"/foo-index:broken", map[string]string{"foo": badDefault(pkgCatalog("foo", "1.0.0"))})
	barV1 := pushCatalog(t, host+"/bar-index:v1", map[string]string{"bar": pkgCatalog("bar", "1.0.0")})
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	gone := host + "/gone-index:v1"
	tests := []struct {
		name       string
		base, head string
		want       checks.Conclusion
		// wantRules are the rules of the findings, in order, and their
		// severity.
		wantRules []string
		wantSev   checks.Severity
	}{
		{name: "a duplicate the base has already", base: refList("foo", fooV1, "bar", barV1, "bar2", barV1),
			head: refList("foo", fooV2, "bar", barV1, "bar2", barV1), want: checks.Success},
		{name: "an unchanged entry that no longer renders", base: refList("foo", fooV1, "gone", gone),
			head: refList("foo", fooV2, "gone", gone), want: checks.Success, wantRules: []string{"RF1"}, wantSev: checks.SeverityWarning},
		{name: "a changed entry invalid, next to one that no longer renders", base: refList("foo", fooV1, "gone", gone),
			head: refList("foo", fooBroken, "gone", gone), want: checks.Failure, wantRules: []string{"RF1", "M5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, h := listRepo(tt.base), listRepo(tt.head)
			in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: policy.Default(), Renderer: renderer}
			res := References{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("references = %s, want %s\n%s", res.Conclusion, tt.want, res.Summary)
			}
			var rules []string
			for _, f := range res.Findings {
				rules = append(rules, f.Rule)
				if tt.wantSev != "" && f.Severity != tt.wantSev {
					t.Errorf("finding %+v, want severity %s", f, tt.wantSev)
				}
			}
			if !slices.Equal(rules, tt.wantRules) {
				t.Errorf("findings = %+v, want rules %v", res.Findings, tt.wantRules)
			}
			if !strings.Contains(res.Summary, "The catalog the list assembles was validated whole") {
				t.Errorf("summary does not say the list was validated whole:\n%s", res.Summary)
			}
		})
	}
}
