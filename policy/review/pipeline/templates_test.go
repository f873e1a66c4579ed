package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

const (
	tplPath = "templates/widget.yaml"
	outDir  = "catalog/widget"
	outFile = outDir + "/catalog.yaml"
)

func semverTemplate(stable, fast []string) string {
	s := "schema: olm.semver\nstable:\n  bundles:\n"
	for _, r := range stable {
		s += "  - image: " + r + "\n"
	}
	if len(fast) > 0 {
		s += "fast:\n  bundles:\n"
		for _, r := range fast {
			s += "  - image: " + r + "\n"
		}
	}
	return s
}

func templatesPolicy() *policy.Policy {
	p := policy.Default()
	p.Catalog.Templates = []policy.Template{{Template: tplPath, Output: outDir}}
	return p
}

// renderTemplate is what render-template writes for text.
func renderTemplate(t *testing.T, r *render.Renderer, text string) string {
	t.Helper()
	res, err := template.Render(context.Background(), tplPath, []byte(text), template.Options{Renderer: r})
	if err != nil || res.Config == nil {
		t.Fatalf("render: %v %v", err, res.Findings)
	}
	var buf bytes.Buffer
	if err := render.WriteYAML(&buf, res.Config); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestTemplates(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"},
		templatetest.Bundle{Package: "widget", Version: "1.2.0"})
	a, b, c := refs[0], refs[1], refs[2]
	newRenderer := func() *render.Renderer {
		r, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	renderer := newRenderer()
	baseTpl := semverTemplate([]string{a, b}, nil)
	baseOut := renderTemplate(t, renderer, baseTpl)
	base := map[string]string{tplPath: baseTpl, outFile: baseOut}

	// offline is the same registry's content, unreachable: only bundles
	// taken from the base can be rendered.
	offline := func(ref string) string { return strings.Replace(ref, host, "127.0.0.1:1", 1) }
	offA, offB, offC := offline(a), offline(b), offline(c)
	offBaseTpl := semverTemplate([]string{offA, offB}, nil)
	offBase := map[string]string{tplPath: offBaseTpl, outFile: strings.ReplaceAll(baseOut, host, "127.0.0.1:1")}
	addFast := semverTemplate([]string{offA, offB}, []string{offB})
	addC := semverTemplate([]string{a, b, c}, nil)

	tests := []struct {
		name       string
		base, head map[string]string
		noRenderer bool
		want       checks.Conclusion
		wantRule   string
		wantText   []string
	}{
		{name: "template and output changed together", base: base,
			head: map[string]string{tplPath: addC, outFile: renderTemplate(t, renderer, addC)},
			want: checks.Success, wantText: []string{"1 bundle image(s) pulled, 2 taken from the base", "the output matches"}},
		{name: "template changed, output left behind", base: base,
			head: map[string]string{tplPath: addC, outFile: baseOut},
			want: checks.Failure, wantRule: RuleTemplateOutputStale,
			wantText: []string{"catalogbot render-template templates/widget.yaml -o yaml > catalog/widget/catalog.yaml",
				"--- catalog/widget\n+++ templates/widget.yaml rendered\n", "\n+- name: widget.v1.2.0\n"}},
		{name: "output edited by hand", base: base,
			head: map[string]string{tplPath: baseTpl, outFile: strings.Replace(baseOut, "defaultChannel: stable-v1.1", "defaultChannel: stable-v1.0", 1)},
			want: checks.Failure, wantRule: RuleTemplateOutputEdited,
			wantText: []string{"change the template instead", "-defaultChannel: stable-v1.0\n+defaultChannel: stable-v1.1\n"}},
		{name: "output split over files is the same catalog", base: base,
			head: map[string]string{tplPath: baseTpl, outFile: "", outDir + "/a.yaml": baseOut},
			want: checks.Success},
		{name: "a template that does not decode", base: base,
			head: map[string]string{tplPath: addC + "extra: 1\n", outFile: baseOut},
			want: checks.Failure, wantRule: template.RuleField},
		{name: "bundles of the base need no registry", base: offBase,
			head: map[string]string{tplPath: addFast, outFile: strings.ReplaceAll(renderTemplate(t, renderer, semverTemplate([]string{a, b}, []string{b})), host, "127.0.0.1:1")},
			want: checks.Success, wantText: []string{"0 bundle image(s) pulled, 2 taken from the base"}},
		// The head's output claims a bundle for offC: it is not taken,
		// and the unreachable registry leaves the check pending.
		{name: "bundles of the head are never taken", base: offBase,
			head: map[string]string{tplPath: semverTemplate([]string{offA, offB, offC}, nil),
				outFile: strings.ReplaceAll(renderTemplate(t, renderer, addC), host, "127.0.0.1:1")},
			want: checks.Pending, wantText: []string{"could not be rendered yet", "Could not judge every template yet: registry 127.0.0.1:1"}},
		{name: "rendering off", base: base, noRenderer: true,
			head: map[string]string{tplPath: addC, outFile: baseOut},
			want: checks.Neutral, wantText: []string{"rendering is off"}},
		{name: "untouched pair", base: base, head: base, want: checks.Success, wantText: []string{"1 template mapping that the change leaves alone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := map[string]string{}
			for k, v := range tt.head {
				if v != "" {
					head[k] = v
				}
			}
			in := &Input{Change: diff(tt.base, head, nil), Base: tree(tt.base), Head: tree(head), Policy: templatesPolicy()}
			if !tt.noRenderer {
				in.Renderer = newRenderer()
			}
			res := Templates{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s\n%s\n%+v", res.Conclusion, tt.want, res.Summary, res.Findings)
			}
			text := res.Summary
			for _, f := range res.Findings {
				text += f.Message
			}
			for _, w := range tt.wantText {
				if !strings.Contains(text, w) {
					t.Errorf("report does not say %q:\n%s", w, text)
				}
			}
			switch {
			case tt.wantRule == "" && len(res.Findings) > 0:
				t.Errorf("findings = %+v, want none", res.Findings)
			case tt.wantRule != "" && (len(res.Findings) != 1 || res.Findings[0].Rule != tt.wantRule):
				t.Errorf("findings = %+v, want one %s", res.Findings, tt.wantRule)
			}
		})
	}
}

// TestChecksIncludeTemplates: the check runs where the policy maps
// templates, and only there.
func TestChecksIncludeTemplates(t *testing.T) {
	has := func(p *policy.Policy) bool {
		for _, c := range Checks(&Input{Policy: p}) {
			if c.Name() == TemplatesName {
				return true
			}
		}
		return false
	}
	if has(policy.Default()) || !has(templatesPolicy()) {
		t.Errorf("templates check: default policy %v, with templates %v; want false, true", has(policy.Default()), has(templatesPolicy()))
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n15\n16\n"
	got := unifiedDiff("a", "b", []byte(a), []byte(b), 60)
	want := "--- a\n+++ b\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -11,5 +11,5 @@\n 11\n 12\n 13\n-14\n 15\n+16\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := unifiedDiff("a", "b", []byte(a), []byte(b), 1); !strings.HasSuffix(got, "(3 more changed lines not shown)\n") {
		t.Errorf("bounded diff:\n%s", got)
	}
}

// missingFS is a tree whose named files' objects are not in the
// repository, as in a partial clone.
type missingFS struct {
	fs.FS
	missing map[string]string // path to object id
}

func (m missingFS) Open(name string) (fs.File, error) {
	if id, ok := m.missing[name]; ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: &change.ObjectError{Path: name, Object: id, Err: errors.New("object not found")}}
	}
	return m.FS.Open(name)
}

// TestTemplatesUnread: a template or an output whose object could not be
// read is not judged (pending, naming the path and the object), never
// stale, edited or in step.
func TestTemplatesUnread(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"}, templatetest.Bundle{Package: "widget", Version: "1.1.0"})
	r, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	baseTpl := semverTemplate(refs[:1], nil)
	headTpl := semverTemplate(refs, nil)
	base := map[string]string{tplPath: baseTpl, outFile: renderTemplate(t, r, baseTpl)}
	head := map[string]string{tplPath: headTpl, outFile: renderTemplate(t, r, headTpl)}
	const object = "0123456789abcdef0123456789abcdef01234567"
	for _, missing := range []string{tplPath, outFile} {
		t.Run(missing, func(t *testing.T) {
			in := &Input{Change: diff(base, head, nil), Base: tree(base),
				Head: missingFS{FS: tree(head), missing: map[string]string{missing: object}}, Policy: templatesPolicy(), Renderer: r}
			res := Templates{}.Run(context.Background(), in)
			if res.Conclusion != checks.Pending || len(res.Findings) > 0 {
				t.Fatalf("conclusion %s, findings %+v; want pending and none\n%s", res.Conclusion, res.Findings, res.Summary)
			}
			if len(res.Waits) != 1 || res.Waits[0].Class != checks.WaitUnreadable || res.Waits[0].Path != missing || res.Waits[0].Object != object {
				t.Errorf("waits %+v, want the unreadable %s", res.Waits, missing)
			}
			if !strings.Contains(res.Summary, "not judged") || !strings.Contains(res.Summary, object) {
				t.Errorf("summary does not say what was not read:\n%s", res.Summary)
			}
		})
	}
}
