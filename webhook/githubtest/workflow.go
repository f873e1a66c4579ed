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
