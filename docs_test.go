package catalogbot_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The documentation is split over the README, CONTRIBUTING.md and docs/,
// and its pages link into each other's sections. A section renamed or
// moved breaks those links silently on GitHub; this test finds them.

// docFiles are the documentation's Markdown files, relative to the module
// root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir("docs", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	// fence and codeSpan hide code, where brackets are not links.
	fence    = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	link     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// anchors are the ids GitHub gives the headings of a Markdown text: the
// heading lowercased, without punctuation, spaces made hyphens, and -1,
// -2, ... after repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			out[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			out[id] = true
		}
		seen[id]++
	}
	return out
}

// brokenLinks lists the relative links of file (content text) that name a
// file that does not exist or a section its target does not have.
func brokenLinks(file, text string, read func(string) (string, error)) []string {
	var out []string
	prose := codeSpan.ReplaceAllString(fence.ReplaceAllStringFunc(text, func(s string) string {
		return strings.Repeat("\n", strings.Count(s, "\n"))
	}), "")
	for _, m := range link.FindAllStringSubmatchIndex(prose, -1) {
		target := prose[m[2]:m[3]]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		line := strings.Count(prose[:m[0]], "\n") + 1
		path, anchor, _ := strings.Cut(target, "#")
		resolved := file
		if path != "" {
			resolved = filepath.Join(filepath.Dir(file), path)
		}
		content, err := read(resolved)
		if err != nil {
			out = append(out, fmt.Sprintf("%s:%d: link to %s: no such file", file, line, target))
			continue
		}
		if anchor != "" && !anchors(content)[anchor] {
			out = append(out, fmt.Sprintf("%s:%d: link to %s: %s has no section #%s", file, line, target, resolved, anchor))
		}
	}
	return out
}

// readTarget reads a link's target; a directory reads as empty, since
// GitHub shows its listing.
func readTarget(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", nil
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

// TestDocLinks: every relative link of the documentation names a file
// that exists and, with a #section, a heading of that file.
func TestDocLinks(t *testing.T) {
	files := docFiles(t)
	if len(files) < 10 {
		t.Fatalf("found %d documentation files: %v", len(files), files)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range brokenLinks(f, string(text), readTarget) {
			t.Error(b)
		}
	}
}

// TestBrokenLinks: the link check finds a missing file and a missing
// section, follows relative paths and repeated headings, and ignores
// links in code and to other sites.
func TestBrokenLinks(t *testing.T) {
	files := map[string]string{
		"docs/a.md": "# A\n\n## Same\n\n## Same\n\n## The App: `serve` (v2)\n",
		"README.md": "",
	}
	read := func(p string) (string, error) {
		if s, ok := files[p]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	for _, tt := range []struct {
		name, text, want string
	}{
		{"file", "see [a](docs/a.md)", ""},
		{"section", "see [a](docs/a.md#a)", ""},
		{"repeated heading", "[x](docs/a.md#same-1)", ""},
		{"punctuation dropped", "[x](docs/a.md#the-app-serve-v2)", ""},
		{"missing file", "line\n[x](docs/b.md)", "README.md:2: link to docs/b.md: no such file"},
		{"missing section", "[x](docs/a.md#nope)", "README.md:1: link to docs/a.md#nope: docs/a.md has no section #nope"},
		{"same file", "# Top\n[x](#top) [y](#gone)", "README.md:2: link to #gone: README.md has no section #gone"},
		{"in code", "`[x](nope.md)`\n```\n[y](nope.md)\n```\n", ""},
		{"other site", "[x](https://example.com/nope.md)", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files["README.md"] = tt.text
			got := strings.Join(brokenLinks("README.md", tt.text, read), "\n")
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
