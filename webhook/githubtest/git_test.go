package githubtest_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

func TestGitCloneAndFetchPullHead(t *testing.T) {
	s, repo := newRepo(t)
	repo.Commit("feature", map[string]string{"catalog/b/index.yaml": "name: b2\n"}, "b2")
	pr := repo.OpenPR("bob", "feature", "main")
	auth := &githttp.BasicAuth{Username: "x-access-token", Password: token(t, s, repo)}

	local, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: repo.CloneURL(), Auth: auth, NoCheckout: true})
	if err != nil {
		t.Fatalf("clone: %v", err)
	}
	if ref, err := local.Reference("refs/remotes/origin/main", true); err != nil || ref.Hash().String() != repo.Branch("main") {
		t.Fatalf("origin/main %v (%v), want %s", ref, err, repo.Branch("main"))
	}

	fetchPR := func() string {
		t.Helper()
		spec := config.RefSpec(fmt.Sprintf("+refs/pull/%d/head:refs/remotes/origin/pr/%d", pr.Number, pr.Number))
		err := local.Fetch(&git.FetchOptions{RefSpecs: []config.RefSpec{spec}, Auth: auth})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			t.Fatalf("fetch refs/pull/%d/head: %v", pr.Number, err)
		}
		ref, err := local.Reference(plumbing.ReferenceName(fmt.Sprintf("refs/remotes/origin/pr/%d", pr.Number)), true)
		if err != nil {
			t.Fatalf("fetched ref: %v", err)
		}
		return ref.Hash().String()
	}
	readAt := func(sha, path string) string {
		t.Helper()
		c, err := local.CommitObject(plumbing.NewHash(sha))
		if err != nil {
			t.Fatalf("commit %s not fetched: %v", sha, err)
		}
		f, err := c.File(path)
		if err != nil {
			t.Fatalf("%s at %s: %v", path, sha, err)
		}
		content, err := f.Contents()
		if err != nil {
			t.Fatal(err)
		}
		return content
	}

	if got := fetchPR(); got != pr.HeadSHA() {
		t.Fatalf("refs/pull/%d/head fetched as %s, want %s", pr.Number, got, pr.HeadSHA())
	}
	if got := readAt(pr.HeadSHA(), "catalog/b/index.yaml"); got != "name: b2\n" {
		t.Errorf("file at the head: %q", got)
	}
	// An incremental fetch after a push brings the new head.
	pr.Push(map[string]string{"catalog/b/index.yaml": "name: b3\n"}, "b3")
	if got := fetchPR(); got != pr.HeadSHA() {
		t.Fatalf("after a push, fetched %s, want %s", got, pr.HeadSHA())
	}
	if got := readAt(pr.HeadSHA(), "catalog/b/index.yaml"); got != "name: b3\n" {
		t.Errorf("file at the new head: %q", got)
	}
}

func TestGitRefusesWithoutToken(t *testing.T) {
	s, repo := newRepo(t)
	tests := []struct {
		name string
		auth transport.AuthMethod
	}{
		{"no auth", nil},
		{"wrong token", &githttp.BasicAuth{Username: "x-access-token", Password: "ghs_wrong"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: repo.CloneURL(), Auth: tt.auth, NoCheckout: true})
			if !errors.Is(err, transport.ErrAuthenticationRequired) && !errors.Is(err, transport.ErrAuthorizationFailed) {
				t.Fatalf("clone: %v, want an authentication error", err)
			}
		})
	}
	var refused []githubtest.Request
	for _, r := range s.Requests() {
		if r.Status == 401 {
			refused = append(refused, r)
		}
	}
	if len(refused) != len(tests) {
		t.Errorf("%d git requests refused with 401, want %d: %v", len(refused), len(tests), s.Requests())
	}

	// Pushing is not served.
	tok := token(t, s, repo)
	local, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: repo.CloneURL(), NoCheckout: true,
		Auth: &githttp.BasicAuth{Username: "x-access-token", Password: tok}})
	if err != nil {
		t.Fatal(err)
	}
	err = local.Push(&git.PushOptions{Auth: &githttp.BasicAuth{Username: "x-access-token", Password: tok},
		RefSpecs: []config.RefSpec{"refs/remotes/origin/main:refs/heads/other"}, Progress: io.Discard})
	if err == nil || repo.Branch("other") != "" {
		t.Errorf("push: %v, branch other = %q; want a refusal", err, repo.Branch("other"))
	}
}

// TestHookGitHoldsAFetchMidTransfer: a git hook that blocks holds the
// clone with half the pack sent, while the fake answers other requests;
// released, the clone completes.
func TestHookGitHoldsAFetchMidTransfer(t *testing.T) {
	s, repo := newRepo(t)
	tok := token(t, s, repo)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.HookGit(func(r *http.Request, service string) {
		if service == "git-upload-pack" {
			once.Do(func() { close(held) })
			<-release
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{URL: repo.CloneURL(), NoCheckout: true,
			Auth: &githttp.BasicAuth{Username: "x-access-token", Password: tok}})
		done <- err
	}()
	<-held
	// The fake is not locked by the held transfer.
	if resp, _ := raw(t, s, http.MethodGet, "/repos/"+owner+"/"+name, tok, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET the repository while a fetch is held: %d", resp.StatusCode)
	}
	select {
	case err := <-done:
		t.Fatalf("the clone ended while held: %v", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("clone after release: %v", err)
	}
}
