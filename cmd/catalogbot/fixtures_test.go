package main

// These tests run the real validator on the fixture catalogs under
// testdata/catalogs and pin what it must report for them.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/fbcreport"
)

func decodeDoc(t *testing.T, out string) fbcreport.Document {
	t.Helper()
	var doc fbcreport.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not a JSON document: %v\n%s", err, out)
	}
	return doc
}

func TestValidCatalog(t *testing.T) {
	for _, format := range []string{"text", "json", "sarif", "opm"} {
		t.Run(format, func(t *testing.T) {
			r := cli(t, nil, "validate", "-o", format, validDir)
			if r.code != exitOK {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, exitOK, r.stdout, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want nothing", r.stderr)
			}
			switch format {
			case "text":
				if !strings.HasPrefix(r.stdout, "catalog valid: ") || strings.Count(r.stdout, "\n") != 1 {
					t.Errorf("stdout = %q, want just the summary", r.stdout)
				}
			case "json":
				doc := decodeDoc(t, r.stdout)
				if !doc.Valid || len(doc.Findings) != 0 || doc.OPMMessage != "" || doc.Summary.Errors != 0 {
					t.Errorf("document = %+v, want valid with no findings", doc)
				}
			case "sarif":
				var log struct {
					Runs []struct {
						Results []json.RawMessage `json:"results"`
					} `json:"runs"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 0 {
					t.Errorf("SARIF = %s (%v), want one run without results", r.stdout, err)
				}
			case "opm":
				if r.stdout != "" {
					t.Errorf("stdout = %q, want nothing, as opm prints", r.stdout)
				}
			}
		})
	}
}

// TestValidCatalogStats pins what the validator counts in the valid fixture.
func TestValidCatalogStats(t *testing.T) {
	r := cli(t, nil, "validate", validDir)
	if want := "catalog valid: 2 files (2 packages, 5 channels, 10 bundles)\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
	doc := decodeDoc(t, cli(t, nil, "validate", "-o", "json", validDir).stdout)
	want := fbcreport.DocumentSummary{Files: 2, Packages: 2, Channels: 5, Bundles: 10}
	if doc.Summary != want {
		t.Errorf("summary = %+v, want %+v", doc.Summary, want)
	}
}

// planted lists the errors planted in the broken fixture, one per class
// (see the comments in its files). Each is found by a needle that occurs
// once, inside the blob the finding must point into.
var planted = []struct {
	rule, file, needle string
	channel, bundle    string
}{
	{rule: "C4", file: "kv-store-operator/catalog.yaml", needle: "package: kv-store-operatr", channel: "candidate"},
	{rule: "C16", file: "kv-store-operator/catalog.yaml", needle: "version: v1.2.0", bundle: "kv-store-operator.v1.2.0"},
	{rule: "M9", file: "cert-rotator/catalog.yaml", needle: "name: stable-v1", channel: "stable-v1"},
	{rule: "M8", file: "cert-rotator/catalog.yaml", needle: "name: stable-v2", channel: "stable-v2"},
	{rule: "C14", file: "cert-rotator/catalog.yaml", needle: "image: quay.io/Example/", bundle: "cert-rotator.v1.4.0"},
}

// opm stops at its first error; with a single channel-phase error in the
// fixture that is always the unknown package.
const brokenOPMMessage = `unknown package "kv-store-operatr" for channel "candidate"`

// blobLines returns the first and last line of the YAML document in the
// fixture file that contains needle.
func blobLines(t *testing.T, file, needle string) (first, last int) {
	t.Helper()
	f, err := os.Open(filepath.Join(brokenDir, filepath.FromSlash(file)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	start, found := 1, false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "---") {
			if found {
				return start, n - 1
			}
			start = n + 1
			continue
		}
		if strings.Contains(line, needle) {
			if found {
				t.Fatalf("needle %q occurs twice in %s", needle, file)
			}
			found = true
		}
		last = n
	}
	if !found {
		t.Fatalf("needle %q not in %s", needle, file)
	}
	return start, last
}

func TestBrokenCatalogJSON(t *testing.T) {
	r := cli(t, nil, "validate", "-o", "json", brokenDir)
	if r.code != exitInvalid {
		t.Errorf("exit status %d, want %d", r.code, exitInvalid)
	}
	doc := decodeDoc(t, r.stdout)
	if doc.Valid {
		t.Error("document says valid")
	}
	if doc.OPMMessage != brokenOPMMessage {
		t.Errorf("opmMessage = %q, want %q", doc.OPMMessage, brokenOPMMessage)
	}
	if doc.Summary.Errors != len(planted) {
		t.Errorf("summary counts %d errors, want %d", doc.Summary.Errors, len(planted))
	}
	var got []string
	for _, f := range doc.Findings {
		if f.Severity == "error" {
			got = append(got, f.Rule+" "+f.File)
		}
	}
	var want []string
	for _, p := range planted {
		want = append(want, p.rule+" "+p.file)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("error findings (rule file):\n%s\nwant exactly:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range planted {
		t.Run(p.rule, func(t *testing.T) {
			first, last := blobLines(t, p.file, p.needle)
			for _, f := range doc.Findings {
				if f.Rule != p.rule || f.File != p.file {
					continue
				}
				if f.Line < first || f.Line > last {
					t.Errorf("line %d, want within the blob at lines %d-%d", f.Line, first, last)
				}
				if p.channel != "" && f.Channel != p.channel {
					t.Errorf("channel %q, want %q", f.Channel, p.channel)
				}
				if p.bundle != "" && f.Bundle != p.bundle {
					t.Errorf("bundle %q, want %q", f.Bundle, p.bundle)
				}
				if f.Message == "" {
					t.Error("empty message")
				}
				return
			}
			t.Errorf("no %s finding in %s", p.rule, p.file)
		})
	}
}

func TestBrokenCatalogText(t *testing.T) {
	r := cli(t, nil, "validate", brokenDir)
	if r.code != exitInvalid {
		t.Errorf("exit status %d, want %d", r.code, exitInvalid)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	summary := lines[len(lines)-1]
	if want := fmt.Sprintf("catalog invalid: %d errors in 2 files (", len(planted)); !strings.HasPrefix(summary, want) {
		t.Errorf("summary %q, want it to start %q", summary, want)
	}
	for _, p := range planted {
		first, last := blobLines(t, p.file, p.needle)
		found := false
		for _, l := range lines[:len(lines)-1] {
			var line int
			rest, ok := strings.CutPrefix(l, p.file+":")
			if !ok {
				continue
			}
			if _, err := fmt.Sscanf(rest, "%d:", &line); err == nil && line >= first && line <= last {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no line %s:N: with N in %d-%d in\n%s", p.rule, p.file, first, last, r.stdout)
		}
	}
}

func TestBrokenCatalogSARIF(t *testing.T) {
	r := cli(t, nil, "validate", "-o", "sarif", brokenDir)
	if r.code != exitInvalid {
		t.Errorf("exit status %d, want %d", r.code, exitInvalid)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("SARIF does not decode into one run: %v", err)
	}
	var got, want []string
	for _, res := range log.Runs[0].Results {
		loc := res.Locations[0].PhysicalLocation.ArtifactLocation
		got = append(got, res.RuleID+" "+loc.URIBaseID+" "+loc.URI)
	}
	for _, p := range planted {
		want = append(want, p.rule+" %SRCROOT% "+brokenDir+"/"+p.file)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestBrokenCatalogOPM(t *testing.T) {
	r := cli(t, nil, "validate", "-o", "opm", brokenDir)
	if r.code != exitInvalid || r.stdout != brokenOPMMessage+"\n" || r.stderr != "" {
		t.Errorf("got %+v, want exit 1 and %q", r, brokenOPMMessage+"\n")
	}
}
