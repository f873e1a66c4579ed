package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
)

// render prints findings as file:line: rule: message, then the policy that
// Parse returned, so that a golden shows both what was refused and what
// was kept.
func render(p *Policy, findings []checks.Finding) []byte {
	var b bytes.Buffer
	for _, f := range findings {
		fmt.Fprintf(&b, "%s:%d: %s %s: %s\n", f.File, f.Line, f.Rule, f.Severity, f.Message)
	}
	if len(findings) == 0 {
		b.WriteString("valid\n")
	}
	j, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic(err)
	}
	b.Write(j)
	b.WriteByte('\n')
	return b.Bytes()
}

func TestParseGolden(t *testing.T) {
	cases := []struct {
		file  string
		valid bool
		// rules are the rule ids the file must produce, whatever
		// else the golden says.
		rules []string
	}{
		{file: "full.yaml", valid: true},
		{file: "empty.yaml", valid: true},
		{file: "comment.yaml", valid: true},
		{file: "nullsections.yaml", valid: true},
		{file: "unknown.yaml", rules: []string{RuleUnknownKey}},
		{file: "types.yaml", rules: []string{RuleType}},
		{file: "enums.yaml", rules: []string{RuleValue}},
		{file: "yaml11.yaml", rules: []string{RuleYAML11}},
		{file: "duplicates.yaml", rules: []string{RuleDuplicate}},
		{file: "syntax.yaml", rules: []string{RuleSyntax}},
		{file: "toplevel.yaml", rules: []string{RuleType}},
		{file: "twodocs.yaml", rules: []string{RuleSyntax}},
		{file: "anchors.yaml", rules: []string{RuleUnknownKey}},
		{file: "requiredchecks.yaml", valid: true},
		{file: "requiredchecksbad.yaml", rules: []string{RuleValue, RuleType, RuleUnknownKey}},
		{file: "catalogs.yaml", valid: true},
		{file: "catalogsbad.yaml", rules: []string{RuleValue, RuleType}},
		{file: "placeholder.yaml", rules: []string{RuleValue}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "parse", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p, findings := Parse(c.file, data)
			if p == nil {
				t.Fatal("Parse returned a nil policy")
			}
			if got := len(findings) == 0; got != c.valid {
				t.Errorf("valid = %v, want %v: %v", got, c.valid, findings)
			}
			for _, rule := range c.rules {
				found := false
				for _, f := range findings {
					found = found || f.Rule == rule
				}
				if !found {
					t.Errorf("no %s finding in %v", rule, findings)
				}
			}
			for _, f := range findings {
				if f.File != c.file || f.Severity != checks.SeverityError {
					t.Errorf("finding %+v: want file %s and severity error", f, c.file)
				}
				if f.Line == 0 && f.Rule != RuleSyntax {
					t.Errorf("finding %+v has no line", f)
				}
			}
			checkstest.Golden(t, filepath.Join("testdata", "parse", strings.TrimSuffix(c.file, ".yaml")+".golden"), render(p, findings))
		})
	}
}

func TestEmptyIsDefault(t *testing.T) {
	for _, in := range []string{"", "\n", "# nothing\n", "~\n", "{}\n", "---\n"} {
		p, findings := Parse(FileName, []byte(in))
		if len(findings) != 0 {
			t.Errorf("%q: findings %v", in, findings)
		}
		if !reflect.DeepEqual(p, Default()) {
			t.Errorf("%q: got %+v, want the default %+v", in, p, Default())
		}
	}
}

// TestUnknownKeyLines checks that an unknown key is reported at its own
// line at every level of nesting.
func TestUnknownKeyLines(t *testing.T) {
	cases := []struct {
		in   string
		line int
		key  string
	}{
		{"bogus: 1\n", 1, "bogus"},
		{"catalog:\n  roots: [c]\n  bogus: 1\n", 3, "catalog.bogus"},
		{"owners:\n  bogus: 1\n", 2, "owners.bogus"},
		{"images:\n  singleManifestBundles: true\n\n  bogus: 1\n", 4, "images.bogus"},
		{"images:\n  pin:\n    bogus: true\n", 3, "images.pin.bogus"},
		{"merge:\n  enabled: true\n  bogus: 1\n", 3, "merge.bogus"},
		{"publish:\n  bogus: 1\n", 2, "publish.bogus"},
	}
	for _, c := range cases {
		_, findings := Parse("p.yaml", []byte(c.in))
		if len(findings) != 1 {
			t.Errorf("%q: want one finding, got %v", c.in, findings)
			continue
		}
		f := findings[0]
		if f.Rule != RuleUnknownKey || f.Line != c.line || !strings.Contains(f.Message, c.key) {
			t.Errorf("%q: got %+v, want %s at line %d naming %s", c.in, f, RuleUnknownKey, c.line, c.key)
		}
	}
}

func TestMappings(t *testing.T) {
	p, findings := Parse("p.yaml", []byte(`
catalog: {roots: [operators], referenceList: lists/catalog.yaml}
owners: {selfApproval: false, stickyApprovals: true}
merge: {enabled: true}
publish: {base: quay.io/operator-framework/opm:v1.65.0}
`))
	if len(findings) != 0 {
		t.Fatal(findings)
	}
	if !p.Owners.NoSelfApproval || !p.Owners.StickyApprovals {
		t.Errorf("owners = %+v", p.Owners)
	}
	if got := p.Catalog.ReferenceListIn(); got != "lists/catalog.yaml" {
		t.Errorf("reference list = %q", got)
	}
	if p.Merge.Method != MethodSquash || p.Merge.HoldLabel != DefaultHoldLabel {
		t.Errorf("merge defaults lost: %+v", p.Merge)
	}
	if p.Publish.Base != "quay.io/operator-framework/opm:v1.65.0" {
		t.Errorf("base = %q", p.Publish.Base)
	}
	// Images keep their defaults when the section is absent.
	if !p.Images.SingleManifestBundles || !p.Images.CatalogLabel {
		t.Errorf("images defaults lost: %+v", p.Images)
	}
}

// TestRequireAccess: owners.requireAccess takes write, the one access
// level approvals can require, and nothing else.
func TestRequireAccess(t *testing.T) {
	p, findings := Parse("p.yaml", []byte("owners:\n  requireAccess: write\n"))
	if len(findings) != 0 || p.Owners.RequireAccess != "write" {
		t.Errorf("findings %v, requireAccess %q; want write", findings, p.Owners.RequireAccess)
	}
	_, findings = Parse("p.yaml", []byte("owners:\n  requireAccess: admin\n"))
	if len(findings) != 1 || findings[0].Rule != RuleValue || findings[0].Line != 2 || !strings.Contains(findings[0].Message, "owners.requireAccess") {
		t.Errorf("requireAccess admin: findings %v, want one %s at line 2", findings, RuleValue)
	}
}

// TestPublishOPMImage: publish.opmImage names the image base opm stands
// for, so that the App's base can be pinned by digest.
func TestPublishOPMImage(t *testing.T) {
	const pinned = "quay.io/operator-framework/opm@sha256:0000000000000000000000000000000000000000000000000000000000000000"
	p, findings := Parse("p.yaml", []byte("publish:\n  image: quay.io/acme/catalog:latest\n  opmImage: "+pinned+"\n"))
	if len(findings) != 0 || p.Publish.OPMImage != pinned || p.Publish.Base != BaseOPM {
		t.Errorf("findings %v, publish %+v; want base opm on %s", findings, p.Publish, pinned)
	}
	_, findings = Parse("p.yaml", []byte("publish:\n  opmImage: Not A Reference\n"))
	if len(findings) != 1 || findings[0].Rule != RuleValue || findings[0].Line != 2 || !strings.Contains(findings[0].Message, "publish.opmImage") {
		t.Errorf("an invalid opmImage: findings %v, want one %s at line 2 naming publish.opmImage", findings, RuleValue)
	}
}

func TestLoad(t *testing.T) {
	t.Run("absent", func(t *testing.T) {
		p, findings, err := Load(fstest.MapFS{"catalog/foo/index.yaml": {Data: []byte("{}")}})
		if err != nil || len(findings) != 0 {
			t.Fatal(err, findings)
		}
		if !reflect.DeepEqual(p, Default()) {
			t.Errorf("got %+v, want the default", p)
		}
	})
	t.Run("present", func(t *testing.T) {
		p, findings, err := Load(fstest.MapFS{FileName: {Data: []byte("merge:\n  enabled: true\n  method: merge\n")}})
		if err != nil || len(findings) != 0 {
			t.Fatal(err, findings)
		}
		if !p.Merge.Enabled || p.Merge.Method != MethodMerge {
			t.Errorf("merge = %+v", p.Merge)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		_, findings, err := Load(fstest.MapFS{FileName: {Data: []byte("merge:\n  enabled: yes\n")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(findings) != 1 || findings[0].File != FileName || findings[0].Line != 2 {
			t.Errorf("findings = %v", findings)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, _, err := Load(fstest.MapFS{FileName + "/x": {Data: []byte("")}})
		if err == nil {
			t.Error("reading a directory as the policy file: want an error")
		}
	})
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, findings := Parse("f.yaml", data)
		if p == nil {
			t.Fatal("nil policy")
		}
		for _, fd := range findings {
			if fd.Rule == "" || fd.Message == "" || fd.File != "f.yaml" {
				t.Fatalf("malformed finding %+v", fd)
			}
		}
		if len(findings) == 0 {
			switch p.Merge.Method {
			case MethodSquash, MethodMerge, MethodRebase:
			default:
				t.Fatalf("valid policy with merge method %q", p.Merge.Method)
			}
			if len(p.Catalog.Roots) == 0 {
				t.Fatal("valid policy without catalog roots")
			}
		}
	})
}

// TestDocExample keeps the example in docs/policy.md valid and setting
// what the documentation says it sets.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Example\n\n```yaml\n")
	if !ok {
		t.Fatal("docs/policy.md has no example")
	}
	example, _, _ := strings.Cut(rest, "```")
	p, findings := Parse("docs/policy.md", []byte(example))
	if len(findings) != 0 {
		t.Fatalf("the documented example is invalid: %v", findings)
	}
	if !p.Merge.Enabled || p.Publish.Image == "" || len(p.Images.Platforms) != 2 || !p.Images.Pin["bundle"] {
		t.Errorf("the example did not set what it shows: %+v", p)
	}
}
