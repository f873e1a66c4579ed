// Package fbcreport renders the outcome of an FBC validation in the formats
// the CLI offers: text for people, JSON for scripts, SARIF for code scanning,
// and opm's own message for drop-in comparisons with `opm validate`.
package fbcreport

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// ToolName names the tool in SARIF output.
const ToolName = "catalogbot"

// Formats are the formats Write offers, in the order help texts show them.
var Formats = checks.Formats{checks.FormatText, checks.FormatJSON, checks.FormatSARIF, checks.FormatOPM}

// Options carry what the formats need beyond the result.
type Options struct {
	// Version is the tool version reported in SARIF.
	Version string
	// BaseURI locates the validated directory for SARIF artifact URIs;
	// see BaseURI and checks.WriteSARIF.
	BaseURI string
}

// Write renders res in format f.
func Write(w io.Writer, f checks.Format, res *fbc.Result, opts Options) error {
	switch f {
	case checks.FormatText, "":
		return writeText(w, res)
	case checks.FormatJSON:
		return checks.WriteJSON(w, newDocument(res))
	case checks.FormatSARIF:
		return checks.WriteSARIF(w, ToolName, opts.Version, fbc.Rules(), res.Findings, opts.BaseURI)
	case checks.FormatOPM:
		// Mirrors the error.message of `opm validate -o json`, so scripts
		// can compare the two tools byte for byte. Nothing when valid,
		// as opm prints nothing then.
		if res.Valid() {
			return nil
		}
		// opm's words, with what a terminal would obey rather than
		// show spelled out.
		_, err := io.WriteString(w, checks.Visible(res.OPMMessage)+"\n")
		return err
	default:
		return fmt.Errorf("unknown output format %q", f)
	}
}

func writeText(w io.Writer, res *fbc.Result) error {
	// The verdict follows opm; should it ever say "invalid" with no error
	// finding to show for it, print opm's reason rather than leave the
	// reader with a bare verdict.
	if !res.Valid() && count(res.Findings, checks.SeverityError) == 0 {
		r := *res
		r.Findings = append(res.Findings[:len(res.Findings):len(res.Findings)], checks.Finding{
			Severity: checks.SeverityError,
			Message:  "opm validate: " + res.OPMMessage,
		})
		res = &r
	}
	return checks.WriteText(w, res.Findings, summary(res))
}

// summary is the one-line verdict, for example
//
//	catalog invalid: 3 errors, 1 warning in 12 files (2 packages, 3 channels, 10 bundles)
//	catalog valid: 12 files (2 packages, 3 channels, 10 bundles)
func summary(res *fbc.Result) string {
	s := res.Stats
	errs := count(res.Findings, checks.SeverityError)
	warns := count(res.Findings, checks.SeverityWarning)
	var counts []string
	if !res.Valid() {
		counts = append(counts, checks.Plural(errs, "error"))
	}
	if warns > 0 {
		counts = append(counts, checks.Plural(warns, "warning"))
	}
	verdict := "catalog valid: "
	if !res.Valid() {
		verdict = "catalog invalid: "
	}
	where := fmt.Sprintf("%s (%s, %s, %s)", checks.Plural(s.Files, "file"),
		checks.Plural(s.Packages, "package"), checks.Plural(s.Channels, "channel"), checks.Plural(s.Bundles, "bundle"))
	if len(counts) == 0 {
		return verdict + where
	}
	return verdict + strings.Join(counts, ", ") + " in " + where
}

func count(fs []checks.Finding, sev checks.Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == sev || (sev == checks.SeverityError && f.Severity == "") {
			n++
		}
	}
	return n
}

// Document is the JSON output of `catalogbot validate -o json`. Its schema is
// described in docs/output.md; fields are only ever added to it.
type Document struct {
	Valid      bool            `json:"valid"`
	Summary    DocumentSummary `json:"summary"`
	Findings   []Finding       `json:"findings"`
	OPMMessage string          `json:"opmMessage"`
}

// DocumentSummary counts findings by severity and what the run read.
type DocumentSummary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Files    int `json:"files"`
	Packages int `json:"packages"`
	Channels int `json:"channels"`
	Bundles  int `json:"bundles"`
}

// Finding is one finding in a Document. Every key is always present, with ""
// or 0 for unknown parts, so consumers need no existence checks.
type Finding struct {
	File     string          `json:"file"`
	Line     int             `json:"line"`
	Severity checks.Severity `json:"severity"`
	Rule     string          `json:"rule"`
	Package  string          `json:"package"`
	Channel  string          `json:"channel"`
	Bundle   string          `json:"bundle"`
	Message  string          `json:"message"`
}

// newDocument builds the JSON document for res.
func newDocument(res *fbc.Result) Document {
	doc := Document{
		Valid: res.Valid(),
		Summary: DocumentSummary{
			Errors:   count(res.Findings, checks.SeverityError),
			Warnings: count(res.Findings, checks.SeverityWarning),
			Files:    res.Stats.Files,
			Packages: res.Stats.Packages,
			Channels: res.Stats.Channels,
			Bundles:  res.Stats.Bundles,
		},
		Findings:   make([]Finding, 0, len(res.Findings)),
		OPMMessage: res.OPMMessage,
	}
	for _, f := range res.Findings {
		sev := f.Severity
		if sev == "" {
			sev = checks.SeverityError
		}
		doc.Findings = append(doc.Findings, Finding{
			File: f.File, Line: f.Line, Severity: sev, Rule: f.Rule,
			Package: f.Package, Channel: f.Channel, Bundle: f.Bundle, Message: f.Message,
		})
	}
	return doc
}

// BaseURI returns the SARIF base URI for a validated directory dir, given the
// working directory wd (the source root code scanning resolves against). A
// dir inside wd becomes a slash-separated path relative to it ("" for wd
// itself); any other dir becomes an absolute file URI, which is still valid
// SARIF but cannot be mapped onto a repository.
func BaseURI(wd, dir string) string {
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(wd, dir)
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && filepath.IsLocal(rel) {
		if rel == "." {
			return ""
		}
		return filepath.ToSlash(rel)
	}
	p := filepath.ToSlash(filepath.Clean(abs))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows volume, C:/x, becomes file:///C:/x
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}
