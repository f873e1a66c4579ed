package checks_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/catalogbot/catalogbot/checks"
)

// hidden holds every kind of character a pull request can use to make a
// name read as another or to rewrite a terminal line.
const hidden = "a\u202eb\u2066c\u2069d\x1b[31me\rf\u200bg\ufeffh\u061ci\x7fj\u0085k\u2028l\U000e0041m\x00n"

func TestVisible(t *testing.T) {
	tests := []struct {
		name, in, want, line string
	}{
		{"plain", "kv-store-operator.v1.2.0", "kv-store-operator.v1.2.0", "kv-store-operator.v1.2.0"},
		{"non-ASCII letters stay", "opérateur ✅ ⚠️ 日本", "opérateur ✅ ⚠️ 日本", "opérateur ✅ ⚠️ 日本"},
		{"line breaks", "a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"bidi override", "x\u202etxt.exe", `x\u202etxt.exe`, `x\u202etxt.exe`},
		{"isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`, `\u2066a\u2067b\u2068c\u2069`},
		{"marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`, `\u200e\u200f\u061c`},
		{"zero width", "a\u200b\u200c\u200d\ufeffb", `a\u200b\u200c\u200d\ufeffb`, `a\u200b\u200c\u200d\ufeffb`},
		{"escape sequence", "\x1b[31mred", `\x1b[31mred`, `\x1b[31mred`},
		{"carriage return", "ok\rfail", `ok\rfail`, `ok\rfail`},
		{"C0 C1 DEL", "\x00\a\b\f\v\x7f\u0085\u009b", `\x00\a\b\f\v\x7f\u0085\u009b`, `\x00\a\b\f\v\x7f\u0085\u009b`},
		{"separators", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters", "a\U000e0041", `a\U000e0041`, `a\U000e0041`},
		{"invalid UTF-8", "a\xffb", `a\xffb`, `a\xffb`},
		{"backslash kept", `a\u202e`, `a\u202e`, `a\u202e`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checks.Visible(tt.in); got != tt.want {
				t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := checks.VisibleLine(tt.in); got != tt.line {
				t.Errorf("VisibleLine(%q) = %q, want %q", tt.in, got, tt.line)
			}
			// Escaping what is escaped changes nothing: reporters may
			// meet text another reporter already escaped.
			if got := checks.Visible(checks.Visible(tt.in)); got != checks.Visible(tt.in) {
				t.Errorf("Visible is not idempotent on %q: %q", tt.in, got)
			}
		})
	}
}

// noHidden fails when s holds a character a reader would not see.
func noHidden(t *testing.T, where, s string) {
	t.Helper()
	for i, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if checks.Hidden(r) || r == utf8.RuneError {
			t.Errorf("%s: raw %U at byte %d in %q", where, r, i, s)
			return
		}
	}
}

func TestVisibleJSON(t *testing.T) {
	doc := map[string]string{"file": hidden, "astral": "\U000e0041"}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := checks.VisibleJSON(data)
	noHidden(t, "VisibleJSON", string(got))
	// The data is unchanged for a program that reads the document.
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("VisibleJSON made invalid JSON: %v\n%s", err, got)
	}
	if back["file"] != hidden || back["astral"] != "\U000e0041" {
		t.Errorf("VisibleJSON changed the data: %q", back)
	}
	if !bytes.Contains(got, []byte(`\u202e`)) || !bytes.Contains(got, []byte(`\udb40\udc41`)) {
		t.Errorf("VisibleJSON = %s, want \\u escapes", got)
	}
	plain := []byte(`{"a":"opérateur ✅"}`)
	if got := checks.VisibleJSON(plain); !bytes.Equal(got, plain) {
		t.Errorf("VisibleJSON changed clean JSON: %s", got)
	}
}

// A JSON log handler writes the characters encoding/json leaves raw; the
// writer spells them out.
func TestVisibleJSONWriter(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(checks.VisibleJSONWriter(&buf), nil))
	log.Info("file "+hidden, "file", hidden, "group", slog.GroupValue(slog.String("pkg", hidden)))
	noHidden(t, "log", buf.String())
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("not a JSON record: %v\n%s", err, buf.String())
	}
	if rec["file"] != hidden {
		t.Errorf("file = %q, want the data unchanged", rec["file"])
	}
}

func TestCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a/catalog.yaml", "`a/catalog.yaml`"},
		{"a`b", "``a`b``"},
		{"`a``", "``` `a`` ```"},
		{" a ", "`  a  `"},
		{"", "` `"},
		{"a\nb\u202e", "`a\\nb\\u202e`"},
	}
	for _, tt := range tests {
		if got := checks.Code(tt.in); got != tt.want {
			t.Errorf("Code(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkdownText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no such image", "no such image"},
		{"[x](https://evil) ![i](u) <img src=x> **b** _i_ `c` # h | t ~s~ &amp; @admin",
			`\[x\](https://evil) \!\[i\](u) \<img src=x\> \*\*b\*\* \_i\_ \` + "`c\\`" + ` \# h \| t \~s\~ \&amp; \@admin`},
		{"v1.2.0-rc.1\n- item\n  12. ordered\n===\n+ x 3.", "v1.2.0-rc.1\n\\- item\n  12\\. ordered\n\\===\n\\+ x 3."},
		{"a\u202eb\nc", `a\\u202eb` + "\nc"},
	}
	for _, tt := range tests {
		got := checks.MarkdownText(tt.in)
		if got != tt.want {
			t.Errorf("MarkdownText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.ContainsAny(got, "\u202e") {
			t.Errorf("MarkdownText(%q) keeps a raw override", tt.in)
		}
	}
}

// TestReportersShowHidden runs every reporter on findings and summaries
// that carry characters a reader would not see, and fails on any that
// reaches the output raw.
func TestReportersShowHidden(t *testing.T) {
	f := checks.Finding{Rule: "C4", Severity: checks.SeverityError, File: "evil\u202eyaml.txt/catalog.yaml", Line: 3,
		Package: "pkg\u2066x\u2069", Channel: "stable\x1b[31m", Bundle: "b\r.v1", Message: "image quay.io/x\u200b/y:v1\r\n\x1b]8;;https://evil\x07: no such image"}
	rep := checks.Report{Results: []checks.Result{{Name: "fbc", Conclusion: checks.Failure, Findings: []checks.Finding{f},
		Summary: "`" + f.File + "`: " + f.Message}}}
	outputs := map[string]func(*bytes.Buffer) error{
		"text": func(b *bytes.Buffer) error {
			return checks.WriteText(b, rep.Results[0].Findings, rep.Results[0].Summary)
		},
		"json": func(b *bytes.Buffer) error { return checks.WriteJSON(b, rep) },
		"sarif": func(b *bytes.Buffer) error {
			return checks.WriteSARIF(b, "catalogbot", "v0", nil, rep.Results[0].Findings, "")
		},
		"annotations": func(b *bytes.Buffer) error {
			return checks.WriteGitHubAnnotations(b, rep.Results[0].Findings, checks.AnnotationOptions{})
		},
		"summary": func(b *bytes.Buffer) error {
			return checks.WriteGitHubSummary(b, checks.GitHubSummary{Title: "t", Intro: f.Message, Report: rep, Notes: f.Bundle})
		},
		"markdown": func(b *bytes.Buffer) error { _, err := b.WriteString(rep.Markdown()); return err },
	}
	for name, write := range outputs {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := write(&buf); err != nil {
				t.Fatal(err)
			}
			noHidden(t, name, buf.String())
			if name != "json" && name != "sarif" && !strings.Contains(buf.String(), `\u202e`) {
				t.Errorf("%s does not spell out U+202E:\n%s", name, buf.String())
			}
		})
	}
	// The annotation a check run is made from shows the same.
	for _, a := range checks.Annotations([]checks.Finding{f}) {
		noHidden(t, "annotation", a.File+a.Title+a.Message)
	}
	// SARIF viewers show the decoded message.
	var buf bytes.Buffer
	if err := checks.WriteSARIF(&buf, "catalogbot", "v0", nil, []checks.Finding{f}, ""); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Message struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	noHidden(t, "SARIF message", log.Runs[0].Results[0].Message.Text)
}

// BenchmarkVisible: every reporter passes its whole output through
// Visible, so text with nothing to spell out must cost little more than a
// scan.
func BenchmarkVisible(b *testing.B) {
	line := "catalog/kv-store-operator/catalog.yaml:117: kv-store-operator/kv-store-operator.v1.2.0: error parsing bundle version \"v1.2.0\"\n"
	for _, bc := range []struct{ name, text string }{
		{"ascii-64KiB", strings.Repeat(line, 65536/len(line))},
		{"non-ascii-64KiB", strings.Repeat("opérateur ✅ "+line, 65536/(len(line)+16))},
		{"hidden-64KiB", strings.Repeat(hidden+line, 65536/(len(line)+len(hidden)))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				checks.Visible(bc.text)
			}
		})
	}
}

// TestHiddenIsItsDefinition checks the shortcuts of Hidden against the
// Unicode categories it stands for, on every code point.
func TestHiddenIsItsDefinition(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := r != '\n' && r != '\t' && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029')
		if got := checks.Hidden(r); got != want {
			t.Fatalf("Hidden(%U) = %v, want %v", r, got, want)
		}
	}
}
