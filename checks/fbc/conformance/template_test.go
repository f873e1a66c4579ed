package conformance_test

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	alphatemplate "github.com/operator-framework/operator-registry/alpha/template"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/image/containerdregistry"
	"github.com/sirupsen/logrus"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// templateCase is one template and how it is rendered: the type given on
// the command line ("" to detect it) and the migration level.
type templateCase struct {
	name  string
	text  string
	typ   string
	level string
}

// moduleTemplates finds the catalog templates operator-registry v1.65.0
// ships: the YAML blocks of its template documentation, and the string
// literals of its template tests, that name the schema olm.semver or
// olm.template.basic. (Its testdata holds none, and most of its template
// tests build templates as Go values.)
func moduleTemplates(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	block := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	isTemplate := func(text string) bool {
		lower := strings.ToLower(text)
		return regexp.MustCompile(`"?schema"?\s*:\s*"?olm\.(semver|template\.basic)"?\s*[,\n}]`).MatchString(lower + "\n")
	}
	err := filepath.WalkDir(filepath.Join(root, "alpha/template"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case strings.HasSuffix(p, ".md"):
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i, m := range block.FindAllStringSubmatch(string(data), -1) {
				if isTemplate(m[1]) {
					out[fmt.Sprintf("%s#%d", rel, i)] = m[1]
				}
			}
		case strings.HasSuffix(p, "_test.go"):
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				return err
			}
			// A literal with %s is a format the test fills in with
			// fmt.Sprintf(name, "a", ...): the templates are its calls.
			i := 0
			add := func(text string) {
				out[fmt.Sprintf("%s#%d", rel, i)] = text
				i++
			}
			formats := map[string]string{}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					if len(n.Lhs) == 1 && len(n.Rhs) == 1 {
						id, ok1 := n.Lhs[0].(*ast.Ident)
						lit, ok2 := n.Rhs[0].(*ast.BasicLit)
						if ok1 && ok2 && lit.Kind == token.STRING {
							if text, err := strconv.Unquote(lit.Value); err == nil && isTemplate(text) && strings.Contains(text, "%s") {
								formats[id.Name] = text
							}
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || sel.Sel.Name != "Sprintf" || len(n.Args) < 2 {
						return true
					}
					id, ok := n.Args[0].(*ast.Ident)
					if !ok || formats[id.Name] == "" {
						return true
					}
					var args []any
					for _, a := range n.Args[1:] {
						lit, ok := a.(*ast.BasicLit)
						if !ok {
							return true
						}
						v, err := strconv.Unquote(lit.Value)
						if err != nil {
							return true
						}
						args = append(args, v)
					}
					add(fmt.Sprintf(formats[id.Name], args...))
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					if text, err := strconv.Unquote(n.Value); err == nil && isTemplate(text) && !strings.Contains(text, "%s") {
						add(text)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// imageRE matches the bundle image references of a template; bundles are
// built for each, named and versioned after the tag (name.vX.Y.Z, or
// vX.Y.Z for the package "widget"), in the test's registry.
var imageRE = regexp.MustCompile(`(?i)"?image"?\s*:\s*"?([^\s",}]+)`)

// tagBundle reads the bundle a reference's tag describes: "pkg.vX.Y.Z"
// or "vX.Y.Z" with package from the repository's last element without
// "-bundle". Tags cannot hold "+": "_build" stands for it.
func tagBundle(ref string) templatetest.Bundle {
	repo, tag, _ := strings.Cut(ref[strings.Index(ref, "/")+1:], ":")
	pkg, version := strings.TrimSuffix(repo[strings.LastIndex(repo, "/")+1:], "-bundle"), strings.TrimPrefix(tag, "v")
	if p, v, ok := strings.Cut(tag, ".v"); ok {
		pkg, version = p, v
	}
	version = strings.ReplaceAll(version, "_build", "+build")
	return templatetest.Bundle{Package: pkg, Version: version,
		Description: "The " + pkg + " operator at " + version, Icon: "PHN2ZyB2ZXJzaW9uPSIxLjEiLz4="}
}

// TestTemplateParity renders every template of the operator-registry
// module and every template of testdata/templates, once with the type
// detected and once given, with each migration level, in both formats, with
// operator-registry's own template code (as opm alpha render-template runs
// it, against a real registry client) and with publisher/template. Output
// must be byte-identical, and a template one side refuses, the other must
// refuse too.
func TestTemplateParity(t *testing.T) {
	logrus.SetOutput(io.Discard)
	host := registrytest.New(t).Host

	texts := moduleTemplates(t, moduleDir(t, operatorRegistry))
	if len(texts) == 0 {
		t.Fatal("no templates found in operator-registry's module")
	}
	own, err := filepath.Glob("testdata/templates/*.*")
	if err != nil || len(own) == 0 {
		t.Fatalf("no templates under testdata/templates: %v", err)
	}
	for _, p := range own {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(data)
	}

	// A bundle is pushed for every reference, unless its tag says it must
	// not exist.
	pushed := map[string]bool{}
	var cases []templateCase
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		text := texts[n]
		// Every registry host of the templates is the test's registry.
		text = regexp.MustCompile(`(quay\.io|example\.com)/`).ReplaceAllString(text, host+"/")
		for _, m := range imageRE.FindAllStringSubmatch(text, -1) {
			ref := m[1]
			if pushed[ref] || strings.Contains(ref, ":missing") || !strings.HasPrefix(ref, host+"/") {
				continue
			}
			pushed[ref] = true
			templatetest.Push(t, func(templatetest.Bundle) string { return ref }, false, tagBundle(ref))
		}
		typ := "semver"
		if strings.Contains(strings.ToLower(text), "olm.template.basic") {
			typ = "basic"
		}
		for _, level := range append([]string{""}, render.MigrationLevels...) {
			cases = append(cases, templateCase{name: n, text: text, level: level}, templateCase{name: n, text: text, typ: typ, level: level})
		}
	}
	t.Logf("%d templates (%d from operator-registry), %d bundle images, %d renders per side", len(texts), len(texts)-len(own), len(pushed), len(cases))

	reg, err := containerdregistry.NewRegistry(containerdregistry.WithCacheDir(t.TempDir()+"/cache"),
		containerdregistry.WithPlainHTTP(true), containerdregistry.WithLog(logrus.NewEntry(logrus.New())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Destroy() })

	refused := 0
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/type=%s/level=%s", c.name, c.typ, c.level), func(t *testing.T) {
			want := opmTemplate(t, reg, c)
			got := catalogbotTemplate(t, c)
			if want.err != nil {
				refused++
			}
			switch {
			case want.err != nil && got.err == nil:
				t.Errorf("opm refuses the template, catalogbot renders it\nopm: %v", want.err)
			case want.err == nil && got.err != nil:
				t.Errorf("opm renders the template, catalogbot refuses it\ncatalogbot: %v", got.err)
			case want.err == nil:
				for _, format := range renderFormats {
					if d := firstDiff("opm", "catalogbot", want.out[format], got.out[format]); d != "" {
						t.Errorf("-o %s: output differs\n%s", format, d)
					}
				}
			default:
				t.Logf("both refuse\nopm: %v\ncatalogbot: %v", want.err, got.err)
			}
		})
	}
	t.Logf("%d of %d renders refused by opm", refused, len(cases))
}

// opmTemplate renders a template as opm alpha render-template does.
func opmTemplate(t testing.TB, reg image.Registry, c templateCase) renderOutcome {
	t.Helper()
	var m *migrations.Migrations
	if c.level != "" {
		var err error
		if m, err = migrations.NewMigrations(c.level); err != nil {
			t.Fatal(err)
		}
	}
	renderBundle := func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
		r := action.Render{Refs: []string{ref}, Registry: reg, AllowedRefMask: action.RefBundleImage, Migrations: m}
		return r.Run(ctx)
	}
	tr := alphatemplate.NewRegistry()
	var tmpl alphatemplate.Template
	var in io.Reader = strings.NewReader(c.text)
	var err error
	if c.typ != "" {
		tmpl, err = tr.CreateTemplateByType(c.typ, renderBundle)
	} else {
		tmpl, in, err = tr.CreateTemplateBySchema(in, renderBundle)
	}
	if err != nil {
		return renderOutcome{err: err}
	}
	cfg, err := tmpl.Render(context.Background(), in)
	if err != nil {
		return renderOutcome{err: err}
	}
	out := map[string][]byte{}
	for _, format := range renderFormats {
		var buf bytes.Buffer
		write := declcfg.WriteJSON
		if format == "yaml" {
			write = declcfg.WriteYAML
		}
		if err := write(*cfg, &buf); err != nil {
			t.Fatalf("opm write %s: %v", format, err)
		}
		out[format] = buf.Bytes()
	}
	return renderOutcome{out: out}
}

// catalogbotTemplate renders a template as catalogbot render-template does.
func catalogbotTemplate(t *testing.T, c templateCase) renderOutcome {
	t.Helper()
	r, err := render.New(render.Options{MigrateLevel: c.level})
	if err != nil {
		t.Fatal(err)
	}
	res, err := template.Render(context.Background(), "template.yaml", []byte(c.text), template.Options{Type: c.typ, Renderer: r})
	if err != nil {
		t.Fatalf("catalogbot could not judge the template: %v", err)
	}
	if res.Config == nil {
		var msgs []string
		for _, f := range res.Findings {
			msgs = append(msgs, fmt.Sprintf("%s:%d: %s %s", f.File, f.Line, f.Rule, f.Message))
		}
		return renderOutcome{err: fmt.Errorf("%s", strings.Join(msgs, "\n"))}
	}
	out := map[string][]byte{}
	for _, format := range renderFormats {
		var buf bytes.Buffer
		write := render.WriteJSON
		if format == "yaml" {
			write = render.WriteYAML
		}
		if err := write(&buf, res.Config); err != nil {
			t.Fatalf("catalogbot write %s: %v", format, err)
		}
		out[format] = buf.Bytes()
	}
	return renderOutcome{out: out}
}
