package githubtest

import (
	"testing"

	"github.com/go-git/go-git/v5"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// What a workflow run on the repository gets from GitHub: a token for the
// REST API (GITHUB_TOKEN) and a checkout. Tests of the GitHub Action use
// these to run against the same fake as the App.

// InstallationToken issues a token of the installation holding r, as
// GitHub gives a workflow run its GITHUB_TOKEN.
func (s *Server) InstallationToken(r *Repo) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newToken(s.installationOf(r.Owner)).value
}

// OtherAppToken returns an installation token for r of another GitHub
// App, slug, installed on r's account (the App is made on first use, with
// an id of its own). Check runs created with it carry that App's identity
// in their app object, as GitHub's do, so a test can report a check run
// named like catalogbot's, or like a required check, from another App.
func (s *Server) OtherAppToken(r *Repo, slug string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	app := s.otherApps[slug]
	if app == nil {
		app = &otherApp{id: s.newID(), slug: slug}
		s.otherApps[slug] = app
	}
	tk := s.newToken(s.installationOf(r.Owner))
	tk.app = app
	return tk.value
}

// OtherAppID is the id of the App slug made by OtherAppToken, 0 if none.
func (s *Server) OtherAppID(slug string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if app := s.otherApps[slug]; app != nil {
		return app.id
	}
	return 0
}

// Clone clones r into dir over the fake's git service with every branch,
// as actions/checkout with fetch-depth 0 does, so that both commits of a
// pull request are there. It fails the test on an error.
func (r *Repo) Clone(t testing.TB, dir string) {
	t.Helper()
	_, err := git.PlainClone(dir, false, &git.CloneOptions{
		URL:  r.CloneURL(),
		Auth: &githttp.BasicAuth{Username: "x-access-token", Password: r.s.InstallationToken(r)},
	})
	if err != nil {
		t.Fatalf("githubtest: clone %s: %v", r.FullName(), err)
	}
}
