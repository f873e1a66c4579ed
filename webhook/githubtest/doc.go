// Package githubtest runs a fake GitHub for tests, in the spirit of net/http/httptest.
//
// A Server keeps real state: repositories are real git repositories (go-git, in memory) with
// branches, commits and refs/pull/N/head; pull requests, their files (a real diff from the merge
// base to the head, with renames), issue comments, reviews, labels, check runs and check suites,
// commit statuses and merges all live in the server and change as the client acts on them. A merge
// really creates a commit on the base branch, and the repositories are served over git smart HTTP
// so that go-git can clone and fetch them with an installation token.
//
// The git data API (blobs, trees, commits, refs) writes into the same object store, so a branch
// created or force-moved through it is fetched over git and moves the pull requests whose head it is;
// pull requests can be opened, edited, closed and labelled through the API (gitdata.go).
//
// Every REST request a client makes and every response the server gives is validated against
// GitHub's OpenAPI description (testdata/github-bot.openapi.json, see internal/specsubset for how
// it is produced). A mismatch fails the test that owns the server and is listed by Violations, so
// tests cannot drift into speaking a dialect of the API that GitHub does not.
//
// A branch can require a merge queue (Repo.RequireMergeQueue): its rules list a merge_queue rule,
// the REST merge is refused with 405, and POST /graphql takes enqueuePullRequest, checking
// expectedHeadOid against the head, the one GraphQL operation the fake knows. Repo.MergeQueued
// merges what the queue holds; Repo.Dequeue takes a pull request out, and the pull_request dequeued
// payload (PayloadArgs.Reason) says so with the shape GitHub's webhook schema gives it. A ruleset that
// also requires checks (Repo.RequireChecks) makes the queue test groups: Repo.StartMergeGroup builds
// the queue's commit on gh-readonly-queue/... from the base's tip and the queued pull requests and
// raises merge_group checks_requested; the queue merges the group once every required check succeeded
// on that commit, destroys it on a failure, and waits for ever otherwise (mergegroup.go). The events the
// fake raises on its own go to the receivers Server.SendWebhooks subscribed to them.
//
// Typical use:
//
//	s := githubtest.New(t)
//	repo := s.AddRepo("acme", "catalog", map[string]string{"OWNERS": "approvers: [alice]\n"})
//	repo.Commit("feature", map[string]string{"catalog/foo/index.yaml": "..."}, "add foo")
//	pr := repo.OpenPR("bob", "feature", "main")
//	body := s.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: repo, PR: pr.Number})
//	resp := s.Deliver(t, receiverURL+"/webhook", "secret", "pull_request", body)
//
// The REST base URL for go-github is s.URL+"/"; the App's id and private key are s.AppID() and
// s.PrivateKeyPEM(); a repository's clone URL is repo.CloneURL(). s.OtherAppToken(repo, slug) is a
// token of another App installed on the same account: check runs made with it carry that App's id
// and slug, in a check suite of that App's, as GitHub's do, whatever name they are given.
package githubtest
