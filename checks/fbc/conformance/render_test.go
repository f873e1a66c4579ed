package conformance_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/sirupsen/logrus"

	"github.com/catalogbot/catalogbot/publisher/render"
)

// operatorRegistry is the module whose bundle directories the render test
// renders: the reference implementation itself ships them as test data.
const operatorRegistry = "github.com/operator-framework/operator-registry"

// renderTemplate is an --alpha-image-ref-template value. Bundle directories
// have no image, and the bundle-object-to-csv-metadata migration leaves
// bundles without an image alone, so the migration is only exercised with a
// template. The version it prints is the olm.package version.
const renderTemplate = "quay.io/example/{{.Package}}-bundle:v{{.Version}}"

// renderFlags is one way of calling render: the flags given besides the
// reference and -o.
type renderFlags struct {
	migrateAll   bool   // --migrate
	migrateLevel string // --migrate-level, "" when not given
	template     string // --alpha-image-ref-template, "" when not given
}

func (f renderFlags) String() string {
	var s []string
	if f.migrateAll {
		s = append(s, "--migrate")
	}
	if f.migrateLevel != "" {
		s = append(s, "--migrate-level="+f.migrateLevel)
	}
	if f.template != "" {
		s = append(s, "--alpha-image-ref-template")
	}
	if len(s) == 0 {
		return "no-flags"
	}
	return strings.Join(s, ",")
}

// renderOutcome is one side's answer for one reference: the bytes written
// for each format, or the error that made render exit 1.
type renderOutcome struct {
	out map[string][]byte
	err error
}

var renderFormats = []string{"json", "yaml"}

// renderFixtures are publisher/render's own bundle directories, whose
// goldens claim to be opm's output: they are held to opm here as well.
const renderFixtures = "../../../publisher/render/testdata"

// TestRenderBundleDirParity renders every bundle directory of the
// operator-registry v1.65.0 module, and of publisher/render's test data,
// with opm's library (alpha/action.Render, as `opm render DIR` runs it) and
// with publisher/render (as `catalogbot render DIR` runs it), in both output
// formats, with no migration flag, with every migration level opm knows,
// and with --migrate; each once without and once with an image reference
// template. Output must be byte-identical; where opm refuses a directory,
// catalogbot must refuse it with the same message.
func TestRenderBundleDirParity(t *testing.T) {
	logrus.SetOutput(io.Discard) // opm render discards the bundle parser's logs too

	root := moduleDir(t, operatorRegistry)
	moduleDirs := bundleDirs(t, root)
	if len(moduleDirs) == 0 {
		t.Fatalf("no bundle directories found under %s", root)
	}
	fixtureDirs := bundleDirs(t, renderFixtures)
	if len(fixtureDirs) == 0 {
		t.Fatalf("no bundle directories found under %s", renderFixtures)
	}
	dirs := append(moduleDirs, fixtureDirs...)
	levels := opmMigrationLevels(t)
	if !slices.Equal(levels, render.MigrationLevels) {
		t.Errorf("opm v1.65.0 knows the migration levels %q, publisher/render %q", levels, render.MigrationLevels)
	}

	var variants []renderFlags
	for _, tmpl := range []string{"", renderTemplate} {
		variants = append(variants, renderFlags{template: tmpl}, renderFlags{migrateAll: true, template: tmpl})
		for _, l := range levels {
			variants = append(variants, renderFlags{migrateLevel: l, template: tmpl})
		}
	}
	t.Logf("%d bundle directories under %s and %d under %s; %d formats; migrate levels %q, plus no level and --migrate; with and without a template: %d (directory, flags, format) renders per side",
		len(moduleDirs), root, len(fixtureDirs), renderFixtures, len(renderFormats), levels, len(dirs)*len(variants)*len(renderFormats))

	refused := 0
	for _, dir := range dirs {
		name, err := filepath.Rel(root, dir)
		if err != nil || strings.HasPrefix(name, "..") {
			name = "catalogbot/" + strings.TrimPrefix(dir, "../../../")
		}
		t.Run(name, func(t *testing.T) {
			for _, f := range variants {
				want := opmRender(t, dir, f)
				got := catalogbotRender(t, dir, f)
				if f == (renderFlags{}) && want.err != nil {
					refused++
					t.Logf("refused by opm: %v", want.err)
				}
				compareRender(t, dir, f, want, got)
			}
		})
	}
	t.Logf("%d of %d bundle directories are refused by opm", refused, len(dirs))
}

func compareRender(t *testing.T, dir string, f renderFlags, want, got renderOutcome) {
	t.Helper()
	switch {
	case want.err != nil && got.err == nil:
		t.Errorf("%s [%s]: opm refuses the directory, catalogbot renders it\nopm: %v", dir, f, want.err)
	case want.err == nil && got.err != nil:
		t.Errorf("%s [%s]: opm renders the directory, catalogbot refuses it\ncatalogbot: %v", dir, f, got.err)
	case want.err != nil:
		if want.err.Error() != got.err.Error() {
			t.Errorf("%s [%s]: both refuse the directory, with different messages\n%s",
				dir, f, firstDiff("opm", "catalogbot", []byte(want.err.Error()+"\n"), []byte(got.err.Error()+"\n")))
		}
	default:
		for _, format := range renderFormats {
			if d := firstDiff("opm", "catalogbot", want.out[format], got.out[format]); d != "" {
				t.Errorf("%s [%s] -o %s: output differs\n%s", dir, f, format, d)
			}
		}
	}
}

// opmRender renders dir with operator-registry's library, set up as opm
// render's command sets it up, except that its registry refuses every pull:
// a bundle directory needs none, and the test must not reach the network.
func opmRender(t *testing.T, dir string, f renderFlags) renderOutcome {
	t.Helper()
	r := action.Render{Refs: []string{dir}, Registry: noPullRegistry{}}
	if f.template != "" {
		tmpl, err := template.New("image-ref-template").Parse(f.template)
		if err != nil {
			t.Fatal(err)
		}
		r.ImageRefTemplate = tmpl
	}
	var err error
	switch {
	case f.migrateAll:
		r.Migrations, err = migrations.NewMigrations(migrations.AllMigrations)
	case f.migrateLevel != "":
		r.Migrations, err = migrations.NewMigrations(f.migrateLevel)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := r.Run(context.Background())
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

// catalogbotRender renders dir as `catalogbot render DIR -o FORMAT` would
// with the same flags.
func catalogbotRender(t *testing.T, dir string, f renderFlags) renderOutcome {
	t.Helper()
	opts := render.Options{MigrateLevel: f.migrateLevel, ImageRefTemplate: f.template}
	if f.migrateAll {
		opts.MigrateLevel = render.MigrateAll
	}
	r, err := render.New(opts)
	if err != nil {
		t.Fatalf("catalogbot refuses the flags %s: %v", f, err)
	}
	cfg, err := r.Render(context.Background(), dir)
	if err != nil {
		var re *render.RefError
		if !errors.As(err, &re) {
			t.Fatalf("%s [%s]: catalogbot failed without a reference error: %v", dir, f, err)
		}
		return renderOutcome{err: err}
	}
	out := map[string][]byte{}
	for _, format := range renderFormats {
		var buf bytes.Buffer
		write := render.WriteJSON
		if format == "yaml" {
			write = render.WriteYAML
		}
		if err := write(&buf, cfg); err != nil {
			t.Fatalf("catalogbot write %s: %v", format, err)
		}
		out[format] = buf.Bytes()
	}
	return renderOutcome{out: out}
}

// noPullRegistry is an image.Registry that refuses everything, so a
// reference taken for an image fails instead of reaching a registry.
type noPullRegistry struct{}

var errNoPull = errors.New("image pulls are disabled in this test")

func (noPullRegistry) Pull(context.Context, image.Reference) error { return errNoPull }
func (noPullRegistry) Unpack(context.Context, image.Reference, string) error {
	return errNoPull
}
func (noPullRegistry) Labels(context.Context, image.Reference) (map[string]string, error) {
	return nil, errNoPull
}
func (noPullRegistry) Destroy() error { return nil }

// moduleDir is the directory of a module this module requires, in the
// module cache, where building this test has put it.
func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -m %s: %v\n%s", path, err, ee.Stderr)
		}
		t.Fatalf("go list -m %s: %v", path, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatalf("module %s is not in the module cache; run go mod download %s", path, path)
	}
	return dir
}

// bundleDirs lists, sorted, every directory under root that opm render
// takes for a bundle directory: one with both a manifests and a metadata
// subdirectory.
func bundleDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		manifests, err1 := os.Stat(filepath.Join(p, "manifests"))
		metadata, err2 := os.Stat(filepath.Join(p, "metadata"))
		if err1 == nil && err2 == nil && manifests.IsDir() && metadata.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

// opmMigrationLevels reads the levels opm's --migrate-level accepts, in
// order, from the help text that lists them.
func opmMigrationLevels(t *testing.T) []string {
	t.Helper()
	var levels []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- (\S+)\s+:`).FindAllStringSubmatch(migrations.HelpText(), -1) {
		if _, err := migrations.NewMigrations(m[1]); err != nil {
			t.Fatalf("opm lists migration level %q but refuses it: %v", m[1], err)
		}
		levels = append(levels, m[1])
	}
	if len(levels) == 0 {
		t.Fatalf("no migration levels found in opm's help text:\n%s", migrations.HelpText())
	}
	return levels
}

// firstDiff returns a unified-style hunk around the first difference of a
// and b, lines compared by longest common subsequence, or "" when they are
// equal.
func firstDiff(nameA, nameB string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	const context, maxChanged, maxLine = 3, 40, 160
	la, lb := lines(a), lines(b)
	// Equal heads and tails are common to any alignment; the LCS table is
	// only built for what lies between.
	head := 0
	for head < len(la) && head < len(lb) && la[head] == lb[head] {
		head++
	}
	endA, endB := len(la), len(lb)
	for endA > head && endB > head && la[endA-1] == lb[endB-1] {
		endA--
		endB--
	}
	ops := diffOps(la[head:endA], lb[head:endB])

	// ops is the middle as a sequence of ' ', '-', '+' steps; the hunk is
	// the first run of changes, up to the next stretch of more than
	// 2*context equal lines.
	type step struct {
		op   byte
		text string
	}
	var hunk []step
	for _, s := range la[max(0, head-context):head] {
		hunk = append(hunk, step{' ', s})
	}
	ia, ib, equalRun, changed := head, head, 0, 0
	for _, op := range ops {
		if op == ' ' && changed > 0 && equalRun >= context {
			break
		}
		switch op {
		case ' ':
			hunk = append(hunk, step{' ', la[ia]})
			ia++
			ib++
			equalRun++
		case '-':
			hunk = append(hunk, step{'-', la[ia]})
			ia++
			equalRun = 0
			changed++
		case '+':
			hunk = append(hunk, step{'+', lb[ib]})
			ib++
			equalRun = 0
			changed++
		}
		if changed >= maxChanged {
			break
		}
	}
	if equalRun < context && changed < maxChanged {
		for k := ia; k < len(la) && k < ia+context-equalRun; k++ {
			hunk = append(hunk, step{' ', la[k]})
		}
	}
	countA, countB := 0, 0
	for _, s := range hunk {
		if s.op != '+' {
			countA++
		}
		if s.op != '-' {
			countB++
		}
	}
	from := max(0, head-context) + 1
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n@@ -%d,%d +%d,%d @@\n", nameA, nameB, from, countA, from, countB)
	for _, s := range hunk {
		text, newline := strings.CutSuffix(s.text, "\n")
		// Bundle objects are base64 on one line: long lines are cut, so
		// a hunk stays readable.
		if len(text) > maxLine {
			text = fmt.Sprintf("%s... (%d more bytes)", text[:maxLine], len(text)-maxLine)
		}
		sb.WriteByte(s.op)
		sb.WriteString(text + "\n")
		if !newline {
			sb.WriteString("\\ No newline at end of file\n")
		}
	}
	if changed >= maxChanged {
		fmt.Fprintf(&sb, "(diff cut after %d changed lines)\n", maxChanged)
	}
	return sb.String()
}

// diffOps aligns a and b by longest common subsequence and returns the
// edit script: ' ' keeps a line, '-' drops one of a, '+' adds one of b.
// Past a size bound it gives up aligning and replaces a with b.
func diffOps(a, b []string) []byte {
	var ops []byte
	if len(a)*len(b) > 4<<20 {
		ops = append(ops, bytes.Repeat([]byte{'-'}, len(a))...)
		return append(ops, bytes.Repeat([]byte{'+'}, len(b))...)
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, ' ')
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, '-')
			i++
		default:
			ops = append(ops, '+')
			j++
		}
	}
	return ops
}

// lines splits data after each newline, with no empty last line.
func lines(data []byte) []string {
	l := strings.SplitAfter(string(data), "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
