package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// A pull request whose file name, package name, image reference, commit
// message and comment carry a right-to-left override, an isolate, a
// terminal escape sequence and a carriage return: nothing it makes
// catalogbot show (the check run, its annotations, the status comment, the
// Action's annotations, job summary and text, the CLI's text, JSON and
// SARIF, and the logs of both) holds one of them raw.
func TestHiddenCharactersNeverShownRaw(t *testing.T) {
	const (
		rlo = "\u202e"
		lri = "\u2066"
		esc = "\x1b[31m"
		cr  = "\r"
	)
	// go-git, which the fake GitHub serves repositories with, refuses to
	// walk a tree whose paths hold ASCII control characters (as git does
	// when it checks one out), so the file name carries the hidden
	// characters beyond ASCII, a C1 control (U+0085) among them; ESC and
	// CR travel in the package name, image, commit message and comment.
	file := "catalog/foo/" + rlo + "lmay." + lri + "\u0085evil.yaml"
	// YAML cannot hold ESC or CR raw in a scalar; its escapes can.
	image := `quay.io/example/foo-bundle\e[31m\r` + "\u202e:v9"
	blobs := fmt.Sprintf("---\nschema: olm.package\nname: \"foo%s%sbar\"\n---\nschema: olm.bundle\npackage: foo\nname: foo.v9.0.0\nimage: \"%s\"\nproperties:\n  - type: olm.package\n    value: {packageName: foo, version: 9.0.0}\n",
		rlo, lri, image)

	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml":         agreePolicy,
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/.indexignore":     "OWNERS\n*.md\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
	})
	repo.Commit("change", map[string]string{file: blobs}, "bump "+rlo+esc+cr+"foo")
	pr := repo.OpenPR("mallory", "change", "main")
	repo.Comment(pr.Number, "mallory", "/approve "+rlo+esc+"\r\n/hold "+lri)

	shown := map[string]string{}

	// The Action: annotations and text on stdout, the job summary, and
	// the debug log on stderr.
	ws := filepath.Join(t.TempDir(), "ws")
	repo.Clone(t, ws)
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, gh.Payload("pull_request", "synchronize", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}), 0o644); err != nil {
		t.Fatal(err)
	}
	files := inActions(t, ws, event)
	t.Setenv("GITHUB_REPOSITORY", repo.FullName())
	t.Setenv("GITHUB_TOKEN", gh.InstallationToken(repo))
	t.Setenv("GITHUB_API_URL", gh.URL)
	for _, format := range []string{"github", "text", "json", "sarif"} {
		res := ownersCLI(t, ws, "--log-level", "debug", "check", "-o", format, "--images=false", "--render=false")
		if res.code != exitInvalid {
			t.Fatalf("check -o %s: exit %d, want %d\n%s%s", format, res.code, exitInvalid, res.stdout, res.stderr)
		}
		shown["check -o "+format] = res.stdout
		shown["check -o "+format+" log"] = res.stderr
	}
	explain := ownersCLI(t, ws, "owners", "explain", file)
	if explain.code == exitError {
		t.Fatalf("owners explain: exit %d\n%s", explain.code, explain.stderr)
	}
	shown["owners explain"] = explain.stdout
	summary, err := os.ReadFile(files.summary)
	if err != nil {
		t.Fatal(err)
	}
	shown["job summary"] = string(summary)

	// The App, with the service's JSON log at debug level.
	var log bytes.Buffer
	app, err := reconcile.NewApp(reconcile.AppOptions{
		HTTPClient: &http.Client{},
		Config: &webhook.Config{
			AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir(),
		},
		Metrics: webhook.NewMetrics(prometheus.NewRegistry()),
		Logger:  jsonLogger(&log, slog.LevelDebug),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	job := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: pr.Number, Kind: webhook.KindPR},
		Event: "pull_request", Delivery: "hidden-1", Installation: gh.InstallationID(repo)}
	if _, err := app.Process(context.Background(), job); err != nil {
		t.Fatalf("the App: %v", err)
	}
	runs := 0
	for _, r := range repo.CheckRuns(pr.HeadSHA()) {
		if r.Name != reconcile.CheckRunName {
			continue
		}
		runs++
		shown["check run title"] += r.Title
		shown["check run summary"] += r.Summary + r.Text
		for _, a := range r.Annotations {
			shown["check run annotation"] += a.Path + "\n" + a.Title + "\n" + a.Message + "\n"
		}
	}
	if runs == 0 {
		t.Fatal("the App wrote no check run")
	}
	for _, c := range repo.IssueComments(pr.Number) {
		if strings.Contains(c.Body, reconcile.StatusMarker) {
			shown["status comment"] += c.Body
		}
	}
	if shown["status comment"] == "" {
		t.Fatal("the App wrote no status comment")
	}
	shown["App log"] = log.String()

	for where, text := range shown {
		for i, r := range text {
			if r == '\n' || r == '\t' {
				continue
			}
			if checks.Hidden(r) || r == utf8.RuneError {
				t.Errorf("%s: raw %U at byte %d:\n%s", where, r, i, text)
				break
			}
		}
	}
	// The characters are shown spelled out where the file is named.
	for _, where := range []string{"check -o text", "check -o github", "job summary", "check run annotation", "status comment", "owners explain"} {
		if !strings.Contains(shown[where], `\u202e`) {
			t.Errorf("%s does not spell out U+202E:\n%s", where, shown[where])
		}
	}
}

// The service's JSON log spells out what encoding/json leaves raw, in the
// message and in every attribute, the errors that quote a path included.
func TestServeLogSpellsOutHidden(t *testing.T) {
	var buf bytes.Buffer
	name := "catalog/\u202eevil\u2066\x7f\u0085.yaml"
	jsonLogger(&buf, slog.LevelDebug).Debug("read "+name, "file", name, "err", fmt.Errorf("open %s: denied", name))
	for i, r := range buf.String() {
		if r != '\n' && checks.Hidden(r) {
			t.Fatalf("raw %U at byte %d: %s", r, i, buf.String())
		}
	}
	if !strings.Contains(buf.String(), `\u202e`) {
		t.Errorf("U+202E is not spelled out: %s", buf.String())
	}
}

// render of an image its registry does not have says which class, which
// registry and what to do; the library's text, with the registry's details
// printed as Go values, is only in the debug log.
func TestRenderRegistryFailureMessage(t *testing.T) {
	reg := registrytest.New(t)
	reg.Fail(registrytest.Fault{Repo: "team/catalog", Status: 404,
		Body: `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"v9"}}]}`})
	r := cli(t, nil, "--log-level", "debug", "render", reg.Ref("team/catalog:v9"))
	if r.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s", r.code, exitInvalid, r.stderr)
	}
	var shown, logged []string
	for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.HasPrefix(line, "time=") {
			logged = append(logged, line)
		} else {
			shown = append(shown, line)
		}
	}
	want := fmt.Sprintf(`catalogbot: render reference %q (image): not_found: registry %s: no such image in the registry (404 Not Found, MANIFEST_UNKNOWN); check the repository and tag, or push the image`,
		reg.Ref("team/catalog:v9"), reg.Host)
	if strings.Join(shown, "\n") != want {
		t.Errorf("stderr says\n  %s\nwant\n  %s", strings.Join(shown, "\n"), want)
	}
	if !strings.Contains(strings.Join(logged, "\n"), "map[Tag:v9]") {
		t.Errorf("the debug log lacks the library's text:\n%s", strings.Join(logged, "\n"))
	}
}

// TestTerminalLinesSpellOutHidden: the names a repository gives its files
// and directories reach the terminal spelled out in graph's load error and
// in policy show's catalogs, never as escapes a terminal obeys.
func TestTerminalLinesSpellOutHidden(t *testing.T) {
	const hidden = "x\x1b[2K\r\u202e"
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, hidden+".yaml"), []byte("---\nschema: olm.package\nname: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	for _, f := range []string{".catalogbot.yaml", "catalogs/" + hidden + "/foo/catalog.yaml"} {
		data := "catalogs:\n  - name: main\n    roots: [\"catalogs/*\"]\n"
		if err := os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, args := range map[string][]string{
		"graph":       {"graph", broken},
		"policy show": {"policy", "show", "--repo", repo},
	} {
		t.Run(name, func(t *testing.T) {
			r := cli(t, nil, args...)
			text := r.stdout + r.stderr
			if !strings.Contains(text, `x\x1b[2K\r\u202e`) {
				t.Errorf("the name is not spelled out:\n%q", text)
			}
			for i, c := range text {
				if c != '\n' && c != '\t' && checks.Hidden(c) {
					t.Fatalf("raw %U at byte %d:\n%q", c, i, text)
				}
			}
		})
	}
}
