package owners

import (
	"reflect"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// TestCommandsAsRead: a command counts where a reader of the rendered
// comment sees it as a line of its own, and nowhere else.
func TestCommandsAsRead(t *testing.T) {
	tests := []struct {
		name, body string
		want       []int // lines of the commands found
	}{
		{"plain", "LGTM\n/approve", []int{2}},
		{"after a paragraph and a blank line", "text\n\n/approve", []int{3}},
		{"fenced with backticks", "```\n/approve\n```\n/hold", []int{4}},
		{"fenced with tildes, longer", "~~~~ yaml\n/approve\n~~~\n/approve\n~~~~\n/hold", []int{6}},
		{"an unclosed fence runs to the end", "```\n/approve", nil},
		{"a fence in a list item", "- ```\n/approve\n  ```", nil},
		{"indented code", "    /approve", nil},
		{"a tab is indentation", "\t/approve", nil},
		{"block quote", "> /approve", nil},
		{"lazy continuation of a quote", "> he said\n/approve", nil},
		{"after a quote and a blank line", "> he said\n\n/approve", []int{3}},
		{"html comment", "<!--\n/approve\n-->\n/hold", []int{4}},
		{"inline html comment across lines", "text <!-- hidden\n/approve\n--> more", nil},
		{"html block", "<details>\n/approve\n</details>", nil},
		{"html block ends at a blank line", "<details>\n\n/approve\n</details>", []int{3}},
		{"pre block", "<pre>\n\n/approve\n</pre>", nil},
		{"code span across lines", "run `make\n/approve\nnow`", nil},
		{"closed code span", "run `make`\n/approve", []int{2}},
		{"tag across lines", "<span title=\"x\n/approve\n\">y</span>", nil},
		{"image alt across lines", "![alt\n/approve\n](x.png)", nil},
		{"link title across lines", "[a](u \"title\n/approve\n\")", nil},
		{"reference definition title", "[a]: http://x \"title\n/approve\n\"", nil},
		{"table row", "| a | b |\n|---|---|\n/approve | x", nil},
		{"strikethrough across lines", "~~not\n/approve\nthis~~", nil},
		{"a tilde run that cannot close", "~\xca\xca~0\n/Approve\n0~", nil},
		{"a tilde earlier in the paragraph", "about ~5 minutes\n/approve", nil},
		{"a tilde in an earlier paragraph", "about ~5 minutes\n\n/approve", []int{3}},
		{"escaped slash is not a command", "\\/approve", nil},
		{"CRLF", "ok\r\n/approve\r\n", []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, c := range parseCommands(tt.body) {
				got = append(got, c.Line)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands on lines %v, want %v\n%s", got, tt.want, tt.body)
			}
			// Every case holds against the renderer too.
			checkVisible(t, tt.body)
		})
	}
}

// FuzzCommandsVisible: no body yields a command that a reader of the
// rendered Markdown would not see as one. The reader is a CommonMark
// renderer with GitHub's extensions: a command counts only where the
// renderer puts plain text starting with "/" at the start of a source
// line, outside quotes, code, HTML, links, images, tables and struck-out
// text.
func FuzzCommandsVisible(f *testing.F) {
	for _, s := range []string{
		"/approve", "> x\n/approve", "```\n/approve\n```", "<!--\n/approve\n-->", "`a\n/approve\n`",
		"<a href=\"\n/approve\n\">x</a>", "![x\n/approve\n](y)", "~~a\n/approve\n~~", "a | b\n-|-\n/approve | c",
		"- a\n\n  /approve", "1. x\n/approve", "* * *\n/approve", "[x]:\n/approve", "<div>\n/approve",
		"Title\n/approve\n===", "*a\n/approve*", "> - ```\n/approve", "<?\n/approve\n?>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		checkVisible(t, body)
	})
}

// checkVisible fails when ParseCommands finds a command on a line the
// renderer does not show as plain text starting with "/".
func checkVisible(t *testing.T, body string) {
	t.Helper()
	cmds := parseCommands(body)
	if len(cmds) == 0 {
		return
	}
	visible := visibleSlashLines(body)
	for _, c := range cmds {
		if !visible[c.Line] {
			t.Fatalf("command %q on line %d is not plain text there for a reader:\n%q", c.Name, c.Line, body)
		}
	}
}

// visibleSlashLines renders body and returns the 1-based source lines that
// start with plain, visible text beginning with "/".
func visibleSlashLines(body string) map[int]bool {
	src := []byte(body)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	out := map[int]bool{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		txt, ok := n.(*ast.Text)
		if !ok {
			return ast.WalkContinue, nil
		}
		seg := txt.Segment
		if seg.Start >= len(src) || src[seg.Start] != '/' || (seg.Start > 0 && src[seg.Start-1] != '\n') {
			return ast.WalkContinue, nil
		}
		for p := n.Parent(); p != nil; p = p.Parent() {
			switch p.(type) {
			case *ast.Blockquote, *ast.CodeSpan, *ast.Link, *ast.Image, *ast.AutoLink, *ast.RawHTML, *ast.HTMLBlock,
				*ast.CodeBlock, *ast.FencedCodeBlock, *east.Table, *east.TableCell, *east.TableRow, *east.TableHeader, *east.Strikethrough:
				return ast.WalkContinue, nil
			}
		}
		out[strings.Count(body[:seg.Start], "\n")+1] = true
		return ast.WalkContinue, nil
	})
	return out
}
