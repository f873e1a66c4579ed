package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
)

// The CLI reference is generated from the commands, so that it says what
// the binary does: docs/cli holds one page per command (cobra's doc
// package), and a few blocks of hand-written files are generated too: the
// README's table of commands, and the check's exit statuses and the
// Action's token permissions in docs/action.md, action.yml and the example
// workflows that run the check. A new command needs no edit beyond
// running make docs (this test with -update); make docs-check (this test
// without it) fails when anything generated is stale.

// cliDir is where the command pages go, relative to the module root.
const cliDir = "docs/cli"

// docBlock is a generated block inside a hand-written file: the lines
// between begin and end are the generator's, the rest is the author's.
type docBlock struct {
	file       string // relative to the module root
	begin, end string // whole marker lines
	body       string
}

// mdBlock and yamlBlock are the markers of a block named name in Markdown
// (an HTML comment, invisible when rendered) and in YAML (a comment).
func mdBlock(file, name, body string) docBlock {
	return docBlock{file,
		"<!-- BEGIN GENERATED " + name + ": make docs writes this block from the commands -->",
		"<!-- END GENERATED " + name + " -->", body}
}

func yamlBlock(file, name, body string) docBlock {
	return docBlock{file,
		"# BEGIN GENERATED " + name + ": make docs writes this block from the commands",
		"# END GENERATED " + name, body}
}

// docsRoot is the command tree as the binary builds it, with what cobra
// adds at the first Execute: the completion command and --version.
func docsRoot() *cobra.Command {
	root := newRootCmd(&app{stdout: io.Discard, stderr: io.Discard, version: "dev"})
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		// The footer would carry the day of generation, and the page
		// would change every time it is generated.
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// cliPages renders the command pages: file name -> content.
func cliPages(t *testing.T, root *cobra.Command) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		pages[e.Name()] = data
	}
	return pages
}

// pageName is the file cobra's doc package writes for c.
func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// commandTable is the README's table of commands: every command the
// binary offers, one line each, linked to its page. cobra's completion
// command is one line: its subcommands, one per shell, are cobra's.
func commandTable(root *cobra.Command) string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
				continue
			}
			if sub.Runnable() || !sub.HasAvailableSubCommands() || sub.Name() == "completion" {
				fmt.Fprintf(&b, "| [`%s`](%s/%s) | %s |\n", sub.CommandPath(), cliDir, pageName(sub), sub.Short)
			}
			if sub.Name() != "completion" {
				walk(sub)
			}
		}
	}
	walk(root)
	return b.String()
}

// exitCodesTable is exit codes as a Markdown table.
func exitCodesTable(codes []exitCode) string {
	var b strings.Builder
	b.WriteString("| status | meaning |\n|---:|---|\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "| %d | %s |\n", c.code, strings.ReplaceAll(c.meaning, "--", "`--`"))
	}
	return b.String()
}

// exitCodesComment is exit codes as YAML comment lines.
func exitCodesComment(codes []exitCode) string {
	var b strings.Builder
	for line := range strings.SplitSeq(exitCodesHelp(codes, 74), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	return b.String()
}

// indent puts prefix before every line of text, for a block inside a
// YAML mapping.
func indent(prefix, text string) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		b.WriteString(prefix + line)
	}
	return b.String()
}

// permissionsTable is the Action's token permissions as a Markdown table.
func permissionsTable(perms []ghapi.Permission) string {
	var b strings.Builder
	b.WriteString("| permission | access | what for |\n|---|---|---|\n")
	for _, p := range perms {
		fmt.Fprintf(&b, "| `%s` | %s | %s", p.Scope, p.Access, p.For)
		for i, e := range p.Endpoints {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			fmt.Fprintf(&b, "%sGET `%s`", sep, e)
		}
		b.WriteString(" |\n")
	}
	return b.String()
}

// permissionsComment is the Action's token permissions as YAML comment
// lines, for action.yml.
func permissionsComment(perms []ghapi.Permission) string {
	var b strings.Builder
	b.WriteString("# The token needs these permissions, and no others:\n")
	for _, p := range perms {
		b.WriteString(wrapWords(p.For, 76, "#   "+p.Scope+": "+p.Access+", for ", "#     "))
	}
	return b.String()
}

// permissionsBlock is the Action's token permissions as the entries of a
// workflow's permissions mapping, each under the comment that says why.
func permissionsBlock(perms []ghapi.Permission) string {
	var b strings.Builder
	for _, p := range perms {
		b.WriteString(wrapWords("For "+p.For+".", 78, "  # ", "  # "))
		fmt.Fprintf(&b, "  %s: %s\n", p.Scope, p.Access)
	}
	return b.String()
}

func generatedBlocks(root *cobra.Command) []docBlock {
	return []docBlock{
		mdBlock("README.md", "commands", commandTable(root)),
		mdBlock("docs/action.md", "exit-status", exitCodesTable(checkExitCodes)),
		mdBlock("docs/action.md", "permissions", permissionsTable(ghapi.ActionsPermissions)),
		mdBlock("docs/publishing.md", "rebuild-exit-status", exitCodesTable(rebuildExitCodes)),
		yamlBlock("examples/rebuild-cronjob.yaml", "rebuild-exit-status", indent("      ", exitCodesComment(rebuildExitCodes))),
		yamlBlock("action.yml", "exit-status", exitCodesComment(checkExitCodes)),
		yamlBlock("action.yml", "permissions", permissionsComment(ghapi.ActionsPermissions)),
		yamlBlock("examples/workflows/pr-check.yml", "permissions", permissionsBlock(ghapi.ActionsPermissions)),
		yamlBlock("examples/workflows/merge.yml", "permissions", permissionsBlock(ghapi.ActionsPermissions)),
	}
}

// replaceBlock returns content with the lines between b's markers replaced
// by b.body. A marker is a line of its own, indented or not, so a block can
// sit inside a YAML mapping.
func replaceBlock(content string, b docBlock) (string, error) {
	lines := strings.SplitAfter(content, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case b.begin:
			if begin < 0 {
				begin = i
			}
		case b.end:
			if begin >= 0 && end < 0 {
				end = i
			}
		}
	}
	if begin < 0 {
		return "", fmt.Errorf("%s: no line %q to generate the block after", b.file, b.begin)
	}
	if end < 0 {
		return "", fmt.Errorf("%s:%d: the block has no end line %q", b.file, begin+1, b.end)
	}
	return strings.Join(lines[:begin+1], "") + b.body + strings.Join(lines[end:], ""), nil
}

// TestDocs: docs/cli and the generated blocks are what the commands say.
// Run with -update (make docs) to write them.
func TestDocs(t *testing.T) {
	root := docsRoot()
	pages := cliPages(t, root)
	dir := filepath.Join(repoRoot, cliDir)
	have, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if checkstest.Updating() {
		for _, f := range have {
			if _, ok := pages[filepath.Base(f)]; !ok {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range pages {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		for _, f := range have {
			if _, ok := pages[filepath.Base(f)]; !ok {
				t.Errorf("%s/%s: no command has this page any more (run make docs)", cliDir, filepath.Base(f))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(pages)) {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s/%s: missing (run make docs)", cliDir, name)
				continue
			}
			if line, ok := firstDiff(got, pages[name]); !ok {
				t.Errorf("%s/%s:%d: stale, the command says otherwise (run make docs)", cliDir, name, line)
			}
		}
	}

	for _, b := range generatedBlocks(root) {
		path := filepath.Join(repoRoot, b.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := replaceBlock(string(data), b)
		if err != nil {
			t.Error(err)
			continue
		}
		if checkstest.Updating() {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if line, ok := firstDiff(data, []byte(want)); !ok {
			t.Errorf("%s:%d: the generated block is stale (run make docs)", b.file, line)
		}
	}
}

// firstDiff returns the first line where got and want differ, and whether
// they are equal.
func firstDiff(got, want []byte) (int, bool) {
	if bytes.Equal(got, want) {
		return 0, true
	}
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range min(len(g), len(w)) {
		if !bytes.Equal(g[i], w[i]) {
			return i + 1, false
		}
	}
	return min(len(g), len(w)) + 1, false
}

// TestDocsBlocks: a block is found by its markers and only its body
// changes; a file without the markers is an error naming it.
func TestDocsBlocks(t *testing.T) {
	b := mdBlock("f.md", "x", "new\n")
	for _, tt := range []struct {
		name, in, want, err string
	}{
		{"replaced", "a\n" + b.begin + "\nold\nold\n" + b.end + "\nz\n", "a\n" + b.begin + "\nnew\n" + b.end + "\nz\n", ""},
		{"empty body", b.begin + "\n" + b.end + "\n", b.begin + "\nnew\n" + b.end + "\n", ""},
		{"no begin", "a\n", "", "f.md: no line"},
		{"no end", "a\n" + b.begin + "\nold\n", "", "f.md:2: the block has no end line"},
		{"indented", "k:\n  " + b.begin + "\n  old: 1\n  " + b.end + "\n", "k:\n  " + b.begin + "\nnew\n  " + b.end + "\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := replaceBlock(tt.in, b)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestExitCodesHelp: check's help lists every exit status of its table,
// the status first on its line, and wraps the meanings.
func TestExitCodesHelp(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd(&app{stdout: &out, stderr: io.Discard, version: "dev"})
	root.SetArgs([]string{"check", "--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	help := out.String()
	for _, c := range checkExitCodes {
		if !strings.Contains(help, fmt.Sprintf("\n  %-4d%s", c.code, strings.Fields(c.meaning)[0])) {
			t.Errorf("check --help does not list exit status %d:\n%s", c.code, help)
		}
	}
	_, section, _ := strings.Cut(help, "Exit status:\n")
	section, _, _ = strings.Cut(section, "\n\n")
	for line := range strings.SplitSeq(section, "\n") {
		if len(line) > 80 {
			t.Errorf("check --help has a line of %d columns: %q", len(line), line)
		}
	}
}
