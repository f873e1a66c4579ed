package githubtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

const owner, name = "acme", "catalog"

// installationClient is a go-github client authenticated as the App's installation on repo, the
// way the service builds it.
func installationClient(t *testing.T, s *githubtest.Server, repo *githubtest.Repo) (*github.Client, *ghinstallation.Transport) {
	t.Helper()
	tr, err := ghinstallation.New(http.DefaultTransport, s.AppID(), s.InstallationID(repo), s.PrivateKeyPEM())
	if err != nil {
		t.Fatalf("ghinstallation: %v", err)
	}
	tr.BaseURL = s.URL
	c := github.NewClient(&http.Client{Transport: tr})
	if c.BaseURL, err = url.Parse(s.URL + "/"); err != nil {
		t.Fatal(err)
	}
	return c, tr
}

func appClient(t *testing.T, s *githubtest.Server) *github.Client {
	t.Helper()
	tr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, s.AppID(), s.PrivateKeyPEM())
	if err != nil {
		t.Fatalf("ghinstallation: %v", err)
	}
	tr.BaseURL = s.URL
	c := github.NewClient(&http.Client{Transport: tr})
	c.BaseURL, _ = url.Parse(s.URL + "/")
	return c
}

// token returns an installation token for repo's installation.
func token(t *testing.T, s *githubtest.Server, repo *githubtest.Repo) string {
	t.Helper()
	_, tr := installationClient(t, s, repo)
	tok, err := tr.Token(context.Background())
	if err != nil {
		t.Fatalf("installation token: %v", err)
	}
	return tok
}

// raw sends a request with an installation token (or none when tok is "").
func raw(t *testing.T, s *githubtest.Server, method, path, tok string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func newRepo(t *testing.T) (*githubtest.Server, *githubtest.Repo) {
	s := githubtest.New(t)
	repo := s.AddRepo(owner, name, map[string]string{
		"OWNERS":                 "approvers: [alice]\n",
		"catalog/a/index.yaml":   "schema: olm.package\nname: a\n",
		"catalog/b/index.yaml":   "schema: olm.package\nname: b\n",
		"catalog/c/index.yaml":   "schema: olm.package\nname: c\n",
		"catalog/d/index.yaml":   "schema: olm.package\nname: d\n",
		"catalog/e/channel.yaml": "schema: olm.channel\nname: stable\npackage: e\n",
	})
	return s, repo
}

// TestEveryOperationMatchesTheDescription drives every operation through go-github as the service
// does; the server fails the test on any request or response that the OpenAPI description rejects.
func TestEveryOperationMatchesTheDescription(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/a/index.yaml": "schema: olm.package\nname: a\ndefaultChannel: x\n"}, "change a")
	pr := repo.OpenPR("bob", "feature", "main")
	pr.SetLabels("hold")
	repo.Comment(pr.Number, "alice", "/approve")
	repo.Review(pr.Number, "alice", "APPROVED", "lgtm", "")
	repo.SetPermission("alice", "maintain")
	// A push and a force-push back, so that the timeline holds both
	// kinds of event the fake models.
	first := pr.HeadSHA()
	pr.Push(map[string]string{"catalog/b/index.yaml": "schema: olm.package\nname: b\ndefaultChannel: y\n"}, "change b")
	pr.ForcePush(first)
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()
	head := pr.HeadSHA()

	steps := []struct {
		name string
		call func() error
	}{
		{"get repo", func() error { _, _, err := c.Repositories.Get(ctx, owner, name); return err }},
		{"list pulls", func() error { _, _, err := c.PullRequests.List(ctx, owner, name, nil); return err }},
		{"get pull", func() error { _, _, err := c.PullRequests.Get(ctx, owner, name, pr.Number); return err }},
		{"list files", func() error { _, _, err := c.PullRequests.ListFiles(ctx, owner, name, pr.Number, nil); return err }},
		{"list reviews", func() error { _, _, err := c.PullRequests.ListReviews(ctx, owner, name, pr.Number, nil); return err }},
		{"list comments", func() error { _, _, err := c.Issues.ListComments(ctx, owner, name, pr.Number, nil); return err }},
		{"create status", func() error {
			_, _, err := c.Repositories.CreateStatus(ctx, owner, name, head, &github.RepoStatus{State: github.String("pending"), Context: github.String("catalogbot")})
			return err
		}},
		{"permission", func() error { _, _, err := c.Repositories.GetPermissionLevel(ctx, owner, name, "alice"); return err }},
		{"file contents", func() error {
			_, _, _, err := c.Repositories.GetContents(ctx, owner, name, "OWNERS", &github.RepositoryContentGetOptions{Ref: head})
			return err
		}},
		{"dir contents", func() error { _, _, _, err := c.Repositories.GetContents(ctx, owner, name, "catalog", nil); return err }},
		{"installation repos", func() error { _, _, err := c.Apps.ListRepos(ctx, nil); return err }},
		{"check suites", func() error { _, _, err := c.Checks.ListCheckSuitesForRef(ctx, owner, name, head, nil); return err }},
		{"is merged", func() error { _, _, err := c.PullRequests.IsMerged(ctx, owner, name, pr.Number); return err }},
		{"timeline", func() error { _, _, err := c.Issues.ListIssueTimeline(ctx, owner, name, pr.Number, nil); return err }},
	}
	for _, st := range steps {
		if err := st.call(); err != nil {
			t.Errorf("%s: %v", st.name, err)
		}
	}
	ac := appClient(t, s)
	if _, _, err := ac.Apps.ListInstallations(ctx, nil); err != nil {
		t.Errorf("list installations: %v", err)
	}
	if _, _, err := ac.Apps.FindRepositoryInstallation(ctx, owner, name); err != nil {
		t.Errorf("repository installation: %v", err)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
	if got := len(s.Requests()); got < len(steps)+3 {
		t.Errorf("the server answered %d requests, want at least %d", got, len(steps)+3)
	}
}

func TestAuthentication(t *testing.T) {
	s, repo := newRepo(t)
	s.AddRepo("other", "repo", nil)
	tok := token(t, s, repo)

	tests := []struct {
		name, method, path, token string
		want                      int
	}{
		{"no token", "GET", "/repos/acme/catalog", "", http.StatusUnauthorized},
		{"unknown token", "GET", "/repos/acme/catalog", "ghs_nope", http.StatusUnauthorized},
		{"installation token", "GET", "/repos/acme/catalog", tok, http.StatusOK},
		{"repo of another installation", "GET", "/repos/other/repo", tok, http.StatusNotFound},
		{"installation token on an App endpoint", "GET", "/app/installations", tok, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := raw(t, s, tt.method, tt.path, tt.token, nil)
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s: status %d, want %d (%s)", tt.method, tt.path, resp.StatusCode, tt.want, body)
			}
		})
	}

	// A JWT signed by another key is refused.
	foreign := githubtest.New(t)
	tr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, s.AppID(), foreign.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	tr.BaseURL = s.URL
	c := github.NewClient(&http.Client{Transport: tr})
	c.BaseURL, _ = url.Parse(s.URL + "/")
	_, resp, err := c.Apps.ListInstallations(context.Background(), nil)
	if err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("JWT from a foreign key: err %v, want 401", err)
	}

	// Tokens expire after an hour.
	s.Advance(61 * time.Minute)
	if resp, _ := raw(t, s, "GET", "/repos/acme/catalog", tok, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired token: status %d, want 401", resp.StatusCode)
	}
}

func TestListFilesWithRenamesAcrossPages(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{
		"catalog/a/index.yaml":    githubtest.Delete, // renamed: same content under a new path
		"catalog/a2/index.yaml":   "schema: olm.package\nname: a\n",
		"catalog/b/index.yaml":    "schema: olm.package\nname: b\nicon: x\n",
		"catalog/c/index.yaml":    githubtest.Delete,
		"catalog/f/icon.svg":      "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
		"catalog/g/index.yaml":    strings.Repeat("# generated by opm render; a bundle list follows\n", 20),
		"catalog/e/channel.yaml":  githubtest.Delete,
		"catalog/e2/channel.yaml": "schema: olm.channel\nname: stable\npackage: e\n",
	}, "rework")
	pr := repo.OpenPR("bob", "feature", "main")
	// A later commit on main must not show up: files are merge-base..head.
	repo.Commit("main", map[string]string{"catalog/z/index.yaml": "schema: olm.package\nname: z\n"}, "unrelated")
	c, _ := installationClient(t, s, repo)

	got := map[string]string{}
	pages := 0
	opts := &github.ListOptions{PerPage: 2}
	for {
		files, resp, err := c.PullRequests.ListFiles(context.Background(), owner, name, pr.Number, opts)
		if err != nil {
			t.Fatalf("page %d: %v", opts.Page, err)
		}
		pages++
		for _, f := range files {
			got[f.GetFilename()] = f.GetStatus() + " " + f.GetPreviousFilename()
		}
		if resp.NextPage == 0 {
			if resp.LastPage != 0 {
				t.Errorf("last page has rel=last %d", resp.LastPage)
			}
			break
		}
		opts.Page = resp.NextPage
	}
	want := map[string]string{
		"catalog/a2/index.yaml":   "renamed catalog/a/index.yaml",
		"catalog/b/index.yaml":    "modified ",
		"catalog/c/index.yaml":    "removed ",
		"catalog/f/icon.svg":      "added ",
		"catalog/g/index.yaml":    "added ",
		"catalog/e2/channel.yaml": "renamed catalog/e/channel.yaml",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("files:\n got %v\nwant %v", got, want)
	}
	if pages != 3 {
		t.Errorf("%d pages of 2 for 6 files, want 3", pages)
	}
}

func TestListFilesStopsAt3000(t *testing.T) {
	s, repo := newRepo(t)
	files := map[string]string{}
	for i := range 3005 {
		files[fmt.Sprintf("catalog/p%04d/index.yaml", i)] = fmt.Sprintf("name: p%d\n", i)
	}
	repo.Commit("big", files, "many packages")
	pr := repo.OpenPR("bob", "big", "main")
	c, _ := installationClient(t, s, repo)
	n := 0
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListFiles(context.Background(), owner, name, pr.Number, opts)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if n != 3000 {
		t.Errorf("listed %d files of 3005, want GitHub's cap of 3000", n)
	}
	full, _, err := c.PullRequests.Get(context.Background(), owner, name, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if full.GetChangedFiles() != 3005 {
		t.Errorf("changed_files %d, want the true 3005", full.GetChangedFiles())
	}
}

func TestMerge(t *testing.T) {
	ctx := context.Background()
	t.Run("pinned sha merges with a real commit", func(t *testing.T) {
		s, repo := newRepo(t)
		head := repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
		pr := repo.OpenPR("bob", "feature", "main")
		base := repo.Branch("main")
		c, _ := installationClient(t, s, repo)
		res, _, err := c.PullRequests.Merge(ctx, owner, name, pr.Number, "", &github.PullRequestOptions{SHA: head, MergeMethod: "merge"})
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		if res.GetSHA() != repo.Branch("main") || !res.GetMerged() {
			t.Errorf("merge result %s, main is at %s", res.GetSHA(), repo.Branch("main"))
		}
		if p := repo.Parents(res.GetSHA()); len(p) != 2 || p[0] != base || p[1] != head {
			t.Errorf("merge commit parents %v, want [%s %s]", p, base, head)
		}
		if got, _ := repo.ReadFile("main", "catalog/b/index.yaml"); got != "name: b2\n" {
			t.Errorf("main has %q after the merge", got)
		}
		if m := repo.Merges(); len(m) != 1 || m[0].HeadSHA != head || m[0].Method != "merge" {
			t.Errorf("merges %+v", m)
		}
		if !pr.Merged() || pr.State() != "closed" {
			t.Errorf("PR merged=%v state=%s after the merge", pr.Merged(), pr.State())
		}
		got, _, err := c.PullRequests.Get(ctx, owner, name, pr.Number)
		if err != nil || !got.GetMerged() || got.GetMergeCommitSHA() != res.GetSHA() {
			t.Errorf("GET after merge: merged=%v merge_commit_sha=%s err=%v", got.GetMerged(), got.GetMergeCommitSHA(), err)
		}
		if merged, _, _ := c.PullRequests.IsMerged(ctx, owner, name, pr.Number); !merged {
			t.Error("GET .../merge says not merged")
		}
	})
	t.Run("base moved elsewhere: squash applies the PR's changes to the base", func(t *testing.T) {
		s, repo := newRepo(t)
		head := repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
		pr := repo.OpenPR("bob", "feature", "main")
		moved := repo.Commit("main", map[string]string{"catalog/c/index.yaml": "name: c2\n"}, "c2")
		c, _ := installationClient(t, s, repo)
		res, _, err := c.PullRequests.Merge(ctx, owner, name, pr.Number, "", &github.PullRequestOptions{SHA: head, MergeMethod: "squash"})
		if err != nil {
			t.Fatalf("merge: %v", err)
		}
		if p := repo.Parents(res.GetSHA()); len(p) != 1 || p[0] != moved {
			t.Errorf("squash parents %v, want [%s]", p, moved)
		}
		for path, want := range map[string]string{"catalog/b/index.yaml": "name: b2\n", "catalog/c/index.yaml": "name: c2\n"} {
			if got, _ := repo.ReadFile("main", path); got != want {
				t.Errorf("%s = %q after the merge, want %q", path, got, want)
			}
		}
	})

	refusals := []struct {
		name   string
		setup  func(repo *githubtest.Repo, pr *githubtest.PR) (sha string)
		status int
	}{
		{"stale sha", func(repo *githubtest.Repo, pr *githubtest.PR) string {
			old := pr.HeadSHA()
			pr.Push(map[string]string{"catalog/d/index.yaml": "name: d2\n"}, "more")
			return old
		}, http.StatusConflict},
		{"draft", func(repo *githubtest.Repo, pr *githubtest.PR) string { pr.SetDraft(true); return pr.HeadSHA() }, http.StatusMethodNotAllowed},
		{"not mergeable", func(repo *githubtest.Repo, pr *githubtest.PR) string { pr.SetMergeable(false); return pr.HeadSHA() }, http.StatusMethodNotAllowed},
		{"closed", func(repo *githubtest.Repo, pr *githubtest.PR) string { pr.Close(); return pr.HeadSHA() }, http.StatusMethodNotAllowed},
		{"same file changed on the base", func(repo *githubtest.Repo, pr *githubtest.PR) string {
			repo.Commit("main", map[string]string{"catalog/b/index.yaml": "name: b-main\n"}, "conflict")
			return pr.HeadSHA()
		}, http.StatusMethodNotAllowed},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			s, repo := newRepo(t)
			repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
			pr := repo.OpenPR("bob", "feature", "main")
			sha := tt.setup(repo, pr)
			before := repo.Branch("main")
			c, _ := installationClient(t, s, repo)
			_, resp, err := c.PullRequests.Merge(ctx, owner, name, pr.Number, "", &github.PullRequestOptions{SHA: sha, MergeMethod: "squash"})
			if err == nil || resp.StatusCode != tt.status {
				t.Fatalf("merge: err %v, want status %d", err, tt.status)
			}
			if repo.Branch("main") != before || len(repo.Merges()) != 0 || pr.Merged() {
				t.Errorf("a refused merge changed main or the PR")
			}
		})
	}
}

func TestCheckRuns(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
	pr := repo.OpenPR("bob", "feature", "main")
	head := pr.HeadSHA()
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()

	ann := func(msg string) *github.CheckRunAnnotation {
		return &github.CheckRunAnnotation{Path: github.String("catalog/b/index.yaml"), StartLine: github.Int(1), EndLine: github.Int(1),
			AnnotationLevel: github.String("failure"), Message: github.String(msg)}
	}
	run, _, err := c.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{
		Name: "catalogbot", HeadSHA: head, Status: github.String("in_progress"),
		Output: &github.CheckRunOutput{Title: github.String("checking"), Summary: github.String("..."), Annotations: []*github.CheckRunAnnotation{ann("one")}},
	})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if len(run.PullRequests) != 1 || run.PullRequests[0].GetNumber() != pr.Number {
		t.Errorf("check run pull_requests %v, want #%d", run.PullRequests, pr.Number)
	}
	_, _, err = c.Checks.UpdateCheckRun(ctx, owner, name, run.GetID(), github.UpdateCheckRunOptions{
		Name: "catalogbot", Conclusion: github.String("failure"),
		Output: &github.CheckRunOutput{Title: github.String("1 error"), Summary: github.String("bad"), Annotations: []*github.CheckRunAnnotation{ann("two"), ann("three")}},
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	runs := repo.CheckRuns(head)
	if len(runs) != 1 {
		t.Fatalf("%d runs on the head, want 1", len(runs))
	}
	r := runs[0]
	var msgs []string
	for _, a := range r.Annotations {
		msgs = append(msgs, a.Message)
	}
	if r.Status != "completed" || r.Conclusion != "failure" || r.Title != "1 error" || r.Summary != "bad" || strings.Join(msgs, ",") != "one,two,three" {
		t.Errorf("run after update: %+v", r)
	}

	// A second run of another name, and a re-run: list keeps the latest per name; check_name filters.
	for _, n := range []string{"other", "catalogbot"} {
		if _, _, err := c.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{Name: n, HeadSHA: head}); err != nil {
			t.Fatal(err)
		}
	}
	list, _, err := c.Checks.ListCheckRunsForRef(ctx, owner, name, head, nil)
	if err != nil || list.GetTotal() != 2 {
		t.Fatalf("list: total %d err %v, want the 2 latest", list.GetTotal(), err)
	}
	named, _, err := c.Checks.ListCheckRunsForRef(ctx, owner, name, head, &github.ListCheckRunsOptions{CheckName: github.String("catalogbot")})
	if err != nil || named.GetTotal() != 1 || named.CheckRuns[0].GetStatus() != "queued" {
		t.Fatalf("check_name filter: %+v err %v, want the queued re-run", named, err)
	}
	all, _, err := c.Checks.ListCheckRunsForRef(ctx, owner, name, head, &github.ListCheckRunsOptions{Filter: github.String("all")})
	if err != nil || all.GetTotal() != 3 {
		t.Fatalf("filter=all: total %d err %v, want 3", all.GetTotal(), err)
	}

	// The head's suite was created when the head was pushed, and counts the runs.
	suites, _, err := c.Checks.ListCheckSuitesForRef(ctx, owner, name, head, nil)
	if err != nil || suites.GetTotal() != 1 {
		t.Fatalf("suites: %+v err %v", suites, err)
	}
	if want := repo.CheckSuites(head)[0].CreatedAt; !suites.CheckSuites[0].GetCreatedAt().Time.Equal(want) {
		t.Errorf("suite created_at %v, want the push time %v", suites.CheckSuites[0].GetCreatedAt(), want)
	}

	// A missing commit is refused like GitHub does.
	_, resp, err := c.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{Name: "x", HeadSHA: strings.Repeat("a", 40)})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("check run on an unknown sha: err %v", err)
	}
}

func TestComments(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"x": "y"}, "x")
	pr := repo.OpenPR("bob", "feature", "main")
	repo.Comment(pr.Number, "alice", "/approve")
	repo.Comment(pr.Number, "renovate[bot]", "/approve")
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()
	created, _, err := c.Issues.CreateComment(ctx, owner, name, pr.Number, &github.IssueComment{Body: github.String("<!-- catalogbot -->\nstatus")})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetUser().GetLogin() != "catalogbot[bot]" || created.GetUser().GetType() != "Bot" {
		t.Errorf("the App's comment is by %s (%s)", created.GetUser().GetLogin(), created.GetUser().GetType())
	}
	if _, _, err := c.Issues.EditComment(ctx, owner, name, created.GetID(), &github.IssueComment{Body: github.String("<!-- catalogbot -->\nupdated")}); err != nil {
		t.Fatal(err)
	}
	var all []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	for {
		page, resp, err := c.Issues.ListComments(ctx, owner, name, pr.Number, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	var got []string
	for _, cm := range all {
		got = append(got, cm.GetUser().GetLogin()+"/"+cm.GetUser().GetType()+": "+cm.GetBody())
	}
	want := []string{"alice/User: /approve", "renovate[bot]/Bot: /approve", "catalogbot[bot]/Bot: <!-- catalogbot -->\nupdated"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("comments:\n got %q\nwant %q", got, want)
	}
	if ic := repo.IssueComments(pr.Number); len(ic) != 3 || ic[2].Body != "<!-- catalogbot -->\nupdated" {
		t.Errorf("IssueComments: %+v", ic)
	}
}

// TestTimeline: a PR's timeline lists its commits and its force-pushes,
// with GitHub's time for the force-pushes, and a force-push to a commit
// that exists already (here another PR's) makes no new check suite.
func TestTimeline(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("evil", map[string]string{"x": "evil"}, "evil")
	evil := repo.OpenPR("mallory", "evil", "main")
	x := evil.HeadSHA()
	evil.Close()
	s.Advance(time.Hour)
	repo.Commit("benign", map[string]string{"y": "benign"}, "benign")
	pr := repo.OpenPR("mallory", "benign", "main")
	b1 := pr.HeadSHA()
	s.Advance(time.Minute)
	b2 := pr.Push(map[string]string{"y": "more"}, "more")
	s.Advance(time.Minute)
	pr.ForcePush(x)
	if pr.HeadSHA() != x || repo.Branch("benign") != x {
		t.Fatalf("head %s, branch %s after the force-push, want %s", pr.HeadSHA(), repo.Branch("benign"), x)
	}
	if n := len(repo.CheckSuites(x)); n != 1 {
		t.Errorf("%d check suites of %s after the force-push, want the one the first PR made", n, x)
	}

	c, _ := installationClient(t, s, repo)
	var got []string
	var forced time.Time
	opts := &github.ListOptions{PerPage: 2}
	for {
		page, resp, err := c.Issues.ListIssueTimeline(context.Background(), owner, name, pr.Number, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page {
			switch ev.GetEvent() {
			case "committed":
				got = append(got, "committed "+ev.GetSHA())
			case "head_ref_force_pushed":
				got = append(got, "force-pushed "+ev.GetCommitID()+" by "+ev.GetActor().GetLogin())
				forced = ev.GetCreatedAt().Time
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	want := []string{"committed " + b1, "committed " + b2, "force-pushed " + x + " by mallory", "committed " + x}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("timeline:\n got %q\nwant %q", got, want)
	}
	if forced.Before(repo.CheckSuites(x)[0].CreatedAt.Add(time.Hour)) {
		t.Errorf("the force-push is dated %v, not by the fake's clock after the first PR's push", forced)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestEditByAnotherUser: a collaborator with write access may edit anyone's
// comment, as on GitHub; the comment keeps its author, and the edited
// delivery names the editor and the body before. Others may not.
func TestEditByAnotherUser(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"x": "y"}, "x")
	pr := repo.OpenPR("bob", "feature", "main")
	id := repo.Comment(pr.Number, "alice", "do not merge yet")
	repo.SetPermission("mallory", "write")
	path := fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, name, id)

	if resp, body := raw(t, s, "PATCH", path, s.UserToken(repo, "eve"), map[string]string{"body": "/approve"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a user without write access edited a comment: %d %s", resp.StatusCode, body)
	}
	s.Advance(time.Minute)
	resp, body := raw(t, s, "PATCH", path, s.UserToken(repo, "mallory"), map[string]string{"body": "/approve"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("edit: %d %s", resp.StatusCode, body)
	}
	var cm github.IssueComment
	if err := json.Unmarshal(body, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.GetUser().GetLogin() != "alice" || cm.GetBody() != "/approve" || !cm.GetUpdatedAt().After(cm.GetCreatedAt().Time) {
		t.Errorf("edited comment: by %s, %q, created %v, updated %v", cm.GetUser().GetLogin(), cm.GetBody(), cm.GetCreatedAt(), cm.GetUpdatedAt())
	}
	var p map[string]any
	if err := json.Unmarshal(s.Payload("issue_comment", "edited", githubtest.PayloadArgs{Repo: repo, PR: pr.Number, CommentID: id}), &p); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"action": "edited", "sender.login": "mallory", "comment.user.login": "alice",
		"comment.body": "/approve", "changes.body.from": "do not merge yet",
		"comment.updated_at": cm.GetUpdatedAt().UTC().Format(time.RFC3339),
	} {
		if got := field(t, p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestPaginationLinks(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"x": "y"}, "x")
	pr := repo.OpenPR("bob", "feature", "main")
	for i := range 5 {
		repo.Comment(pr.Number, "alice", fmt.Sprint(i))
	}
	tok := token(t, s, repo)
	path := fmt.Sprintf("/repos/acme/catalog/issues/%d/comments", pr.Number)
	tests := []struct {
		query string
		rels  []string
		n     int
	}{
		{"?per_page=2", []string{"next", "last"}, 2},
		{"?per_page=2&page=2", []string{"prev", "next", "last", "first"}, 2},
		{"?per_page=2&page=3", []string{"prev", "first"}, 1},
		{"", nil, 5},
	}
	for _, tt := range tests {
		resp, body := raw(t, s, "GET", path+tt.query, tok, nil)
		var items []any
		if err := json.Unmarshal(body, &items); err != nil || len(items) != tt.n {
			t.Errorf("%s: %d items (%v), want %d", tt.query, len(items), err, tt.n)
		}
		var rels []string
		for _, l := range strings.Split(resp.Header.Get("Link"), ", ") {
			if _, rel, ok := strings.Cut(l, `rel="`); ok {
				rels = append(rels, strings.TrimSuffix(rel, `"`))
				if !strings.HasPrefix(l, "<"+s.URL+path+"?") {
					t.Errorf("%s: link %s is not absolute on the same path", tt.query, l)
				}
			}
		}
		sort.Strings(rels)
		want := append([]string(nil), tt.rels...)
		sort.Strings(want)
		if strings.Join(rels, ",") != strings.Join(want, ",") {
			t.Errorf("%s: Link rels %v, want %v", tt.query, rels, want)
		}
	}
}

func TestConditionalRequests(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"x": "y"}, "x")
	pr := repo.OpenPR("bob", "feature", "main")
	tok := token(t, s, repo)
	path := fmt.Sprintf("/repos/acme/catalog/pulls/%d", pr.Number)
	first, _ := raw(t, s, "GET", path, tok, nil)
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on a GET")
	}
	again, body := raw(t, s, "GET", path, tok, nil, "If-None-Match", etag)
	if again.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("If-None-Match with the current ETag: %d %q, want 304 and no body", again.StatusCode, body)
	}
	if again.Header.Get("X-RateLimit-Remaining") != first.Header.Get("X-RateLimit-Remaining") {
		t.Errorf("a 304 counted against the rate limit: %s then %s", first.Header.Get("X-RateLimit-Remaining"), again.Header.Get("X-RateLimit-Remaining"))
	}
	pr.Push(map[string]string{"x": "z"}, "move")
	changed, _ := raw(t, s, "GET", path, tok, nil, "If-None-Match", etag)
	if changed.StatusCode != http.StatusOK || changed.Header.Get("ETag") == etag {
		t.Errorf("after a push: %d with ETag %s, want 200 and a new ETag", changed.StatusCode, changed.Header.Get("ETag"))
	}
}

func TestFaults(t *testing.T) {
	s, repo := newRepo(t)
	tok := token(t, s, repo)
	c, _ := installationClient(t, s, repo)
	ctx := context.Background()

	s.FailNext(2, http.StatusBadGateway)
	for i := range 2 {
		if resp, _ := raw(t, s, "GET", "/repos/acme/catalog", tok, nil); resp.StatusCode != http.StatusBadGateway {
			t.Errorf("request %d: %d, want 502", i, resp.StatusCode)
		}
	}
	if resp, _ := raw(t, s, "GET", "/repos/acme/catalog", tok, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after the outage: %d, want 200", resp.StatusCode)
	}

	s.RateLimitNext(1)
	resp, _ := raw(t, s, "GET", "/repos/acme/catalog", tok, nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("X-RateLimit-Remaining") == "" {
		t.Errorf("secondary rate limit: %d Retry-After=%q remaining=%q", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("X-RateLimit-Remaining"))
	}
	if _, _, err := c.Repositories.Get(ctx, owner, name); err != nil { // fetches the client's token
		t.Fatal(err)
	}
	s.RateLimitNext(1)
	_, _, err := c.Repositories.Get(ctx, owner, name)
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.GetRetryAfter().Seconds() != 1 {
		t.Errorf("go-github sees %T %v, want an AbuseRateLimitError with Retry-After 1s", err, err)
	}
	s.TooManyRequestsNext(1)
	if resp, _ := raw(t, s, "GET", "/repos/acme/catalog", tok, nil); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("429 variant: %d", resp.StatusCode)
	}
	if v := s.Violations(); len(v) != 0 {
		t.Errorf("faults are not violations: %v", v)
	}
}

func TestValidatorCatchesABadRequest(t *testing.T) {
	s, repo := newRepo(t)
	s.AllowViolations()
	tok := token(t, s, repo)
	resp, _ := raw(t, s, "POST", "/repos/acme/catalog/check-runs", tok, map[string]any{"name": "catalogbot"})
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("check run without head_sha: %d, want 422", resp.StatusCode)
	}
	v := s.Violations()
	if len(v) != 1 || v[0].Kind != "request" || v[0].Method != "POST" || !strings.Contains(v[0].Err, "head_sha") {
		t.Fatalf("violations %v, want one request violation naming head_sha", v)
	}
	if len(repo.CheckRuns(repo.Branch("main"))) != 0 {
		t.Error("an invalid request created a check run")
	}
	// An operation outside the description is a violation too.
	raw(t, s, "DELETE", "/repos/acme/catalog", tok, nil)
	if v := s.Violations(); len(v) != 2 || v[1].Kind != "route" {
		t.Errorf("violations %v, want a route violation for DELETE /repos/{owner}/{repo}", v)
	}
}

func TestValidatorCatchesABadResponse(t *testing.T) {
	s, repo := newRepo(t)
	s.AllowViolations()
	s.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/check-runs") {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(resp.Body, &m); err != nil {
			t.Errorf("check run response: %v", err)
			return
		}
		m["status"] = "bogus"
		delete(m, "head_sha")
		resp.Body, _ = json.Marshal(m)
	})
	c, _ := installationClient(t, s, repo)
	if _, _, err := c.Checks.CreateCheckRun(context.Background(), owner, name, github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: repo.Branch("main")}); err != nil {
		t.Fatal(err)
	}
	v := s.Violations()
	if len(v) != 1 || v[0].Kind != "response" || !strings.Contains(v[0].Err, "head_sha") || !strings.Contains(v[0].Err, "bogus") {
		t.Fatalf("violations %v, want one response violation naming head_sha and the bad status", v)
	}
}

func checkRunOpts(sha string) github.CreateCheckRunOptions {
	return github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: sha}
}

// TestCheckRunsOfOtherApps: a check run carries the App that made it,
// whatever its name; filter=latest keeps each App's newest; app_id
// filters.
func TestCheckRunsOfOtherApps(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
	pr := repo.OpenPR("bob", "feature", "main")
	head := pr.HeadSHA()
	c, _ := installationClient(t, s, repo)
	other := github.NewClient(nil).WithAuthToken(s.OtherAppToken(repo, "mallory-app"))
	other.BaseURL = c.BaseURL
	ctx := context.Background()

	ours, _, err := c.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: head})
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := other.Checks.CreateCheckRun(ctx, owner, name, github.CreateCheckRunOptions{Name: "catalogbot", HeadSHA: head,
		Status: github.String("completed"), Conclusion: github.String("failure")})
	if err != nil {
		t.Fatal(err)
	}
	otherID := s.OtherAppID("mallory-app")
	if otherID == 0 || otherID == s.AppID() {
		t.Fatalf("the other App's id is %d (catalogbot's %d)", otherID, s.AppID())
	}
	if ours.GetApp().GetID() != s.AppID() || ours.GetApp().GetSlug() != s.AppSlug() {
		t.Errorf("catalogbot's run names App %d %q", ours.GetApp().GetID(), ours.GetApp().GetSlug())
	}
	if theirs.GetApp().GetID() != otherID || theirs.GetApp().GetSlug() != "mallory-app" {
		t.Errorf("the other App's run names App %d %q", theirs.GetApp().GetID(), theirs.GetApp().GetSlug())
	}
	if runs := repo.CheckRuns(head); len(runs) != 2 || runs[1].AppID != otherID || runs[1].AppSlug != "mallory-app" {
		t.Errorf("CheckRuns: %+v", runs)
	}

	latest, _, err := c.Checks.ListCheckRunsForRef(ctx, owner, name, head, nil)
	if err != nil || latest.GetTotal() != 2 {
		t.Fatalf("filter=latest: total %d err %v, want each App's run of the name", latest.GetTotal(), err)
	}
	mine, _, err := c.Checks.ListCheckRunsForRef(ctx, owner, name, head, &github.ListCheckRunsOptions{AppID: github.Int64(s.AppID())})
	if err != nil || mine.GetTotal() != 1 || mine.CheckRuns[0].GetID() != ours.GetID() {
		t.Fatalf("app_id filter: %+v err %v, want catalogbot's run alone", mine, err)
	}

	// Each App's runs are in a suite of that App's, and a delivery about
	// the other App's run names that App in the run and its suite.
	if theirs.GetCheckSuite().GetID() == ours.GetCheckSuite().GetID() {
		t.Errorf("both Apps' runs are in suite %d", ours.GetCheckSuite().GetID())
	}
	suites, _, err := c.Checks.ListCheckSuitesForRef(ctx, owner, name, head, nil)
	if err != nil || suites.GetTotal() != 2 {
		t.Fatalf("suites: total %d err %v, want one per App", suites.GetTotal(), err)
	}
	var p struct {
		CheckRun struct {
			App        struct{ ID int64 }
			CheckSuite struct{ App struct{ ID int64 } } `json:"check_suite"`
		} `json:"check_run"`
	}
	body := s.Payload("check_run", "rerequested", githubtest.PayloadArgs{Repo: repo, PR: pr.Number, CheckRunID: theirs.GetID()})
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if p.CheckRun.App.ID != otherID || p.CheckRun.CheckSuite.App.ID != otherID {
		t.Errorf("the delivery names App %d, suite App %d, want %d", p.CheckRun.App.ID, p.CheckRun.CheckSuite.App.ID, otherID)
	}
}
