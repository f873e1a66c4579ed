package checks

import (
	"fmt"
	"strings"
)

// Format is an output format a command writes its result in. Every command
// names its formats with these words, so `-o json` means the same thing
// wherever it is accepted.
type Format string

const (
	// FormatText is for people reading a terminal.
	FormatText Format = "text"
	// FormatJSON is a JSON document for scripts.
	FormatJSON Format = "json"
	// FormatSARIF is SARIF 2.1.0 for code scanning.
	FormatSARIF Format = "sarif"
	// FormatOPM is the exact message `opm validate` would print.
	FormatOPM Format = "opm"
	// FormatGitHub is GitHub Actions workflow commands and a job summary.
	FormatGitHub Format = "github"
	// FormatMarkdown is the Markdown GitHub shows: a job summary, a check
	// run or a comment.
	FormatMarkdown Format = "markdown"
)

// Formats is the set of formats one command offers, in the order its help
// lists them. A command declares it once and parses its flag with it, so
// the error and the help name the same formats.
type Formats []Format

// String lists the formats, comma-separated, for help and error texts.
func (fs Formats) String() string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Parse returns the format named s if fs offers it. Names are matched
// exactly: "JSON" is not "json", as the flags have always been.
func (fs Formats) Parse(s string) (Format, error) {
	for _, f := range fs {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q (want %s)%s", s, fs, DidYouMean(s, names))
}

// Value returns a command-line flag value (a pflag.Value) that stores the
// parsed format in *p and rejects, while flags are parsed, any format fs
// does not offer. *p keeps its value as the flag's default.
func (fs Formats) Value(p *Format) *FormatValue {
	return &FormatValue{p: p, allowed: fs}
}

// FormatValue is a flag bound to a Format; see Formats.Value.
type FormatValue struct {
	p       *Format
	allowed Formats
}

func (v *FormatValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return string(*v.p)
}

// Set parses s into the bound format.
func (v *FormatValue) Set(s string) error {
	f, err := v.allowed.Parse(s)
	if err != nil {
		return err
	}
	*v.p = f
	return nil
}

// Type names the flag's value in help output.
func (v *FormatValue) Type() string { return "format" }
