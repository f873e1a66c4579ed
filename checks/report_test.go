package checks_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
)

// sample covers every shape a finding can take: full location, no line, no
// file, no package, warnings and notes, a multi-line message, a rule the
// catalogue does not know, a file name that needs escaping in a URI, and two
// identical findings.
var sample = []checks.Finding{
	{Rule: "C4", Severity: checks.SeverityError, File: "kv-store-operator/catalog.yaml", Line: 40, Package: "kv-store-operatr", Channel: "candidate",
		Message: `unknown package "kv-store-operatr" for channel "candidate"`},
	{Rule: "C16", Severity: checks.SeverityError, File: "kv-store-operator/catalog.yaml", Line: 117, Package: "kv-store-operator", Bundle: "kv-store-operator.v1.2.0",
		Message: `error parsing bundle "kv-store-operator.v1.2.0" version "v1.2.0": Invalid character(s) found in major number "v1"`},
	{Rule: "M9", Severity: checks.SeverityError, File: "cert-rotator/catalog.yaml", Line: 7, Package: "cert-rotator", Channel: "stable-v1",
		Message: "channel contains one or more stranded bundles: cert-rotator.v1.3.0"},
	{Rule: "M14", Severity: checks.SeverityError, File: "cert-rotator/catalog.yaml", Line: 30, Package: "cert-rotator", Channel: "stable-v2", Bundle: "cert-rotator.v2.1.0",
		Message: `invalid skipRange ">=v1.5.0 <2.1.0": Could not parse comparator ">=v" in ">=v1.5.0"`},
	{Rule: "C17", Severity: checks.SeverityError, File: "cert-rotator/catalog.yaml", Line: 88, Package: "cert-rotator", Bundle: "cert-rotator-v2.0.0-a_b.01",
		Message: "error parsing bundle \"cert-rotator-v2.0.0-a_b.01\" release version \"a_b.01\": invalid release \"a_b.01\": segment 0: Invalid character(s) found in prerelease \"a_b\"\nsegment 1: Numeric PreRelease version must not contain leading zeroes \"01\""},
	{Rule: "L12", Severity: checks.SeverityError, File: "notes/read me.yaml", Line: 3,
		Message: "error converting YAML to JSON: yaml: line 3: did not find expected key"},
	{Rule: "L0", Severity: checks.SeverityError, File: "secret.yaml",
		Message: "open secret.yaml: permission denied"},
	{Rule: "W1", Severity: checks.SeverityWarning, File: "kv-store-operator/catalog.yaml", Line: 12, Package: "kv-store-operator",
		Message: "icon media type is not an image type"},
	{Rule: "N1", Severity: checks.SeverityNote,
		Message: "catalog holds no packages"},
	{Rule: "C7", Severity: checks.SeverityError, File: "dup/catalog.yaml", Line: 9, Package: "dup", Channel: "stable",
		Message: `invalid package "dup", channel "stable": duplicate entry "dup.v0.1.0"`},
	{Rule: "C7", Severity: checks.SeverityError, File: "dup/catalog.yaml", Line: 11, Package: "dup", Channel: "stable",
		Message: `invalid package "dup", channel "stable": duplicate entry "dup.v0.1.0"`},
}

var sampleRules = []checks.Rule{
	{ID: "L0", Name: "file-unreadable", Description: "A file in the catalog tree cannot be read."},
	{ID: "L12", Name: "yaml-syntax", Description: "A YAML document must be syntactically valid."},
	{ID: "C4", Name: "channel-unknown-package", Description: "A channel must belong to a declared package."},
	{ID: "C7", Name: "duplicate-channel-entry", Description: "A channel must not list the same bundle twice."},
	{ID: "C16", Name: "semver-version", Description: "A bundle version must be strict semver."},
	{ID: "C17", Name: "release-version", Description: "A bundle release must be dot-separated semver pre-release identifiers of at most 20 characters."},
	{ID: "M9", Name: "stranded-bundle", Description: "Every bundle in a channel must be reachable from the channel head."},
	{ID: "M14", Name: "skip-range", Description: "A skipRange must be a valid semver range."},
}

func TestTextLine(t *testing.T) {
	tests := []struct {
		name string
		f    checks.Finding
		want string
	}{
		{"full", checks.Finding{Severity: checks.SeverityError, File: "a/catalog.yaml", Line: 3, Package: "a", Channel: "stable", Bundle: "a.v1", Message: "m"},
			"a/catalog.yaml:3: a/stable/a.v1: m"},
		{"bundle without channel", checks.Finding{Severity: checks.SeverityError, File: "a.yaml", Line: 3, Package: "a", Bundle: "a.v1", Message: "m"},
			"a.yaml:3: a/a.v1: m"},
		{"package only", checks.Finding{Severity: checks.SeverityError, File: "a.yaml", Line: 1, Package: "a", Message: "m"},
			"a.yaml:1: a: m"},
		{"no line", checks.Finding{Severity: checks.SeverityError, File: "a.yaml", Message: "m"},
			"a.yaml: m"},
		{"no file", checks.Finding{Severity: checks.SeverityError, Package: "a", Message: "m"},
			"a: m"},
		{"nothing but a message", checks.Finding{Severity: checks.SeverityError, Message: "m"},
			"m"},
		{"channel without package", checks.Finding{Severity: checks.SeverityError, File: "a.yaml", Line: 2, Channel: "stable", Message: "m"},
			"a.yaml:2: m"},
		{"warning", checks.Finding{Severity: checks.SeverityWarning, File: "a.yaml", Line: 2, Package: "a", Message: "m"},
			"a.yaml:2: a: warning: m"},
		{"note", checks.Finding{Severity: checks.SeverityNote, File: "a.yaml", Message: "m"},
			"a.yaml: note: m"},
		{"unset severity reads as error", checks.Finding{File: "a.yaml", Line: 1, Message: "m"},
			"a.yaml:1: m"},
		{"multi-line message", checks.Finding{Severity: checks.SeverityError, File: "a.yaml", Line: 1, Message: "one\ntwo"},
			"a.yaml:1: one\n\ttwo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteText(&buf, []checks.Finding{tt.f}, ""); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(buf.String(), "\n"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteTextGolden(t *testing.T) {
	tests := []struct {
		name     string
		findings []checks.Finding
		summary  string
	}{
		{"text-sample", sample, "catalog invalid: 9 errors, 1 warning in 5 files (3 packages, 4 channels, 7 bundles)"},
		{"text-empty", nil, "catalog valid: 2 files (2 packages, 5 channels, 10 bundles)"},
		{"text-no-summary", sample[:2], ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteText(&buf, tt.findings, tt.summary); err != nil {
				t.Fatal(err)
			}
			checkstest.Golden(t, filepath.Join("testdata", tt.name+".golden"), buf.Bytes())
		})
	}
}

func TestWriteJSONGolden(t *testing.T) {
	doc := struct {
		Valid    bool             `json:"valid"`
		Findings []checks.Finding `json:"findings"`
		Empty    []checks.Finding `json:"empty"`
	}{Valid: false, Findings: sample[3:5], Empty: []checks.Finding{}}
	var buf bytes.Buffer
	if err := checks.WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	checkstest.Golden(t, filepath.Join("testdata", "json-sample.golden"), buf.Bytes())
}

func TestWriteJSONError(t *testing.T) {
	if err := checks.WriteJSON(&bytes.Buffer{}, func() {}); err == nil {
		t.Error("WriteJSON of a func succeeded; want an error")
	}
}

func TestWriteSARIFGolden(t *testing.T) {
	tests := []struct {
		name     string
		findings []checks.Finding
		baseURI  string
	}{
		// sarif-sample.golden is checked by hand against SARIF 2.1.0 and
		// GitHub's code scanning requirements; regenerate it with care.
		{"sarif-sample", sample, "catalog"},
		{"sarif-empty", nil, ""},
		{"sarif-absolute-base", sample[:1], "file:///srv/catalogs/main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := checks.WriteSARIF(&buf, "catalogbot", "1.2.3", sampleRules, tt.findings, tt.baseURI); err != nil {
				t.Fatal(err)
			}
			checkSARIF(t, buf.Bytes(), len(tt.findings))
			checkstest.Golden(t, filepath.Join("testdata", tt.name+".golden"), buf.Bytes())
		})
	}
}

func TestSARIFArtifactURIs(t *testing.T) {
	tests := []struct {
		name, base, file  string
		wantURI, wantBase string
	}{
		{"relative base", "catalog", "foo/catalog.yaml", "catalog/foo/catalog.yaml", "%SRCROOT%"},
		{"nested base", "catalogs/v4.18", "foo/catalog.yaml", "catalogs/v4.18/foo/catalog.yaml", "%SRCROOT%"},
		{"base is the source root", "", "foo/catalog.yaml", "foo/catalog.yaml", "%SRCROOT%"},
		{"dot base", ".", "foo/catalog.yaml", "foo/catalog.yaml", "%SRCROOT%"},
		{"no file", "catalog", "", "catalog", "%SRCROOT%"},
		{"no file, no base", "", "", ".", "%SRCROOT%"},
		{"needs escaping", "my catalog", "a b/x#1.yaml", "my%20catalog/a%20b/x%231.yaml", "%SRCROOT%"},
		{"colon in first segment", "", "a:b/c.yaml", "./a:b/c.yaml", "%SRCROOT%"},
		{"absolute base", "file:///srv/catalog", "foo/catalog.yaml", "file:///srv/catalog/foo/catalog.yaml", ""},
		{"absolute base with trailing slash", "file:///srv/catalog/", "foo/catalog.yaml", "file:///srv/catalog/foo/catalog.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			f := checks.Finding{Rule: "C1", Severity: checks.SeverityError, File: tt.file, Message: "m"}
			if err := checks.WriteSARIF(&buf, "catalogbot", "dev", nil, []checks.Finding{f}, tt.base); err != nil {
				t.Fatal(err)
			}
			log := checkSARIF(t, buf.Bytes(), 1)
			loc := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation
			if loc.URI != tt.wantURI || loc.URIBaseID != tt.wantBase {
				t.Errorf("artifactLocation = {%q, %q}, want {%q, %q}", loc.URI, loc.URIBaseID, tt.wantURI, tt.wantBase)
			}
		})
	}
}

// sarifDoc decodes the parts of a SARIF log that GitHub code scanning
// relies on.
type sarifDoc struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				InformationURI string `json:"informationUri"`
				Rules          []struct {
					ID               string `json:"id"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

// checkSARIF asserts the structural rules of SARIF 2.1.0 that code scanning
// enforces, independently of the golden bytes.
func checkSARIF(t *testing.T, data []byte, wantResults int) sarifDoc {
	t.Helper()
	var doc sarifDoc
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("SARIF does not decode: %v", err)
	}
	if doc.Schema != "https://json.schemastore.org/sarif-2.1.0.json" || doc.Version != "2.1.0" {
		t.Errorf("$schema, version = %q, %q", doc.Schema, doc.Version)
	}
	if len(doc.Runs) != 1 {
		t.Fatalf("got %d runs, want 1", len(doc.Runs))
	}
	run := doc.Runs[0]
	if run.Tool.Driver.Name == "" || run.Tool.Driver.InformationURI == "" {
		t.Errorf("driver name or informationUri missing")
	}
	ids := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		if r.ID == "" || r.ShortDescription.Text == "" {
			t.Errorf("rule %+v lacks an id or shortDescription", r)
		}
		if ids[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		ids[r.ID] = true
	}
	if len(run.Results) != wantResults {
		t.Fatalf("got %d results, want %d", len(run.Results), wantResults)
	}
	if !bytes.Contains(data, []byte(`"results": [`)) {
		t.Errorf("results must be an array, even when empty")
	}
	fps := map[string]bool{}
	for i, r := range run.Results {
		if r.RuleIndex == nil || *r.RuleIndex < 0 || *r.RuleIndex >= len(run.Tool.Driver.Rules) {
			t.Errorf("result %d: ruleIndex %v out of range", i, r.RuleIndex)
		} else if got := run.Tool.Driver.Rules[*r.RuleIndex].ID; got != r.RuleID {
			t.Errorf("result %d: ruleIndex points at %s, ruleId is %s", i, got, r.RuleID)
		}
		switch r.Level {
		case "error", "warning", "note":
		default:
			t.Errorf("result %d: level %q", i, r.Level)
		}
		if r.Message.Text == "" {
			t.Errorf("result %d: empty message", i)
		}
		if len(r.Locations) != 1 {
			t.Fatalf("result %d: %d locations, want 1", i, len(r.Locations))
		}
		pl := r.Locations[0].PhysicalLocation
		if pl.Region.StartLine < 1 {
			t.Errorf("result %d: startLine %d < 1", i, pl.Region.StartLine)
		}
		if pl.ArtifactLocation.URI == "" {
			t.Errorf("result %d: empty artifact uri", i)
		}
		if pl.ArtifactLocation.URIBaseID != "" && strings.HasPrefix(pl.ArtifactLocation.URI, "/") {
			t.Errorf("result %d: uri %q must be relative when uriBaseId is set", i, pl.ArtifactLocation.URI)
		}
		if len(r.PartialFingerprints) == 0 {
			t.Errorf("result %d: no partialFingerprints", i)
		}
		for _, fp := range r.PartialFingerprints {
			if fps[fp] {
				t.Errorf("result %d: fingerprint %s repeats", i, fp)
			}
			fps[fp] = true
		}
	}
	return doc
}
