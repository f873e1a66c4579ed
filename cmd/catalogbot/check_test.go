package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
)

const checkCatalog = fbctest.Foo

// defaultMergeOutputs are the step outputs of the default policy's merge
// settings: merging off, by squash.
const defaultMergeOutputs = "merge-enabled=false\nmerge-method=squash\n"

// webhookExamples are GitHub's webhook payload examples, kept once in the
// repository beside the fake GitHub that builds deliveries from them.
var webhookExamples = filepath.Join(repoRoot, "webhook", "githubtest", "testdata", "webhooks")

// checkRepo builds a catalog repository whose main branch holds a valid
// catalog owned by alice, with two changes: good adds a property to the
// bundle (no image changes, so no registry is asked), bad points the
// default channel at one that does not exist.
func checkRepo(t *testing.T) *changetest.Repo {
	t.Helper()
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": checkCatalog,
		// OWNERS files are not catalog content; opm would reject them.
		"catalog/.indexignore": "OWNERS\n",
	})
	r.Branch("good", base)
	r.Commit("label the bundle", map[string]string{
		"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: stable\n",
	})
	r.Branch("bad", base)
	r.Commit("break the default channel", map[string]string{
		"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "defaultChannel: stable", "defaultChannel: beta", 1),
	})
	r.Checkout("main")
	return r
}

func TestCheck(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{
			name:     "approved by an owner",
			args:     []string{"--head", "good", "--author", "mallory", "--approve", "alice"},
			code:     exitOK,
			contains: []string{"fbc: success", "owners: success", "mergeable at "},
		},
		{
			name:     "the author owns the files",
			args:     []string{"--head", "good", "--author", "alice"},
			code:     exitOK,
			contains: []string{"owners: success", "mergeable at "},
		},
		{
			name:     "not approved",
			args:     []string{"--head", "good", "--author", "mallory"},
			code:     exitInvalid,
			contains: []string{"fbc: success", "owners: failure", "not mergeable:", "check owners concluded failure", "the pull request is not approved"},
		},
		{
			name: "introduced catalog error",
			args: []string{"--head", "bad", "--author", "alice"},
			code: exitInvalid,
			contains: []string{"fbc: failure: This change introduces 1 catalog error(s).",
				`catalog/foo/catalog.yaml:4: foo/beta: default channel "beta" does not exist`,
				"check fbc concluded failure"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"check", "--repo", r.Dir, "--base", "main"}, tt.args...)
			res := ownersCLI(t, r.Dir, args...)
			if res.code != tt.code || res.stderr != "" {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.contains {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "bad", "--author", "alice", "-o", "json")
	if res.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	var doc struct {
		HeadSHA string `json:"headSHA"`
		Results []struct {
			Name       string `json:"name"`
			Conclusion string `json:"conclusion"`
			Findings   []struct {
				File     string `json:"file"`
				Line     int    `json:"line"`
				Severity string `json:"severity"`
			} `json:"findings"`
		} `json:"results"`
		Decision struct {
			Merge   bool
			SHA     string
			Reasons []string
		} `json:"decision"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, res.stdout)
	}
	// Results come in check-name order; other checks may sit between.
	fbc, own := -1, -1
	for i, res := range doc.Results {
		switch res.Name {
		case "fbc":
			fbc = i
		case "owners":
			own = i
		}
	}
	if fbc < 0 || own < fbc {
		t.Fatalf("results = %+v, want fbc, then owners", doc.Results)
	}
	if got := doc.Results[fbc]; got.Conclusion != "failure" || len(got.Findings) != 1 || got.Findings[0].File != "catalog/foo/catalog.yaml" || got.Findings[0].Line != 4 || got.Findings[0].Severity != "error" {
		t.Errorf("fbc = %+v", got)
	}
	if doc.Decision.Merge || doc.Decision.SHA != doc.HeadSHA || len(doc.Decision.Reasons) != 1 {
		t.Errorf("decision = %+v, want no merge of %s for one reason", doc.Decision, doc.HeadSHA)
	}
}

func TestCheckUsage(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	tests := []struct {
		name string
		args []string
	}{
		{"no head", []string{"check", "--base", "main"}},
		{"bad approval", []string{"check", "--base", "main", "--head", "good", "--approve", "@"}},
		{"unknown revision", []string{"check", "--base", "main", "--head", "nope"}},
		{"bad format", []string{"check", "--base", "main", "--head", "good", "-o", "yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := ownersCLI(t, r.Dir, tt.args...); res.code != exitError {
				t.Errorf("exit %d, want %d\n%s%s", res.code, exitError, res.stdout, res.stderr)
			}
		})
	}
}

func TestCheckInvalidPolicy(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	r.Commit("bad policy", map[string]string{".catalogbot.yaml": "nonsense: true\n"})
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "good", "--author", "alice")
	if res.code != exitInvalid || !strings.Contains(res.stdout, "the policy is invalid") {
		t.Errorf("exit %d, want %d with the policy findings\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
}

// actionsVars are the GitHub Actions variables check reads.
var actionsVars = []string{
	"GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_WORKSPACE", "GITHUB_REPOSITORY",
	"GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
}

// noActions clears the GitHub Actions environment, so that tests of the
// plain formats behave the same when the suite itself runs in Actions.
func noActions(t *testing.T) {
	t.Helper()
	for _, v := range actionsVars {
		t.Setenv(v, "")
	}
}

func TestCheckSARIF(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "bad", "--author", "alice", "-o", "sarif")
	if res.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &log); err != nil || len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 {
		t.Fatalf("want one run with one result (%v):\n%s", err, res.stdout)
	}
	got := log.Runs[0].Results[0]
	loc := got.Locations[0].PhysicalLocation
	if got.Level != "error" || loc.ArtifactLocation.URI != "catalog/foo/catalog.yaml" || loc.Region.StartLine != 4 {
		t.Errorf("result = %+v, want an error at catalog/foo/catalog.yaml:4", got)
	}
}

// actionsFiles are one GitHub Actions step's files.
type actionsFiles struct {
	event, summary, output string
}

// writePREvent writes a pull_request event recorded from GitHub, patched to
// the commits and author of the test repository, and returns its path.
func writePREvent(t *testing.T, r *changetest.Repo, head, author string, edit func(pr map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(webhookExamples, "pull_request.opened.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatal(err)
	}
	pr := ev["pull_request"].(map[string]any)
	pr["base"].(map[string]any)["sha"] = branchSHA(t, r, "main")
	pr["head"].(map[string]any)["sha"] = branchSHA(t, r, head)
	pr["user"].(map[string]any)["login"] = author
	if edit != nil {
		edit(pr)
	}
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func branchSHA(t *testing.T, r *changetest.Repo, branch string) string {
	t.Helper()
	ref, err := r.Git.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatal(err)
	}
	return ref.Hash().String()
}

// inActions sets up the environment of an Actions step on event, with
// step summary and output files that earlier steps already wrote to.
func inActions(t *testing.T, workspace, event string) actionsFiles {
	t.Helper()
	noActions(t)
	dir := t.TempDir()
	f := actionsFiles{event: event, summary: filepath.Join(dir, "step_summary"), output: filepath.Join(dir, "output")}
	for path, earlier := range map[string]string{f.summary: "# earlier step\n\n", f.output: "earlier=1\n"} {
		if err := os.WriteFile(path, []byte(earlier), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   "pull_request",
		"GITHUB_EVENT_PATH":   event,
		"GITHUB_WORKSPACE":    workspace,
		"GITHUB_REPOSITORY":   "Codertocat/Hello-World",
		"GITHUB_STEP_SUMMARY": f.summary,
		"GITHUB_OUTPUT":       f.output,
	} {
		t.Setenv(k, v)
	}
	return f
}

func readStepFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	checkstest.Golden(t, filepath.Join(repoRoot, "cmd", "catalogbot", "testdata", "check", name), []byte(got))
}

// TestCheckGitHub runs check as the Action does: no flags, everything from
// the recorded event and the Actions environment.
func TestCheckGitHub(t *testing.T) {
	r := checkRepo(t)
	tests := []struct {
		name, head, author string
		edit               func(pr map[string]any)
		code               int
		outputs            string
	}{
		{name: "not approved", head: "good", author: "mallory", code: exitInvalid,
			outputs: "valid=true\napproved=false\nmergeable=false\n"},
		{name: "introduced error", head: "bad", author: "alice", code: exitInvalid,
			outputs: "valid=false\napproved=true\nmergeable=false\n"},
		{name: "mergeable", head: "good", author: "alice", code: exitOK,
			outputs: "valid=true\napproved=true\nmergeable=true\n"},
		{name: "draft with the hold label", head: "good", author: "alice", code: exitInvalid,
			edit: func(pr map[string]any) {
				pr["draft"] = true
				pr["labels"] = []any{map[string]any{"name": "do-not-merge/hold"}}
			},
			outputs: "valid=true\napproved=true\nmergeable=false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := inActions(t, r.Dir, writePREvent(t, r, tt.head, tt.author, tt.edit))
			res := ownersCLI(t, t.TempDir(), "check")
			if res.code != tt.code || res.stderr != "" {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			name := strings.ReplaceAll(tt.name, " ", "-")
			checkGolden(t, name+".stdout", res.stdout)
			summary := readStepFile(t, f.summary)
			if !strings.HasPrefix(summary, "# earlier step\n\n## catalogbot check\n") {
				t.Errorf("the summary was not appended after the earlier step's:\n%s", summary)
			}
			checkGolden(t, name+".summary.md", summary)
			if got, want := readStepFile(t, f.output), "earlier=1\n"+tt.outputs+defaultMergeOutputs; got != want {
				t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestCheckGitHubSubdirectory: the repository is checked out below the
// workspace, so annotation paths gain its directory.
func TestCheckGitHubSubdirectory(t *testing.T) {
	r := checkRepo(t)
	inActions(t, filepath.Dir(r.Dir), writePREvent(t, r, "bad", "alice", nil))
	res := ownersCLI(t, r.Dir, "check", "--repo", r.Dir)
	want := "::error file=" + filepath.Base(r.Dir) + "/catalog/foo/catalog.yaml,line=4,"
	if res.code != exitInvalid || !strings.HasPrefix(res.stdout, want) {
		t.Errorf("exit %d, stdout does not start %q:\n%s%s", res.code, want, res.stdout, res.stderr)
	}
}

// TestCheckGitHubOverride: flags win over the event, and -o over the
// Actions default.
func TestCheckGitHubOverride(t *testing.T) {
	r := checkRepo(t)
	f := inActions(t, r.Dir, writePREvent(t, r, "good", "mallory", nil))
	res := ownersCLI(t, r.Dir, "check", "--author", "alice", "-o", "json")
	if res.code != exitOK || !strings.HasPrefix(res.stdout, "{") {
		t.Errorf("exit %d, want %d with JSON:\n%s%s", res.code, exitOK, res.stdout, res.stderr)
	}
	if got := readStepFile(t, f.output); got != "earlier=1\n" {
		t.Errorf("-o json wrote step outputs:\n%s", got)
	}
}

// githubAPI serves the reviews, comments and check suites of pull request
// 2 of Codertocat/Hello-World, to the token "t0ken" only.
func githubAPI(t *testing.T, head, reviews, comments string) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		// The head became the pull request's head by a force-push at
		// 10:00, as its timeline records.
		"/repos/Codertocat/Hello-World/issues/2/timeline": `[{"id": 1, "event": "head_ref_force_pushed", "commit_id": "` + head + `",
			"created_at": "2024-05-01T10:00:00Z", "actor": {"login": "mallory", "type": "User"}}]`,
		"/repos/Codertocat/Hello-World/pulls/2/reviews":   reviews,
		"/repos/Codertocat/Hello-World/issues/2/comments": comments,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			http.Error(w, `{"message": "Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func apiComment(login, body, at string) string {
	return fmt.Sprintf(`{"id": 1, "user": {"login": %q, "type": "User"}, "body": %q, "created_at": %q, "updated_at": %q}`, login, body, at, at)
}

// TestCheckGitHubToken reads approvals and holds from the pull request's
// conversation with GITHUB_TOKEN.
func TestCheckGitHubToken(t *testing.T) {
	r := checkRepo(t)
	head := branchSHA(t, r, "good")
	approve := `[{"id": 5, "user": {"login": "alice", "type": "User"}, "state": "APPROVED", "commit_id": "` + head + `", "submitted_at": "2024-05-01T10:05:00Z"}]`
	tests := []struct {
		name              string
		reviews, comments string
		args              []string
		code              int
		outputs           string
		golden            bool
	}{
		{name: "approved by review", reviews: approve, comments: "[]", code: exitOK,
			outputs: "valid=true\napproved=true\nmergeable=true\n"},
		{name: "held", reviews: approve, comments: "[" + apiComment("carol", "/hold", "2024-05-01T10:06:00Z") + "]", code: exitInvalid,
			outputs: "valid=true\napproved=true\nmergeable=false\n", golden: true},
		{name: "unheld", reviews: approve, comments: "[" + apiComment("carol", "/hold", "2024-05-01T10:06:00Z") + "," +
			apiComment("carol", "/unhold", "2024-05-01T10:07:00Z") + "]", code: exitOK,
			outputs: "valid=true\napproved=true\nmergeable=true\n"},
		// An /approve from before the head was pushed was for an earlier
		// head; one from a bot never counts.
		{name: "stale and bot comments", reviews: "[]", comments: "[" + apiComment("alice", "/approve", "2024-05-01T09:59:00Z") + "," +
			apiComment("catalogbot[bot]", "/approve", "2024-05-01T10:06:00Z") + "]", code: exitInvalid,
			outputs: "valid=true\napproved=false\nmergeable=false\n"},
		{name: "comment after the push", reviews: "[]", comments: "[" + apiComment("alice", "/approve", "2024-05-01T10:01:00Z") + "]", code: exitOK,
			outputs: "valid=true\napproved=true\nmergeable=true\n"},
		// The command line has the last word over the conversation.
		{name: "flag over a withdrawal", reviews: approve, comments: "[" + apiComment("alice", "/approve cancel", "2024-05-01T10:06:00Z") + "]",
			args: []string{"--approve", "alice"}, code: exitOK,
			outputs: "valid=true\napproved=true\nmergeable=true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubAPI(t, head, tt.reviews, tt.comments)
			f := inActions(t, r.Dir, writePREvent(t, r, "good", "mallory", nil))
			t.Setenv("GITHUB_TOKEN", "t0ken")
			t.Setenv("GITHUB_API_URL", srv.URL)
			res := ownersCLI(t, r.Dir, append([]string{"check"}, tt.args...)...)
			if res.code != tt.code || res.stderr != "" {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, tt.code, res.stdout, res.stderr)
			}
			if got, want := readStepFile(t, f.output), "earlier=1\n"+tt.outputs+defaultMergeOutputs; got != want {
				t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
			}
			if tt.golden {
				checkGolden(t, "token-"+strings.ReplaceAll(tt.name, " ", "-")+".summary.md", readStepFile(t, f.summary))
			}
		})
	}

	t.Run("bad token", func(t *testing.T) {
		srv := githubAPI(t, head, approve, "[]")
		inActions(t, r.Dir, writePREvent(t, r, "good", "mallory", nil))
		t.Setenv("GITHUB_TOKEN", "wrong")
		t.Setenv("GITHUB_API_URL", srv.URL)
		res := ownersCLI(t, r.Dir, "check")
		if res.code != exitError || !strings.Contains(res.stderr, "401") || !strings.Contains(res.stderr, "Codertocat/Hello-World") {
			t.Errorf("exit %d, want %d naming the repository and the 401:\n%s", res.code, exitError, res.stderr)
		}
	})
}

func TestCheckGitHubEventErrors(t *testing.T) {
	r := checkRepo(t)
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "not-json.json")
	if err := os.WriteFile(notJSON, []byte("event: pull_request\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	push := filepath.Join(webhookExamples, "push.event.0.json")
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name, event string
		args        []string
		code        int
		stderr      []string
	}{
		{"missing", missing, nil, exitError, []string{missing}},
		{"not JSON", notJSON, nil, exitError, []string{notJSON, "not a JSON event"}},
		{"not a pull request", push, nil, exitError, []string{push, "holds no pull request (pull_request event)"}},
		// With explicit commits the event need not be a pull request.
		{"push with commits", push, []string{"--base", "main", "--head", "good", "--author", "alice"}, exitOK, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inActions(t, r.Dir, tt.event)
			res := ownersCLI(t, r.Dir, append([]string{"check"}, tt.args...)...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
		})
	}

	t.Run("no event", func(t *testing.T) {
		inActions(t, r.Dir, "")
		res := ownersCLI(t, r.Dir, "check")
		if res.code != exitError || !strings.Contains(res.stderr, "check needs --base, or a pull request event in $GITHUB_EVENT_PATH") {
			t.Errorf("exit %d, want %d:\n%s", res.code, exitError, res.stderr)
		}
	})
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"  \n\t ", nil, false},
		{"--approve alice --approve bob@main", []string{"--approve", "alice", "--approve", "bob@main"}, false},
		{"--author 'a b'\n--log-level debug", []string{"--author", "a b", "--log-level", "debug"}, false},
		{`"a \"b\" \\ \c" x\ y ''`, []string{`a "b" \ \c`, "x y", ""}, false},
		{`pre'quoted'post`, []string{"prequotedpost"}, false},
		{`'open`, nil, true},
		{`"open`, nil, true},
	}
	for _, tt := range tests {
		got, err := ghapi.SplitWords(tt.in)
		if (err != nil) != tt.wantErr || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestCheckExtraArgs: the Action's "args" input arrives as one argument.
func TestCheckExtraArgs(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	tests := []struct {
		name, extra string
		code        int
	}{
		{"approval", "--author mallory\n--approve 'alice'", exitOK},
		{"no approval", "--author mallory", exitInvalid},
		{"positional", "--author mallory extra", exitError},
		{"unknown flag", "--nope", exitError},
		{"nested", "--extra-args=--author", exitError},
		{"bad quoting", "--author 'mallory", exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ownersCLI(t, r.Dir, "check", "--base", "main", "--head", "good", "--extra-args", tt.extra)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", res.code, tt.code, res.stdout, res.stderr)
			}
			if tt.code == exitError && !strings.Contains(res.stderr, "--extra-args") {
				t.Errorf("stderr does not name --extra-args:\n%s", res.stderr)
			}
		})
	}
}

// TestCheckGitHubInvalidPolicy: a policy that does not parse stops every
// check, and every output says no.
func TestCheckGitHubInvalidPolicy(t *testing.T) {
	r := checkRepo(t)
	r.Checkout("main")
	r.Commit("bad policy", map[string]string{".catalogbot.yaml": "nonsense: true\n"})
	f := inActions(t, r.Dir, writePREvent(t, r, "good", "alice", nil))
	res := ownersCLI(t, r.Dir, "check")
	if res.code != exitInvalid || !strings.HasPrefix(res.stdout, "::error file=.catalogbot.yaml,line=1,") {
		t.Errorf("exit %d, want %d with the policy finding annotated:\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	if got, want := readStepFile(t, f.output), "earlier=1\nvalid=false\napproved=false\nmergeable=false\n"; got != want {
		t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
	}
	if summary := readStepFile(t, f.summary); !strings.Contains(summary, "**Not checked**: the repository policy is invalid.") {
		t.Errorf("summary:\n%s", summary)
	}
}

// TestCheckGitHubMergeOutputs: the base policy's merge settings become
// step outputs, so that a workflow merges only when the policy says so,
// and by its method.
func TestCheckGitHubMergeOutputs(t *testing.T) {
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		".catalogbot.yaml":         "merge:\n  enabled: true\n  method: rebase\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})
	r.Branch("good", base)
	r.Commit("label the bundle", map[string]string{
		"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: stable\n",
	})
	f := inActions(t, r.Dir, writePREvent(t, r, "good", "alice", nil))
	res := ownersCLI(t, r.Dir, "check")
	if res.code != exitOK {
		t.Fatalf("exit %d, want 0\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := "earlier=1\nvalid=true\napproved=true\nmergeable=true\nmerge-enabled=true\nmerge-method=rebase\n"
	if got := readStepFile(t, f.output); got != want {
		t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
	}
}

// TestCheckJudgesTheMergeResult: two branches each add channel fast to
// package foo in files of their own. Once one is on main, the other, valid
// on the base it started from, is judged as merged onto main, where the
// channel is a duplicate; and a branch that changes the same lines as
// main in another way does not apply and cannot merge.
func TestCheckJudgesTheMergeResult(t *testing.T) {
	noActions(t)
	r := checkRepo(t)
	base := branchSHA(t, r, "main")
	fast := "schema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.0.0\n"
	r.Branch("fast-b", base)
	r.Commit("fast in b", map[string]string{"catalog/foo/fast-b.yaml": fast})
	r.Branch("other-default", base)
	r.Commit("another default channel", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "defaultChannel: stable", "defaultChannel: fast", 1) + "---\n" + fast})
	r.Checkout("main")
	r.Commit("fast in a", map[string]string{
		"catalog/foo/fast-a.yaml":  fast,
		"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "defaultChannel: stable", "defaultChannel: stable # the default", 1),
	})
	tip := branchSHA(t, r, "main")

	res := ownersCLI(t, r.Dir, "check", "--repo", r.Dir, "--base", "main", "--head", "fast-b", "--author", "alice")
	if res.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	for _, want := range []string{`duplicate channel "fast"`, "Checked as merged onto main at " + tip[:12] + ":"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}

	res = ownersCLI(t, r.Dir, "check", "--repo", r.Dir, "--base", "main", "--head", "other-default", "--author", "alice")
	if res.code != exitInvalid {
		t.Fatalf("exit %d, want %d\n%s%s", res.code, exitInvalid, res.stdout, res.stderr)
	}
	for _, want := range []string{"does not apply cleanly onto main at " + tip[:12] + " (catalog/foo/catalog.yaml changed on both sides)", "the change does not apply cleanly onto " + tip[:12]} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
}
