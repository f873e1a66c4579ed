package githubtest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestGitDataAPI writes a commit without a clone, as the App's proposals
// do: a blob, a tree on the base's tree, a commit, a branch with a slash
// in its name; opens a labelled pull request from it, moves the branch
// (refused without force when it is not a fast-forward), and closes the
// pull request. The repository's git state follows, and every request and
// response matches GitHub's description.
func TestGitDataAPI(t *testing.T) {
	ctx := context.Background()
	s := githubtest.New(t)
	repo := s.AddRepo(owner, name, map[string]string{"catalog/foo/catalog.yaml": "schema: olm.package\nname: foo\n"})
	gh, _ := installationClient(t, s, repo)
	base := repo.Branch("main")

	commit := func(parent, content string) string {
		t.Helper()
		blob, _, err := gh.Git.CreateBlob(ctx, owner, name, &github.Blob{Content: github.String(content), Encoding: github.String("utf-8")})
		if err != nil {
			t.Fatal(err)
		}
		tree, _, err := gh.Git.CreateTree(ctx, owner, name, repo.TreeOf(parent), []*github.TreeEntry{
			{Path: github.String("catalog/foo/foo.v2.yaml"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, _, err := gh.Git.CreateCommit(ctx, owner, name, &github.Commit{Message: github.String("foo: propose 2.0.0"), Tree: tree, Parents: []*github.Commit{{SHA: github.String(parent)}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.GetSHA()
	}
	first := commit(base, "foo 2.0.0\n")
	const branch = "catalogbot/propose/foo"
	if _, _, err := gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: github.String(first)}}); err != nil {
		t.Fatal(err)
	}
	ref, _, err := gh.Git.GetRef(ctx, owner, name, "heads/"+branch)
	if err != nil || ref.GetObject().GetSHA() != first {
		t.Fatalf("GetRef = %v, %v; want %s", ref, err, first)
	}
	if got, err := repo.ReadFile(branch, "catalog/foo/foo.v2.yaml"); err != nil || got != "foo 2.0.0\n" {
		t.Fatalf("the branch holds %q, %v", got, err)
	}
	if got, err := repo.ReadFile(branch, "catalog/foo/catalog.yaml"); err != nil || got == "" {
		t.Fatalf("base_tree's file lost: %q, %v", got, err)
	}

	pr, _, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{Title: github.String("foo: propose 2.0.0"), Head: github.String(branch), Base: github.String("main"), Body: github.String("Released")})
	if err != nil {
		t.Fatal(err)
	}
	// The object form: GitHub's description lists no other, although
	// go-github's AddLabelsToIssue sends a bare list.
	req, err := gh.NewRequest("POST", fmt.Sprintf("repos/%s/%s/issues/%d/labels", owner, name, pr.GetNumber()), map[string][]string{"labels": {"catalogbot/proposal"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Do(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	fake := repo.PR(pr.GetNumber())
	if fake.Author() != s.AppSlug()+"[bot]" || fake.HeadSHA() != first || !slices.Equal(fake.Labels(), []string{"catalogbot/proposal"}) {
		t.Fatalf("PR #%d: author %s head %s labels %v", pr.GetNumber(), fake.Author(), fake.HeadSHA(), fake.Labels())
	}
	if _, _, err := gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{Title: github.String("again"), Head: github.String(branch), Base: github.String("main")}); statusOf(err) != http.StatusUnprocessableEntity {
		t.Fatalf("a second pull request of one head: %v; want 422", err)
	}

	// A newer version: a commit on the base again, not on the branch.
	second := commit(base, "foo 2.1.0\n")
	_, _, err = gh.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String("heads/" + branch), Object: &github.GitObject{SHA: github.String(second)}}, false)
	if statusOf(err) != http.StatusUnprocessableEntity {
		t.Fatalf("a move that is not a fast-forward, without force: %v; want 422", err)
	}
	if _, _, err := gh.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String("heads/" + branch), Object: &github.GitObject{SHA: github.String(second)}}, true); err != nil {
		t.Fatal(err)
	}
	if fake.HeadSHA() != second {
		t.Fatalf("the pull request's head is %s after the forced move; want %s", fake.HeadSHA(), second)
	}
	if _, _, err := gh.PullRequests.Edit(ctx, owner, name, pr.GetNumber(), &github.PullRequest{Title: github.String("foo: propose 2.1.0"), State: github.String("closed")}); err != nil {
		t.Fatal(err)
	}
	if fake.State() != "closed" || fake.Title() != "foo: propose 2.1.0" {
		t.Fatalf("after the edit: state %s title %q", fake.State(), fake.Title())
	}
	if v := s.Violations(); len(v) > 0 {
		t.Errorf("violations of GitHub's description: %v", v)
	}
}

func statusOf(err error) int {
	if er, ok := err.(*github.ErrorResponse); ok && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}
