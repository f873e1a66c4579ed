package checks_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
)

func githubGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	checkstest.Golden(t, filepath.Join("testdata", "github", name), got)
}

// hostile are findings whose text tries to break out of a workflow command:
// separators in properties, line breaks and percent signs in the message,
// a forged command on a line of its own.
var hostile = []checks.Finding{
	{Rule: "L12", Severity: checks.SeverityError, File: "ops/a:b,c.yaml", Line: 3,
		Message: "100% broken\r\n::set-output name=mergeable::true\n::error::forged"},
	{Rule: "rule,with:separators", Severity: checks.SeverityWarning, File: "ops/%41.yaml",
		Message: "percent %0A stays literal"},
}

// many returns n findings alternating warnings and errors, so that the
// ordering has to move errors ahead of warnings.
func many(n int) []checks.Finding {
	out := make([]checks.Finding, n)
	for i := range out {
		sev := checks.SeverityError
		switch i % 3 {
		case 1:
			sev = checks.SeverityWarning
		case 2:
			sev = checks.SeverityNote
		}
		out[i] = checks.Finding{Rule: "R", Severity: sev, File: fmt.Sprintf("p%02d/catalog.yaml", i), Line: i + 1, Message: fmt.Sprintf("finding %d", i)}
	}
	return out
}

func TestGitHubAnnotationsGolden(t *testing.T) {
	dup := checks.Finding{Rule: "C7", Severity: checks.SeverityError, File: "dup/catalog.yaml", Line: 9, Package: "dup", Message: "duplicate"}
	tests := []struct {
		name     string
		findings []checks.Finding
		opts     checks.AnnotationOptions
	}{
		{"sample", sample, checks.AnnotationOptions{}},
		{"escaping", hostile, checks.AnnotationOptions{}},
		{"dedupe", []checks.Finding{
			dup,
			dup,
			// Another rule saying the same at the same place is the
			// same problem to a reader.
			{Rule: "C8", Severity: dup.Severity, File: dup.File, Line: dup.Line, Package: dup.Package, Message: dup.Message},
			// A different line, severity or object is not.
			{Rule: "C7", Severity: checks.SeverityError, File: dup.File, Line: 10, Package: "dup", Message: "duplicate"},
			{Rule: "C7", Severity: checks.SeverityWarning, File: dup.File, Line: 9, Package: "dup", Message: "duplicate"},
			{Rule: "C7", Severity: checks.SeverityError, File: dup.File, Line: 9, Package: "other", Message: "duplicate"},
		}, checks.AnnotationOptions{}},
		{"over the limit", many(60), checks.AnnotationOptions{}},
		{"small limit", many(7), checks.AnnotationOptions{Max: 4}},
		{"exactly the limit", many(4), checks.AnnotationOptions{Max: 4}},
		{"in a subdirectory", sample[:3], checks.AnnotationOptions{Dir: "catalog-repo"}},
		{"none", nil, checks.AnnotationOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteGitHubAnnotations(&buf, tt.findings, tt.opts); err != nil {
				t.Fatal(err)
			}
			githubGolden(t, "annotations-"+strings.ReplaceAll(tt.name, " ", "-")+".golden", buf.Bytes())
		})
	}
}

// command is a workflow command line read back as the runner reads it.
type command struct {
	name  string
	props map[string]string
	data  string
}

var commandLine = regexp.MustCompile(`^::([a-z]+)(?: ([^:]*))?::(.*)$`)

// parseCommand reads a line as the Actions runner does: the command name,
// comma-separated key=value properties, the data after the second "::",
// then unescaping. It fails when the line is not a command.
func parseCommand(t *testing.T, line string) command {
	t.Helper()
	m := commandLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("not a workflow command: %q", line)
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	c := command{name: m[1], props: map[string]string{}, data: strings.NewReplacer("%0D", "\r", "%0A", "\n", "%25", "%").Replace(m[3])}
	if m[2] != "" {
		for _, kv := range strings.Split(m[2], ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				t.Fatalf("property %q of %q has no value", kv, line)
			}
			c.props[k] = unescape.Replace(v)
		}
	}
	return c
}

// TestGitHubAnnotationsRoundTrip reads the commands back as the runner
// would and checks that every property and message survives intact and
// that nothing forged a second command.
func TestGitHubAnnotationsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := checks.WriteGitHubAnnotations(&buf, hostile, checks.AnnotationOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(hostile) {
		t.Fatalf("%d lines for %d findings:\n%s", len(lines), len(hostile), buf.String())
	}
	want := []command{
		// A carriage return is spelled out: it would make a log line
		// read as another.
		{"error", map[string]string{"file": hostile[0].File, "line": "3", "title": hostile[0].Rule}, checks.Visible(hostile[0].Message)},
		{"warning", map[string]string{"file": hostile[1].File, "title": hostile[1].Rule}, hostile[1].Message},
	}
	for i, line := range lines {
		got := parseCommand(t, line)
		if got.name != want[i].name || got.data != want[i].data || fmt.Sprint(got.props) != fmt.Sprint(want[i].props) {
			t.Errorf("line %d reads back as %+v, want %+v", i, got, want[i])
		}
	}
}

func TestGitHubAnnotationsLimit(t *testing.T) {
	for _, n := range []int{0, 1, 49, 50, 51, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteGitHubAnnotations(&buf, many(n), checks.AnnotationOptions{}); err != nil {
				t.Fatal(err)
			}
			out := strings.TrimSuffix(buf.String(), "\n")
			var lines []string
			if out != "" {
				lines = strings.Split(out, "\n")
			}
			if want := min(n, checks.MaxAnnotations); len(lines) != want {
				t.Fatalf("%d lines, want %d", len(lines), want)
			}
			// Errors first, then warnings, then notes.
			rank := map[string]int{"error": 0, "warning": 1, "notice": 2}
			last := 0
			for _, l := range lines[:max(0, len(lines)-1)] {
				r := rank[parseCommand(t, l).name]
				if r < last {
					t.Fatalf("%q comes after a less severe annotation", l)
				}
				last = r
			}
			summarised := n > checks.MaxAnnotations
			if got := len(lines) > 0 && strings.Contains(lines[len(lines)-1], "not annotated"); got != summarised {
				t.Errorf("last line %q: summarised = %v, want %v", lines[len(lines)-1], got, summarised)
			}
			if summarised {
				c := parseCommand(t, lines[len(lines)-1])
				left := n - (checks.MaxAnnotations - 1)
				if c.name != "notice" || !strings.HasPrefix(c.data, fmt.Sprintf("%d more findings not annotated", left)) {
					t.Errorf("summary line %+v, want a notice counting %d", c, left)
				}
			}
		})
	}
}

// report is a run of two checks, one with findings and a summary that
// tries to break the table.
func report() checks.Report {
	return checks.Report{Results: []checks.Result{
		{Name: "fbc", Conclusion: checks.Failure, Findings: sample, Summary: "This change introduces 9 catalog error(s)."},
		{Name: "owners", Conclusion: checks.Success, Findings: []checks.Finding{}, Summary: "Approved by alice | bob."},
	}}
}

func TestGitHubSummaryGolden(t *testing.T) {
	tests := []struct {
		name string
		s    checks.GitHubSummary
	}{
		{"full", checks.GitHubSummary{
			Title:  "catalogbot check",
			Intro:  "**Not mergeable** at `0123456789ab`:\n\n- check fbc concluded failure",
			Report: report(),
			Notes:  "Only the author's approval was considered.",
		}},
		{"capped", checks.GitHubSummary{Title: "catalogbot check", Report: report(), MaxFindings: 3, Dir: "repo"}},
		{"long message", checks.GitHubSummary{Report: checks.Report{Results: []checks.Result{{
			Name: "fbc", Conclusion: checks.Failure,
			Findings: []checks.Finding{{Rule: "L12", Severity: checks.SeverityError, File: "a.yaml", Line: 1, Message: strings.Repeat("é", 500)}},
		}}}}},
		{"same finding in several catalogs", checks.GitHubSummary{Title: "catalogbot check", Report: checks.Report{Results: []checks.Result{{
			Name: "release", Conclusion: checks.Failure,
			Findings: []checks.Finding{
				{Rule: "RG1", Severity: checks.SeverityError, File: "catalogs/v4.12/foo/bundles.yaml", Line: 2, Package: "foo", Bundle: "foo.v1.0.0", Message: "bundle \"foo.v1.0.0\" is removed"},
				{Rule: "RG1", Severity: checks.SeverityError, File: "catalogs/v4.13/foo/bundles.yaml", Line: 2, Package: "foo", Bundle: "foo.v1.0.0", Message: "bundle \"foo.v1.0.0\" is removed"},
				{Rule: "RG1", Severity: checks.SeverityError, File: "catalogs/v4.14/foo/bundles.yaml", Line: 9, Package: "foo", Bundle: "foo.v1.0.0", Message: "bundle \"foo.v1.0.0\" is removed"},
				{Rule: "RG3", Severity: checks.SeverityError, File: "catalogs/v4.14/foo/channels.yaml", Line: 2, Package: "foo", Channel: "fast", Message: "channel \"fast\" is removed"},
			},
		}}}}},
		{"no findings", checks.GitHubSummary{Title: "catalogbot check", Intro: "**Mergeable**", Report: checks.Report{Results: []checks.Result{
			{Name: "owners", Conclusion: checks.Success, Summary: "Approved."},
		}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteGitHubSummary(&buf, tt.s); err != nil {
				t.Fatal(err)
			}
			githubGolden(t, "summary-"+strings.ReplaceAll(tt.name, " ", "-")+".golden", buf.Bytes())
		})
	}
}

func TestGitHubSummaryCap(t *testing.T) {
	rep := checks.Report{Results: []checks.Result{{Name: "fbc", Conclusion: checks.Failure, Findings: many(250)}}}
	var buf bytes.Buffer
	if err := checks.WriteGitHubSummary(&buf, checks.GitHubSummary{Report: rep}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if rows := strings.Count(out, " | fbc | p"); rows != checks.DefaultSummaryFindings {
		t.Errorf("%d finding rows, want %d", rows, checks.DefaultSummaryFindings)
	}
	// 84 errors, 83 warnings and 83 notes, errors first: the first 100
	// rows are the errors and 16 warnings.
	if want := "\n... and 150 more (67 warnings, 83 notes).\n"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
}

func TestGitHubOutputs(t *testing.T) {
	tests := []struct {
		name    string
		outputs []checks.GitHubOutput
		want    string
		wantErr bool
	}{
		{"plain", []checks.GitHubOutput{{"valid", "true"}, {"approved", "false"}, {"empty", ""}},
			"valid=true\napproved=false\nempty=\n", false},
		{"multi-line", []checks.GitHubOutput{{"reasons", "one\ntwo"}},
			"reasons<<CATALOGBOT_EOF\none\ntwo\nCATALOGBOT_EOF\n", false},
		{"carriage return only", []checks.GitHubOutput{{"r", "a\rb"}},
			"r<<CATALOGBOT_EOF\na\rb\nCATALOGBOT_EOF\n", false},
		// A value holding the delimiter would end its heredoc early and
		// could set other outputs; the delimiter changes instead.
		{"delimiter in the value", []checks.GitHubOutput{{"x", "a\nCATALOGBOT_EOF\nmergeable=true\nCATALOGBOT_EOF_1"}},
			"x<<CATALOGBOT_EOF_2\na\nCATALOGBOT_EOF\nmergeable=true\nCATALOGBOT_EOF_1\nCATALOGBOT_EOF_2\n", false},
		{"name with =", []checks.GitHubOutput{{"a=b", "c"}}, "", true},
		{"name with heredoc", []checks.GitHubOutput{{"a<<b", "c"}}, "", true},
		{"name with newline", []checks.GitHubOutput{{"a\nb", "c"}}, "", true},
		{"empty name", []checks.GitHubOutput{{"", "c"}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := checks.WriteGitHubOutputs(&buf, tt.outputs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if buf.Len() != 0 {
					t.Errorf("wrote %q before failing; a half-written output file is worse than none", buf.String())
				}
				return
			}
			if buf.String() != tt.want {
				t.Errorf("got\n%q\nwant\n%q", buf.String(), tt.want)
			}
		})
	}
}
