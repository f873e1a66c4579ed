package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc"
)

// Fixture catalogs, relative to the repository root; see testdata/README.md.
const (
	validDir  = "testdata/catalogs/valid"
	brokenDir = "testdata/catalogs/broken"
)

// repoRoot is taken before any test changes directory.
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()

type result struct {
	code           int
	stdout, stderr string
}

// cli runs catalogbot in-process from the repository root, so DIR arguments
// and SARIF URIs read as they do in a checkout. validate replaces the
// validator when non-nil.
func cli(t *testing.T, validate func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error), args ...string) result {
	t.Helper()
	t.Chdir(repoRoot)
	if validate == nil {
		validate = fbc.Validate
	}
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, version: "dev", validate: validate}
	code := execute(context.Background(), a, args)
	return result{code, stdout.String(), stderr.String()}
}

func TestUsageAndIOErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// wantErr is the first line on stderr.
		wantErr string
	}{
		{"no DIR", []string{"validate"},
			"catalogbot: validate takes exactly one catalog directory, got 0 arguments"},
		{"two DIRs", []string{"validate", validDir, brokenDir},
			"catalogbot: validate takes exactly one catalog directory, got 2 arguments"},
		{"unknown output format", []string{"validate", "-o", "yaml", validDir},
			`catalogbot: invalid argument "yaml" for "-o, --output" flag: unknown output format "yaml" (want text, json, sarif, opm)`},
		{"unknown flag", []string{"validate", "--strict", validDir},
			"catalogbot: unknown flag: --strict"},
		{"bad log level", []string{"--log-level", "loud", "validate", validDir},
			`catalogbot: invalid --log-level "loud": want debug, info, warn or error`},
		{"unknown command", []string{"lint", validDir},
			`catalogbot: unknown command "lint" for "catalogbot"`},
		{"missing DIR", []string{"validate", "testdata/catalogs/missing"},
			"catalogbot: stat testdata/catalogs/missing: no such file or directory"},
		{"DIR is a file", []string{"validate", validDir + "/kv-store-operator/catalog.yaml"},
			`catalogbot: "testdata/catalogs/valid/kv-store-operator/catalog.yaml" is not a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			spy := func(ctx context.Context, fsys fs.FS, opts fbc.Options) (*fbc.Result, error) {
				called = true
				return &fbc.Result{}, nil
			}
			r := cli(t, spy, tt.args...)
			if r.code != exitError {
				t.Errorf("exit status %d, want %d", r.code, exitError)
			}
			if first, _, _ := strings.Cut(r.stderr, "\n"); first != tt.wantErr {
				t.Errorf("stderr:\n%s\nwant first line:\n%s", r.stderr, tt.wantErr)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
			if called {
				t.Error("validator ran despite the error")
			}
		})
	}
}

func TestUsageErrorsPointAtHelp(t *testing.T) {
	r := cli(t, nil, "validate")
	if !strings.HasSuffix(r.stderr, "\nRun 'catalogbot validate --help' for usage.\n") {
		t.Errorf("stderr = %q, want a pointer to --help", r.stderr)
	}
	// An I/O error is not a usage mistake: no help pointer.
	r = cli(t, nil, "validate", "testdata/catalogs/missing")
	if strings.Contains(r.stderr, "--help") {
		t.Errorf("stderr = %q, want no pointer to --help", r.stderr)
	}
}

func TestVersion(t *testing.T) {
	r := cli(t, nil, "--version")
	if r.code != exitOK || r.stdout != "catalogbot version dev\n" || r.stderr != "" {
		t.Errorf("got %+v", r)
	}
}

func TestValidatorError(t *testing.T) {
	boom := func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error) {
		return nil, errors.New("context canceled")
	}
	r := cli(t, boom, "validate", validDir)
	if r.code != exitError || r.stderr != "catalogbot: validate testdata/catalogs/valid: context canceled\n" || r.stdout != "" {
		t.Errorf("got %+v", r)
	}
}

// TestValidateSeesOnlyDir checks that the validator gets DIR itself as the
// root of its file system, not the working directory.
func TestValidateSeesOnlyDir(t *testing.T) {
	var entries []string
	spy := func(_ context.Context, fsys fs.FS, _ fbc.Options) (*fbc.Result, error) {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				entries = append(entries, p)
			}
			return err
		})
		return &fbc.Result{}, err
	}
	if r := cli(t, spy, "validate", validDir); r.code != exitOK {
		t.Fatalf("got %+v", r)
	}
	want := []string{"cert-rotator/catalog.yaml", "kv-store-operator/catalog.yaml"}
	if strings.Join(entries, " ") != strings.Join(want, " ") {
		t.Errorf("validator saw %q, want %q", entries, want)
	}
}

func TestDebugLogGoesToStderr(t *testing.T) {
	r := cli(t, nil, "--log-level", "debug", "validate", "-o", "opm", validDir)
	if r.code != exitOK || r.stdout != "" {
		t.Fatalf("got %+v", r)
	}
	if !strings.Contains(r.stderr, "level=DEBUG msg=validated") {
		t.Errorf("stderr = %q, want a debug line", r.stderr)
	}
}

// canned results drive the whole command through every output format with
// known findings, independently of the validator.
var canned = map[string]*fbc.Result{
	"valid": {Stats: fbc.Stats{Files: 2, Packages: 2, Channels: 5, Bundles: 10}},
	"invalid": {
		Findings: []checks.Finding{
			{Rule: "C4", Severity: checks.SeverityError, File: "kv-store-operator/catalog.yaml", Line: 40, Package: "kv-store-operatr", Channel: "candidate",
				Message: `unknown package "kv-store-operatr" for channel "candidate"`},
			{Rule: "M8", Severity: checks.SeverityError, File: "cert-rotator/catalog.yaml", Line: 24, Package: "cert-rotator", Channel: "stable-v2",
				Message: "detected cycle in replaces chain of upgrade graph: cert-rotator.v2.0.1 -> cert-rotator.v2.0.0 -> cert-rotator.v2.0.1"},
			{Rule: "X9", Severity: checks.SeverityWarning, File: "cert-rotator/catalog.yaml", Line: 3, Package: "cert-rotator",
				Message: "description mentions a skipRange like >=1.0.0 <2.0.0"},
		},
		OPMMessage: `unknown package "kv-store-operatr" for channel "candidate"`,
		Stats:      fbc.Stats{Files: 2, Packages: 2, Channels: 6, Bundles: 10},
	},
}

func TestOutputGolden(t *testing.T) {
	for _, name := range []string{"valid", "invalid"} {
		for _, format := range []string{"text", "json", "sarif", "opm"} {
			t.Run(name+"."+format, func(t *testing.T) {
				res := canned[name]
				fake := func(context.Context, fs.FS, fbc.Options) (*fbc.Result, error) { return res, nil }
				r := cli(t, fake, "validate", brokenDir, "-o", format)
				want := exitOK
				if !res.Valid() {
					want = exitInvalid
				}
				if r.code != want {
					t.Errorf("exit status %d, want %d", r.code, want)
				}
				if r.stderr != "" {
					t.Errorf("stderr = %q, want nothing", r.stderr)
				}
				checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", name+"."+format+".golden"), []byte(r.stdout))
			})
		}
	}
}

// TestMultiLineMessagesStayWhole: opm's message for an object without a
// schema quotes the object with its trailing newline, so the words that
// name the problem come after a line break. Every output keeps them.
func TestMultiLineMessagesStayWhole(t *testing.T) {
	dir := t.TempDir()
	// The shape of the reference lists in the kubedoop catalog: YAML that
	// is no catalog object.
	data := "name: zncdata-catalogs\nrepo: quay.io/example/catalogs\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json", "sarif"} {
		t.Run(format, func(t *testing.T) {
			r := cli(t, nil, "validate", "-o", format, dir)
			if r.code != exitInvalid {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitInvalid, r.stderr)
			}
			if !strings.Contains(r.stdout, "is missing root schema field") {
				t.Errorf("-o %s lost the end of the message:\n%s", format, r.stdout)
			}
		})
	}
}
