package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/declcfg"
	"github.com/catalogbot/catalogbot/checks/fbc/property"
)

// catalog builds a declcfg of package pkg: one channel per entry of chans
// (entries given as "name" or "name<replaces" with optional
// "|skip1,skip2" and "~range"), and a bundle at version v for every
// "name=v" of bundles.
func catalog(pkg string, chans map[string][]string, bundles ...string) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: pkg}}}
	for _, name := range sortedKeys(chans) {
		c := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: name}
		for _, spec := range chans[name] {
			var e declcfg.ChannelEntry
			spec, e.SkipRange, _ = strings.Cut(spec, "~")
			spec, skips, _ := strings.Cut(spec, "|")
			if skips != "" {
				e.Skips = strings.Split(skips, ",")
			}
			e.Name, e.Replaces, _ = strings.Cut(spec, "<")
			c.Entries = append(c.Entries, e)
		}
		cfg.Channels = append(cfg.Channels, c)
	}
	for _, b := range bundles {
		name, v, _ := strings.Cut(b, "=")
		value, _ := json.Marshal(property.Package{PackageName: pkg, Version: v})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: pkg, Name: name,
			Properties: []property.Property{{Type: property.TypePackage, Value: value}}})
	}
	return cfg
}

func sortedKeys(m map[string][]string) []string {
	return slices.Sorted(maps.Keys(m))
}

func TestReachesHead(t *testing.T) {
	cfg := catalog("foo", map[string][]string{
		"stable": {"a", "b<a", "c|b", "d<c~>=0.5.0 <1.0.0", "lone"},
	}, "a=0.1.0", "b=0.2.0", "c=0.3.0", "d=1.0.0", "lone=0.4.0", "gone=0.9.0", "old=0.0.1")
	g, ok := Build(cfg, "foo", "stable")
	if !ok {
		t.Fatal("no channel")
	}
	tests := []struct {
		name, version string
		want          bool
	}{
		{"d", "", true},         // the head (lone is a head too)
		{"c", "", true},         // replaces
		{"b", "", true},         // skips
		{"a", "", true},         // through b
		{"lone", "", true},      // a head of its own
		{"gone", "0.9.0", true}, // outside the channel, in d's skipRange
		{"old", "0.0.1", false}, // outside, in no range
		{"gone", "", false},     // outside, version unknown
	}
	for _, tt := range tests {
		if got := g.ReachesHead(tt.name, tt.version); got != tt.want {
			t.Errorf("ReachesHead(%q, %q) = %v, want %v", tt.name, tt.version, got, tt.want)
		}
	}
	// With d alone as the target, lone is stranded and a skipRange edge
	// from lone (0.4.0) is not taken, since it is outside the range.
	if g.Reaches([]string{"d"})("lone", "") {
		t.Error("lone reaches d")
	}
}

func TestMermaid(t *testing.T) {
	base := catalog("foo", map[string][]string{
		"stable": {"foo.v1.0.0", "foo.v1.1.0<foo.v1.0.0", "foo.v1.2.0<foo.v1.1.0"},
	}, "foo.v1.0.0=1.0.0", "foo.v1.1.0=1.1.0", "foo.v1.2.0=1.2.0")
	head := catalog("foo", map[string][]string{
		"stable": {"foo.v1.1.0<foo.v1.0.0", "foo.v1.2.0<foo.v1.1.0", "foo.v1.3.0<foo.v1.2.0|foo.v1.1.0~<1.2.0"},
		"fast":   {"foo.v1.3.0"},
	}, "foo.v1.1.0=1.1.0", "foo.v1.2.0=1.2.0", "foo.v1.3.0=1.3.0")
	head.Deprecations = []declcfg.Deprecation{{Schema: declcfg.SchemaDeprecation, Package: "foo", Entries: []declcfg.DeprecationEntry{
		{Reference: declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: "foo.v1.1.0"}, Message: "use 1.3.0"},
	}}}
	weird := catalog(`we"ird`, map[string][]string{
		`st"a<b>le#[x]`: {`b"1`, `b]2<b"1`, `b3<not["here"]`},
	}, `b"1=1.0.0`, "b]2=", "b3=3.0.0")

	tests := []struct {
		name   string
		cfg    *declcfg.DeclarativeConfig
		opts   Options
		golden string
	}{
		{"one channel, no base", head, Options{Channel: "stable"}, "stable.mmd"},
		{"every channel, with a base", head, Options{Base: base}, "changed.mmd"},
		{"names that need escaping", weird, Options{}, "escaped.mmd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Mermaid(&b, tt.cfg, tt.opts); err != nil {
				t.Fatal(err)
			}
			checkstest.Golden(t, "testdata/"+tt.golden, b.Bytes())
		})
	}

	// The pull request's form: a code block, then the notes.
	pics, err := Pictures(head, Options{Package: "foo", Channel: "stable", Base: base})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Markdown(&b, pics[0]); err != nil {
		t.Fatal(err)
	}
	checkstest.Golden(t, "testdata/changed.md", b.Bytes())

	if _, err := Pictures(head, Options{Channel: "nope"}); err == nil || !strings.Contains(err.Error(), `no channel named "nope"`) {
		t.Errorf("selecting no channel: %v", err)
	}
}

// TestCollapse: a channel larger than MaxNodes is drawn as its head and
// the changed neighbourhood, and says how much it left out.
func TestCollapse(t *testing.T) {
	var entries, bundles []string
	for i := range 100 {
		e := fmt.Sprintf("b%03d", i)
		if i > 0 {
			e += fmt.Sprintf("<b%03d", i-1)
		}
		entries = append(entries, e)
		bundles = append(bundles, fmt.Sprintf("b%03d=0.%d.0", i, i))
	}
	base := catalog("big", map[string][]string{"stable": entries}, bundles...)
	// The change inserts b050x between b050 and b051.
	head := catalog("big", map[string][]string{"stable": append(append(append([]string{}, entries[:51]...), "b050x<b050"), append([]string{"b051<b050x"}, entries[52:]...)...)},
		append(bundles, "b050x=0.50.1")...)
	pics, err := Pictures(head, Options{Base: base, MaxNodes: 10})
	if err != nil {
		t.Fatal(err)
	}
	p := pics[0]
	if p.Hidden() != 91 {
		t.Errorf("%d hidden, want 91 of 101", p.Hidden())
	}
	for _, n := range []string{"b099", "b050x", "b050", "b051"} {
		if !p.visible(n) {
			t.Errorf("%s is not drawn", n)
		}
	}
	var b bytes.Buffer
	if err := Markdown(&b, p); err != nil {
		t.Fatal(err)
	}
	checkstest.Golden(t, "testdata/collapsed.md", b.Bytes())
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{`plain-1.0`, `plain-1.0`},
		{`a"b`, `a#quot;b`},
		{`<script>`, `#lt;script#gt;`},
		{`#quot;`, `#35;quot;`},
		{"line\nbreak", "line break"},
		{"rtl\u202eoverride", "rtl#8238;override"},
		{`[x](y)`, `[x](y)`},
		// Invisible characters that make one name read as another.
		{"etcd\u200b", "etcd#8203;"},
		{"arabic\u061cmark", "arabic#1564;mark"},
		{"bom\ufeff", "bom#65279;"},
		{"tag\U000e0041", "tag#917569;"},
		{"line\u2028sep", "line#8232;sep"},
	}
	for _, tt := range tests {
		if got := escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestComment: a name on a Mermaid comment line can neither end the line
// nor hide what it says.
func TestComment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\nflowchart", "a<U+000A>flowchart"},
		{"tab\there", "tab<U+0009>here"},
		{"rtl\u202e", "rtl<U+202E>"},
		{"zero\u200bwidth", "zero<U+200B>width"},
		{"line\u2029sep", "line<U+2029>sep"},
	}
	for _, tt := range tests {
		if got := comment(tt.in); got != tt.want {
			t.Errorf("comment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkLargeChannel draws a channel of 1,000 bundles, each replacing
// the one before and taking the previous ten versions in by skipRange,
// compared with a base that lacks the newest: Build, Compare, the
// collapse to DefaultMaxNodes and the Markdown.
func BenchmarkLargeChannel(b *testing.B) {
	var entries, bundles []string
	for i := range 1000 {
		e := fmt.Sprintf("b%04d", i)
		if i > 0 {
			e += fmt.Sprintf("<b%04d~>=0.%d.0 <0.%d.0", i-1, max(i-10, 0), i)
		}
		entries = append(entries, e)
		bundles = append(bundles, fmt.Sprintf("b%04d=0.%d.0", i, i))
	}
	base := catalog("big", map[string][]string{"stable": entries[:999]}, bundles[:999]...)
	head := catalog("big", map[string][]string{"stable": entries}, bundles...)
	b.ReportAllocs()
	for b.Loop() {
		pics, err := Pictures(head, Options{Base: base})
		if err != nil {
			b.Fatal(err)
		}
		if err := Markdown(io.Discard, pics[0]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNotesEscaped: the notes under a drawing are the pull request's data;
// a removed bundle's name can neither mention a team nor start markup.
func TestNotesEscaped(t *testing.T) {
	p := &Picture{Graph: &Graph{Package: "foo", Channel: "stable"}}
	p.Removed = []Node{{Name: "foo.v1@acme/admins"}, {Name: "x~~strike~~|a|b|&amp;!"}}
	var b bytes.Buffer
	if err := Markdown(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, raw := range []string{"v1@acme", "x~~strike", "b|&amp;"} {
		if strings.Contains(out, raw) {
			t.Errorf("a note shows %q unescaped:\n%s", raw, out)
		}
	}
	for _, escaped := range []string{`foo.v1\@acme/admins`, `\~\~strike\~\~`, `\|a\|b\|\&amp;\!`} {
		if !strings.Contains(out, escaped) {
			t.Errorf("the note lacks %s, as checks.MarkdownText escapes it:\n%s", escaped, out)
		}
	}
}

// TestCollapseEdges: a channel of few bundles whose skips make more edges
// than GitHub's Mermaid renders (500) collapses, as a large channel does,
// to a drawing within the limit that still shows the heads and the change.
func TestCollapseEdges(t *testing.T) {
	var entries, bundles []string
	var prev []string
	for i := range 36 {
		name := fmt.Sprintf("b%02d", i)
		e := name
		if len(prev) > 0 {
			e += "|" + strings.Join(prev, ",")
		}
		entries = append(entries, e)
		bundles = append(bundles, fmt.Sprintf("%s=0.%d.0", name, i))
		prev = append(prev, name)
	}
	base := catalog("dense", map[string][]string{"stable": entries[:35]}, bundles[:35]...)
	head := catalog("dense", map[string][]string{"stable": entries}, bundles...)
	g, _ := Build(head, "dense", "stable")
	if len(g.Nodes) > DefaultMaxNodes || len(g.Edges) <= MaxEdges {
		t.Fatalf("the fixture has %d bundles and %d edges; want at most %d bundles and more than %d edges", len(g.Nodes), len(g.Edges), DefaultMaxNodes, MaxEdges)
	}
	pics, err := Pictures(head, Options{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	p := pics[0]
	var b bytes.Buffer
	if err := WriteMermaid(&b, pics); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "-->") + strings.Count(b.String(), ".->"); n > MaxEdges || n == 0 {
		t.Errorf("the drawing has %d edges; want some, and at most %d", n, MaxEdges)
	}
	if p.Hidden() == 0 || !p.visible("b35") {
		t.Errorf("hidden %d, head drawn %v; want a collapsed drawing that shows the new head", p.Hidden(), p.visible("b35"))
	}
}
