package fbcreport_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbcreport"
)

var (
	validResult = &fbc.Result{
		Stats: fbc.Stats{Files: 2, Packages: 2, Channels: 5, Bundles: 10},
	}
	warnResult = &fbc.Result{
		Findings: []checks.Finding{
			{Rule: "W1", Severity: checks.SeverityWarning, File: "a/catalog.yaml", Line: 4, Package: "a", Message: "something to look at"},
		},
		Stats: fbc.Stats{Files: 1, Packages: 1, Channels: 1, Bundles: 1},
	}
	invalidResult = &fbc.Result{
		Findings: []checks.Finding{
			{Rule: "C4", Severity: checks.SeverityError, File: "kv-store-operator/catalog.yaml", Line: 40, Package: "kv-store-operatr", Channel: "candidate",
				Message: `unknown package "kv-store-operatr" for channel "candidate"`},
			{Rule: "C16", Severity: checks.SeverityError, File: "kv-store-operator/catalog.yaml", Line: 117, Package: "kv-store-operator", Bundle: "kv-store-operator.v1.2.0",
				Message: `error parsing bundle "kv-store-operator.v1.2.0" version "v1.2.0": Invalid character(s) found in major number "v1"`},
			{Rule: "M14", Severity: checks.SeverityError, File: "cert-rotator/catalog.yaml", Line: 31, Package: "cert-rotator", Channel: "stable-v2", Bundle: "cert-rotator.v2.1.0",
				Message: `invalid skipRange ">=v1.5.0 <2.1.0": Could not parse comparator ">=v" in ">=v1.5.0"`},
			{Rule: "W1", Severity: checks.SeverityWarning, File: "cert-rotator/catalog.yaml", Line: 2, Package: "cert-rotator", Message: "something to look at"},
		},
		OPMMessage: `unknown package "kv-store-operatr" for channel "candidate"`,
		Stats:      fbc.Stats{Files: 2, Packages: 2, Channels: 6, Bundles: 10},
	}
	// treeResult carries opm's multi-line error tree, which -o opm must
	// print verbatim.
	treeResult = &fbc.Result{
		Findings: []checks.Finding{
			{Rule: "M5", Severity: checks.SeverityError, File: "foo.yaml", Line: 1, Package: "foo", Channel: "fast", Message: "channel must contain at least one bundle"},
		},
		OPMMessage: "invalid index:\n└── invalid package \"foo\":\n    └── invalid channel \"fast\":\n        └── channel must contain at least one bundle",
		Stats:      fbc.Stats{Files: 1, Packages: 1, Channels: 1},
	}
	// gapResult is invalid without an error finding; text output must
	// still say why.
	gapResult = &fbc.Result{
		OPMMessage: `duplicate package "foo"`,
		Stats:      fbc.Stats{Files: 1, Packages: 2},
	}
)

func TestWriteGolden(t *testing.T) {
	results := []struct {
		name string
		res  *fbc.Result
	}{
		{"valid", validResult},
		{"warn", warnResult},
		{"invalid", invalidResult},
		{"tree", treeResult},
		{"gap", gapResult},
	}
	for _, r := range results {
		for _, f := range fbcreport.Formats {
			name := r.name + "." + string(f)
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				opts := fbcreport.Options{Version: "1.2.3", BaseURI: "catalog"}
				if err := fbcreport.Write(&buf, f, r.res, opts); err != nil {
					t.Fatal(err)
				}
				checkstest.Golden(t, filepath.Join("testdata", name+".golden"), buf.Bytes())
			})
		}
	}
}

func TestWriteOPMMirrorsOPM(t *testing.T) {
	tests := []struct {
		res  *fbc.Result
		want string
	}{
		{validResult, ""},
		{warnResult, ""},
		{invalidResult, invalidResult.OPMMessage + "\n"},
		{treeResult, treeResult.OPMMessage + "\n"},
	}
	for i, tt := range tests {
		var buf bytes.Buffer
		if err := fbcreport.Write(&buf, checks.FormatOPM, tt.res, fbcreport.Options{}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("case %d: got %q, want %q", i, buf.String(), tt.want)
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := fbcreport.Write(&bytes.Buffer{}, "xml", validResult, fbcreport.Options{}); err == nil {
		t.Error("Write with format xml succeeded; want an error")
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		res  *fbc.Result
		want string
	}{
		{validResult, "catalog valid: 2 files (2 packages, 5 channels, 10 bundles)"},
		{&fbc.Result{}, "catalog valid: 0 files (0 packages, 0 channels, 0 bundles)"},
		{&fbc.Result{Stats: fbc.Stats{Files: 1, Packages: 1, Channels: 1, Bundles: 1}}, "catalog valid: 1 file (1 package, 1 channel, 1 bundle)"},
		{warnResult, "catalog valid: 1 warning in 1 file (1 package, 1 channel, 1 bundle)"},
		{invalidResult, "catalog invalid: 3 errors, 1 warning in 2 files (2 packages, 6 channels, 10 bundles)"},
		{treeResult, "catalog invalid: 1 error in 1 file (1 package, 1 channel, 0 bundles)"},
		{gapResult, "catalog invalid: 0 errors in 1 file (2 packages, 0 channels, 0 bundles)"},
	}
	for _, tt := range tests {
		if got := fbcreport.Summary(tt.res); got != tt.want {
			t.Errorf("Summary = %q, want %q", got, tt.want)
		}
	}
}

func TestBaseURI(t *testing.T) {
	tests := []struct {
		wd, dir, want string
	}{
		{"/repo", "catalog", "catalog"},
		{"/repo", "./catalogs/v4.18/", "catalogs/v4.18"},
		{"/repo", ".", ""},
		{"/repo", "/repo", ""},
		{"/repo", "/repo/catalog", "catalog"},
		{"/repo", "../other/catalog", "file:///other/catalog"},
		{"/repo", "/srv/my catalog", "file:///srv/my%20catalog"},
	}
	for _, tt := range tests {
		if got := fbcreport.BaseURI(tt.wd, tt.dir); got != tt.want {
			t.Errorf("BaseURI(%q, %q) = %q, want %q", tt.wd, tt.dir, got, tt.want)
		}
	}
}

// TestRulesCatalogue keeps the published rule catalogue complete and well
// formed: SARIF consumers key alerts on these ids and names.
func TestRulesCatalogue(t *testing.T) {
	want := map[string]bool{"L0": true}
	for prefix, n := range map[string]int{"L": 20, "C": 29, "M": 18} {
		for i := 1; i <= n; i++ {
			want[fmt.Sprintf("%s%d", prefix, i)] = true
		}
	}
	name := regexp.MustCompile(`^[a-z0-9]+(?:[-.][a-z0-9]+)*$`)
	seenID, seenName := map[string]bool{}, map[string]bool{}
	for _, r := range fbc.Rules() {
		if !want[r.ID] {
			t.Errorf("unexpected rule id %q", r.ID)
		}
		if seenID[r.ID] {
			t.Errorf("rule id %q listed twice", r.ID)
		}
		seenID[r.ID] = true
		if !name.MatchString(r.Name) {
			t.Errorf("rule %s: name %q is not kebab-case", r.ID, r.Name)
		}
		if seenName[r.Name] {
			t.Errorf("rule %s: name %q used twice", r.ID, r.Name)
		}
		seenName[r.Name] = true
		if r.Description == "" || !strings.HasSuffix(r.Description, ".") {
			t.Errorf("rule %s: description %q should be one sentence", r.ID, r.Description)
		}
	}
	for id := range want {
		if !seenID[id] {
			t.Errorf("rule %s missing from the catalogue", id)
		}
	}
}
