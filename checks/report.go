package checks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"
)

// WriteText prints one line per finding, compiler style, so editors and
// terminals can jump to the spot:
//
//	file:line: package/channel/bundle: warning: message
//
// Parts that are unknown are left out together with their separator; the
// severity is spelled out only for findings that are not errors. A message
// that spans several lines continues on lines indented with a tab. A non-empty
// summary follows the findings on a line of its own. Characters a terminal
// would obey rather than show are spelled out (Visible), in names on one
// line.
func WriteText(w io.Writer, findings []Finding, summary string) error {
	var b strings.Builder
	for _, f := range findings {
		b.WriteString(textLine(visibleFinding(f)))
		b.WriteByte('\n')
	}
	if summary != "" {
		b.WriteString(Visible(summary))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func textLine(f Finding) string {
	var b strings.Builder
	switch {
	case f.File != "" && f.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", f.File, f.Line)
	case f.File != "":
		fmt.Fprintf(&b, "%s: ", f.File)
	}
	if loc := locator(f); loc != "" {
		b.WriteString(loc)
		b.WriteString(": ")
	}
	if f.Severity != SeverityError && f.Severity != "" {
		b.WriteString(string(f.Severity))
		b.WriteString(": ")
	}
	b.WriteString(strings.ReplaceAll(f.Message, "\n", "\n\t"))
	return b.String()
}

// locator names the catalog object a finding is about, outermost first:
// "pkg", "pkg/channel", "pkg/bundle" or "pkg/channel/bundle". Without a
// package there is no path to anchor, so the rest is left out too: such
// findings are about a file, and the file is already named.
func locator(f Finding) string {
	if f.Package == "" {
		return ""
	}
	parts := []string{f.Package}
	for _, p := range []string{f.Channel, f.Bundle} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// WriteJSON writes doc as JSON indented by two spaces, with a trailing
// newline. HTML escaping is off because messages quote version ranges such
// as ">=1.0.0 <1.2.0", which must stay readable. Strings keep their data
// exactly, so a program can find a file by its real name, but characters a
// person would not see are written as \u escapes (visibleJSON), so the
// document read in a terminal or a diff shows them.
func WriteJSON(w io.Writer, doc any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := w.Write(visibleJSON(buf.Bytes()))
	return err
}

// SARIF constants. The schema URL is the one GitHub code scanning and the
// SARIF tooling recognise for 2.1.0.
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// SourceRoot is the uriBaseId of every artifact location: the root of
	// the checked-out sources, which code scanning resolves to the
	// repository root.
	SourceRoot = "%SRCROOT%"
	// InformationURI is the tool's home page, shown by SARIF viewers.
	InformationURI = "https://github.com/catalogbot/catalogbot"
	// fingerprintKey names catalogbot's partial fingerprint; the version
	// suffix lets the hash inputs change later without colliding with old
	// alerts.
	fingerprintKey = "catalogbotFinding/v1"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string     `json:"id"`
	Name             string     `json:"name,omitempty"`
	ShortDescription sarifText  `json:"shortDescription"`
	FullDescription  *sarifText `json:"fullDescription,omitempty"`
	HelpURI          string     `json:"helpUri,omitempty"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           sarifRegion           `json:"region"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// WriteSARIF writes findings as a SARIF 2.1.0 log with one run, in the subset
// GitHub code scanning accepts.
//
// rules is the tool's rule catalogue; every result points into it by index.
// A finding whose rule is missing from the catalogue gets a bare entry
// appended, so ruleIndex is always valid.
//
// baseURI says where the findings' files (relative to the checked root) sit
// relative to the source root: "catalog" turns "foo/catalog.yaml" into
// "catalog/foo/catalog.yaml" with uriBaseId %SRCROOT%. Code scanning maps
// such paths onto the repository, so for uploads baseURI should be the
// catalog directory relative to the repository root. An absolute URI
// ("file:///srv/catalog") is joined the same way and used without a base id.
//
// Every result needs a location and a startLine >= 1 for code scanning to
// accept it: findings without a line point at line 1, and findings without a
// file point at the checked root itself.
func WriteSARIF(w io.Writer, toolName, version string, rules []Rule, findings []Finding, baseURI string) error {
	driver := sarifDriver{
		Name:           toolName,
		InformationURI: InformationURI,
		Version:        version,
		Rules:          make([]sarifRule, 0, len(rules)),
	}
	index := make(map[string]int, len(rules))
	addRule := func(r Rule) {
		index[r.ID] = len(driver.Rules)
		desc := r.Description
		if desc == "" {
			desc = r.ID
		}
		driver.Rules = append(driver.Rules, sarifRule{
			ID:               r.ID,
			Name:             r.Name,
			ShortDescription: sarifText{Text: desc},
		})
	}
	for _, r := range rules {
		if _, dup := index[r.ID]; !dup {
			addRule(r)
		}
	}

	results := make([]sarifResult, 0, len(findings))
	seen := make(map[string]int)
	for _, f := range findings {
		i, ok := index[f.Rule]
		if !ok {
			addRule(Rule{ID: f.Rule})
			i = index[f.Rule]
		}
		// Code scanning shows the message as it is: what a reader
		// would not see is spelled out.
		text := findingText(visibleFinding(f))
		// Identical findings (same rule, object and message) are told
		// apart by their order, as CodeQL does, so neither hides the other.
		fp := fingerprint(f)
		seen[fp]++
		results = append(results, sarifResult{
			RuleID:    f.Rule,
			RuleIndex: i,
			Level:     sarifLevel(f.Severity),
			Message:   sarifText{Text: text},
			Locations: []sarifLocation{{PhysicalLocation: sarifPhysicalLocation{
				ArtifactLocation: artifactLocation(baseURI, f.File),
				Region:           sarifRegion{StartLine: max(f.Line, 1)},
			}}},
			PartialFingerprints: map[string]string{
				fingerprintKey: fmt.Sprintf("%s:%d", fp, seen[fp]),
			},
		})
	}

	return WriteJSON(w, sarifLog{
		Schema:  sarifSchema,
		Version: sarifVersion,
		Runs:    []sarifRun{{Tool: sarifTool{Driver: driver}, Results: results}},
	})
}

func sarifLevel(s Severity) string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityNote:
		return "note"
	default:
		return "error"
	}
}

// fingerprint identifies a finding across runs. The line is left out on
// purpose: editing lines above a problem must not turn it into a new alert.
func fingerprint(f Finding) string {
	h := sha256.New()
	for _, s := range []string{f.Rule, f.File, f.Package, f.Channel, f.Bundle, f.Message} {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func artifactLocation(baseURI, file string) sarifArtifactLocation {
	if u, err := url.Parse(baseURI); err == nil && u.IsAbs() {
		u.Path = path.Join(u.Path, file)
		u.RawPath = ""
		return sarifArtifactLocation{URI: u.String()}
	}
	p := path.Join(baseURI, file)
	if p == "" {
		p = "."
	}
	// url.URL percent-encodes what a URI may not hold (spaces, '%', '#')
	// and guards a first segment with a colon against reading as a scheme.
	return sarifArtifactLocation{URI: (&url.URL{Path: p}).String(), URIBaseID: SourceRoot}
}
