package ghapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/webhook/ghapi"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestRejectedTokenIsMintedAgain: GitHub rejects the installation token
// (revoked, or expired by GitHub's clock while ours says it is good); the
// client drops it, mints a new one once, and the request succeeds, a
// write with a body as well as a read.
func TestRejectedTokenIsMintedAgain(t *testing.T) {
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{"README.md": "hi\n"})
	repo.Commit("b", map[string]string{"x": "1\n"}, "x")
	pr := repo.OpenPR("bob", "b", "main")
	apps, err := ghapi.NewApps(gh.AppID(), gh.PrivateKeyPEM(), gh.URL+"/", ghapi.NewTransport(ghapi.TransportOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := apps.Installation(gh.InstallationID(repo))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mints := func() int {
		n := 0
		for _, r := range gh.Requests() {
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/access_tokens") && r.Status == 201 {
				n++
			}
		}
		return n
	}
	if _, _, err := c.PullRequests.Get(ctx, "acme", "catalog", pr.Number); err != nil {
		t.Fatal(err)
	}
	before, _ := apps.InstallationToken(ctx, gh.InstallationID(repo))

	gh.ExpireTokens()
	if _, _, err := c.PullRequests.Get(ctx, "acme", "catalog", pr.Number); err != nil {
		t.Fatalf("read after GitHub rejected the token: %v", err)
	}
	if n := mints(); n != 2 {
		t.Errorf("%d tokens minted, want 2", n)
	}
	after, _ := apps.InstallationToken(ctx, gh.InstallationID(repo))
	if after == before {
		t.Error("git is still given the rejected token")
	}

	gh.ExpireTokens()
	if _, _, err := c.Issues.CreateComment(ctx, "acme", "catalog", pr.Number, &github.IssueComment{Body: github.String("hello")}); err != nil {
		t.Fatalf("write after GitHub rejected the token: %v", err)
	}
	if n := mints(); n != 3 {
		t.Errorf("%d tokens minted, want 3", n)
	}
	if err := apps.TokenError(); err != nil {
		t.Errorf("TokenError = %v after a good mint", err)
	}
}

// TestTokenRejectedByGit: a token git was refused with is forgotten, so
// that the next fetch gets a new one without waiting for a REST request
// to meet the refusal; a token that is no longer the current one is left
// alone.
func TestTokenRejectedByGit(t *testing.T) {
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{"README.md": "hi\n"})
	apps, err := ghapi.NewApps(gh.AppID(), gh.PrivateKeyPEM(), gh.URL+"/", ghapi.NewTransport(ghapi.TransportOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := gh.InstallationID(repo)
	first, err := apps.InstallationToken(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	apps.RejectToken(ctx, id, first)
	second, err := apps.InstallationToken(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("the rejected token is given again")
	}
	// A late refusal of the old token keeps the new one.
	apps.RejectToken(ctx, id, first)
	if third, _ := apps.InstallationToken(ctx, id); third != second {
		t.Error("a refusal of an older token dropped the current one")
	}
}
