package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-github/v60/github"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	imagespkg "github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// The front ends agree, by test: every scenario runs once through the App
// against the fake GitHub and once through "catalogbot check -o json" in
// GitHub Actions mode against the same fake, and both must reach the same
// conclusion, for the same reasons, with the same findings.

// agreeScenario is one pull request and what happens on it.
type agreeScenario struct {
	name string
	// base adds to (or, with githubtest.Delete, removes from) the
	// default branch.
	base   map[string]string
	author string
	// head is the pull request's change.
	head map[string]string
	// then acts on the open pull request: comments, reviews, labels.
	then func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR)
	// want is the verdict both must give; reason, when set, one of the
	// reasons against merging, and finding a finding they both report.
	want            checks.Conclusion
	reason, finding string
	// merged, when set ("yes" or "no"), is whether the App merges the
	// checked head: what only the App decides, on the forge's state.
	merged string
	// actionWant, when set, is the Action's verdict where the front ends
	// know different things by design: the App is told who edits a
	// comment, the Action is not. The two are then not compared.
	actionWant checks.Conclusion
	// missed is how many of the pull request's last head changes the
	// App was never told of (a lost delivery, or one before a restart).
	missed int
	// rateLimited turns the images check on in both front ends, and
	// serves the images the head names on rateLimitedHost from a
	// registry that answers every request with 429.
	rateLimited bool
	// shows, when set, is text that both the App's status comment and
	// the Action's job summary must hold.
	shows string
}

// rateLimitedHost stands for the rate limiting registry's host:port in a
// scenario's head.
const rateLimitedHost = "RATE-LIMITED-HOST"

func agreeScenarios() []agreeScenario {
	bump := map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v1.0.1", 1)}
	bump2 := map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v1.0.2", 1)}
	bar := strings.ReplaceAll(fbctest.Foo, "foo", "bar")
	// Comments come a minute after the push they are about: GitHub's
	// clock is in whole seconds, and a comment in the push's own second
	// cannot be told to be after it.
	comment := func(user, body string) func(*githubtest.Server, *githubtest.Repo, *githubtest.PR) {
		return func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
			s.Advance(time.Minute)
			r.Comment(pr.Number, user, body)
		}
	}
	// Another App's check runs, reported once catalogbot's run is there,
	// so that they are the newest of their names.
	other := func(runs ...[3]string) func(*githubtest.Server, *githubtest.Repo, *githubtest.PR) {
		return func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
			afterOwnRun(s, r, pr, runs)
		}
	}
	requireCI := func(entry string) map[string]string {
		return map[string]string{".catalogbot.yaml": "merge:\n  enabled: true\n  requiredChecks: [" + entry + "]\nowners:\n  bots: [ci-robot]\n"}
	}
	// edit has editor change comment id's body through the API with
	// their own token, a minute on.
	edit := func(s *githubtest.Server, r *githubtest.Repo, id int64, editor, body string) {
		s.Advance(time.Minute)
		req, err := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/repos/%s/issues/comments/%d", s.URL, r.FullName(), id),
			strings.NewReader(fmt.Sprintf(`{"body": %q}`, body)))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Authorization", "Bearer "+s.UserToken(r, editor))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			panic(fmt.Sprintf("%s could not edit comment %d: %s", editor, id, resp.Status))
		}
	}
	// evil is a commit of another pull request, opened and closed: it
	// changes alice's package, and has its check suite from then.
	evil := func(s *githubtest.Server, r *githubtest.Repo) string {
		r.Commit("evil", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v6.6.6", 1)}, "evil")
		pr := r.OpenPR("mallory", "evil", "main")
		sha := pr.HeadSHA()
		pr.Close()
		s.Advance(time.Minute)
		return sha
	}
	// The blobs of bob's package bar an attacker writes into foo's file,
	// and where the first of them lands.
	barBlobs := bar[strings.Index(bar, "---\nschema: olm.channel"):]
	barBlobs = strings.Replace(barBlobs, "bar.v1.0.0", "bar.v9.0.0", -1)
	barBlobs = strings.Replace(barBlobs, "quay.io/example/bar-bundle:v1.0.0", "evil.example.com/bar-bundle:v9", 1)
	barBlobs = strings.Replace(barBlobs, "version: 1.0.0", "version: 9.0.0", 1)
	barBlobs = strings.Replace(barBlobs, "name: stable", "name: fast", 1)
	barBlobs += "---\nschema: olm.deprecations\npackage: bar\nentries:\n  - reference:\n      schema: olm.package\n    message: use evil instead\n"
	inFoo := fmt.Sprintf("catalog/foo/catalog.yaml:%d error PK1", strings.Count(fbctest.Foo, "\n")+2)
	barBase := map[string]string{"catalog/bar/OWNERS": "approvers:\n  - bob\n", "catalog/bar/catalog.yaml": bar}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	free := agreePolicy + "catalog:\n  layout: free\n"
	// community-operators-prod's layout: packages' ci.yaml name the
	// approvers, one catalog root per OCP version.
	cop := communityOperators()
	copEvery := func(pkg string) map[string]string {
		out := map[string]string{}
		for p, data := range cop {
			if strings.HasPrefix(p, "catalogs/") && strings.HasSuffix(p, "/"+pkg+"/catalog.yaml") {
				out[p] = strings.Replace(data, "schema: olm.package", "description: maintained by its reviewers\nschema: olm.package", 1)
			}
		}
		return out
	}
	// foo with a second release, 1.1.0, on top of 1.0.0; removing 1.0.0
	// takes a release away.
	fooTwo := strings.Replace(fbctest.Foo, "  - name: foo.v1.0.0\n", "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n", 1) +
		strings.NewReplacer("v1.0.0", "v1.1.0", "1.0.0", "1.1.0").Replace(fbctest.Foo[strings.Index(fbctest.Foo, "---\nschema: olm.bundle"):])
	fooPruned := strings.Replace(fooTwo, "  - name: foo.v1.0.0\n", "", 1)
	fooPruned = fooPruned[:strings.Index(fooPruned, "---\nschema: olm.bundle")] + fooPruned[strings.LastIndex(fooPruned, "---\nschema: olm.bundle"):]
	pruned := fmt.Sprintf("catalog/foo/catalog.yaml:%d error RG1", strings.Count(fooTwo[:strings.Index(fooTwo, "---\nschema: olm.bundle")], "\n")+2)
	return []agreeScenario{
		{name: "a ci.yaml reviewer changes their package in every OCP catalog", author: "cevheri", want: checks.Success, merged: "yes",
			base: cop, head: copEvery("libredb-studio-operator")},
		{name: "a ci.yaml reviewer changes another package", author: "cevheri", want: checks.Failure, reason: "the pull request is not approved",
			base: cop, head: copEvery("kubevirt-wol")},
		{name: "adding oneself to a package's ci.yaml reviewers grants nothing", author: "mallory", want: checks.Failure, reason: "the pull request is not approved",
			base: cop, head: with(copEvery("kubevirt-wol"), "operators/kubevirt-wol/ci.yaml",
				strings.Replace(cop["operators/kubevirt-wol/ci.yaml"], "  - gpillon\n", "  - gpillon\n  - mallory\n", 1))},
		{name: "a change to two packages waits for the second package's ci.yaml reviewers", author: "cevheri", want: checks.Failure, reason: "the pull request is not approved",
			base: cop, head: with(copEvery("libredb-studio-operator"), "catalogs/v4.20/nfs-provisioner-operator/catalog.yaml",
				copEvery("nfs-provisioner-operator")["catalogs/v4.20/nfs-provisioner-operator/catalog.yaml"])},
		{name: "a change to two packages merges with both packages' ci.yaml reviewers", author: "cevheri", want: checks.Success, merged: "yes",
			base: cop, head: with(copEvery("libredb-studio-operator"), "catalogs/v4.20/nfs-provisioner-operator/catalog.yaml",
				copEvery("nfs-provisioner-operator")["catalogs/v4.20/nfs-provisioner-operator/catalog.yaml"]),
			then: comment("jooho", "/approve")},
		{name: "an owner removes a released bundle", author: "alice", want: checks.Failure, finding: pruned,
			base: map[string]string{"catalog/foo/catalog.yaml": fooTwo}, head: map[string]string{"catalog/foo/catalog.yaml": fooPruned},
			shows: "```mermaid\ngraph LR\n  n0[\"1.1.0\"]\n  x0[\"foo.v1.0.0 (not in channel)\"]\n"},
		{name: "a root approver allows removing a released bundle", author: "alice", want: checks.Success, then: comment("root-admin", "/approve"),
			base: map[string]string{"catalog/foo/catalog.yaml": fooTwo}, head: map[string]string{"catalog/foo/catalog.yaml": fooPruned},
			shows: "- removed bundle foo.v1.0.0 (1.0.0)\n"},
		{name: "foo's owner changes bar from foo's file", author: "alice", want: checks.Failure, reason: "the pull request is not approved", finding: inFoo,
			base: barBase, head: map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + barBlobs}},
		{name: "under a free layout, foo's owner still needs bar's", author: "alice", want: checks.Failure, reason: "the pull request is not approved",
			base: with(barBase, ".catalogbot.yaml", free), head: map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + barBlobs}},
		{name: "under a free layout, bar's owner approves bar's blobs in foo's file", author: "alice", want: checks.Success, then: comment("bob", "/approve"),
			base: with(barBase, ".catalogbot.yaml", free), head: map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + barBlobs}},
		{name: "a stranger writes foo's blobs into an auto-approved directory", author: "mallory", want: checks.Failure, reason: "the pull request is not approved",
			base: map[string]string{".catalogbot.yaml": free, "OWNERS": "approvers:\n  - root-admin\noptions:\n  auto_approve_unowned_subfolders: true\n"},
			head: map[string]string{"catalog/evil/catalog.yaml": strings.ReplaceAll(barBlobs, "bar", "foo")}},
		{name: "removing bar's blob from foo's directory", author: "alice", want: checks.Failure, reason: "the pull request is not approved",
			base: with(barBase, "catalog/foo/deprecations.yaml", barBlobs[strings.Index(barBlobs, "---\nschema: olm.deprecations"):]),
			head: map[string]string{"catalog/foo/deprecations.yaml": githubtest.Delete}},
		{name: "a package defined again from the author's own directory", author: "alice", want: checks.Failure, finding: inFoo,
			base: map[string]string{"catalog/qux/catalog.yaml": strings.ReplaceAll(fbctest.Foo, "foo", "baz")},
			head: map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + strings.ReplaceAll(fbctest.Foo, "foo", "baz")}},
		{name: "a package the base keeps elsewhere, defined again at home", author: "mallory", want: checks.Failure, finding: "catalog/qux/catalog.yaml:2 error C2",
			base: map[string]string{"OWNERS": "approvers:\n  - root-admin\noptions:\n  auto_approve_unowned_subfolders: true\n",
				"catalog/qux/catalog.yaml": strings.ReplaceAll(fbctest.Foo, "foo", "baz")},
			head: map[string]string{"catalog/baz/catalog.yaml": strings.ReplaceAll(fbctest.Foo, "foo", "baz")}},
		{name: "an owner's change", author: "alice", head: bump, want: checks.Success},
		{name: "a non-owner's change", author: "mallory", head: bump, want: checks.Failure, reason: "the pull request is not approved"},
		{name: "approved by /approve", author: "mallory", head: bump, then: comment("alice", "/approve"), want: checks.Success},
		{name: "approved by review", author: "mallory", head: bump, want: checks.Success,
			then: func(_ *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.Review(pr.Number, "alice", "APPROVED", "", pr.HeadSHA())
			}},
		{name: "held by a label in another case", author: "alice", head: bump, want: checks.Success, reason: "the pull request is held (do-not-merge/hold label or /hold)",
			then: func(_ *githubtest.Server, _ *githubtest.Repo, pr *githubtest.PR) { pr.SetLabels("Do-Not-Merge/Hold") }},
		{name: "held by a comment", author: "alice", head: bump, then: comment("carol", "/hold"), want: checks.Success,
			reason: "the pull request is held (do-not-merge/hold label or /hold)"},
		{name: "a hold lifted", author: "alice", head: bump, want: checks.Success,
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				comment("carol", "/hold")(s, r, pr)
				comment("carol", "/hold cancel")(s, r, pr)
			}},
		{name: "a bot's approval", author: "mallory", head: bump, want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				comment("renovate[bot]", "/approve")(s, r, pr)
				comment("ci-robot", "/approve")(s, r, pr)
			}},
		// Issue 13: PR A pushed X and closed; an owner approved the
		// benign B, held by its author; B was force-pushed to X and the
		// hold lifted. X's check suite predates the approval.
		{name: "approval moved by force-push to another PR's commit", author: "mallory", head: bump,
			want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				x := evil(s, r)
				comment("mallory", "/hold")(s, r, pr)
				comment("alice", "/approve")(s, r, pr)
				s.Advance(time.Minute)
				pr.ForcePush(x)
				comment("mallory", "/hold cancel")(s, r, pr)
			}},
		// The PR opened with a bad commit, was fixed and approved, and
		// was force-pushed back to the bad commit.
		{name: "approval moved by force-push to an old commit", author: "mallory",
			head: map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v6.6.6", 1)},
			want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				old := pr.HeadSHA()
				s.Advance(time.Minute)
				pr.Push(bump, "fix")
				comment("alice", "/approve")(s, r, pr)
				s.Advance(time.Minute)
				pr.ForcePush(old)
			}},
		// The same without a force-push: the approved head is the parent
		// of a commit pushed elsewhere before the approval, and the
		// branch fast-forwards to it.
		{name: "approval moved by a fast-forward to an existing commit", author: "mallory", head: bump,
			want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.Commit("change-next", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "foo-bundle:v1.0.0", "foo-bundle:v6.6.6", 1)}, "evil")
				x := r.Branch("change-next")
				s.Advance(time.Minute)
				comment("alice", "/approve")(s, r, pr)
				s.Advance(time.Minute)
				pr.ForcePush(x)
			}},
		// An ordinary push has no time in the timeline; the App dates it
		// by GitHub's synchronize delivery, the Action cannot.
		{name: "an owner's /approve after an ordinary push approves (App)", author: "mallory", head: bump,
			want: checks.Success, actionWant: checks.Failure,
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				s.Advance(time.Minute)
				pr.Push(bump2, "another bump")
				comment("alice", "/approve")(s, r, pr)
			}},
		{name: "a comment written before the synchronize push does not count for the new head", author: "mallory", head: bump,
			want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				comment("alice", "/approve")(s, r, pr)
				s.Advance(time.Minute)
				pr.Push(bump2, "another bump")
			}},
		// Another pull request pushed X before alice approved this one;
		// this one fast-forwarded to X after, and that delivery was
		// lost. The other's delivery names X, but not this pull request.
		{name: "a synchronize delivery for another PR's head does not bind", author: "mallory", head: bump,
			want: checks.Failure, reason: "the pull request is not approved", missed: 1,
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.SetBranch("next", pr.HeadSHA())
				s.Advance(time.Minute)
				x := r.Commit("next", bump2, "another bump")
				r.OpenPR("mallory", "next", "main")
				comment("alice", "/approve")(s, r, pr)
				s.Advance(time.Minute)
				pr.ForcePush(x)
			}},
		// A collaborator with write access turns alice's "do not merge
		// yet" into /approve; the comment still shows alice as its author.
		{name: "comment edited by another user", author: "mallory", head: bump,
			want: checks.Failure, reason: "the pull request is not approved",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.SetPermission("carol", "write")
				s.Advance(time.Minute)
				id := r.Comment(pr.Number, "alice", "do not merge yet")
				edit(s, r, id, "carol", "/approve")
			}},
		// The author's own edit, first by someone else then back: the
		// last edit is the author's, and the body is hers.
		{name: "an author's own edit still counts (App)", author: "mallory", head: bump,
			want: checks.Success, actionWant: checks.Failure,
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.SetPermission("carol", "write")
				s.Advance(time.Minute)
				id := r.Comment(pr.Number, "alice", "looks good")
				edit(s, r, id, "carol", "looks good, nit")
				edit(s, r, id, "alice", "/approve")
			}},
		// bob's own comment, edited by carol into /hold cancel, would
		// read as bob lifting his hold; the edit voids it.
		{name: "a hold lift edited in by another user", author: "alice", head: bump, want: checks.Success,
			reason: "the pull request is held (do-not-merge/hold label or /hold)",
			then: func(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR) {
				r.SetPermission("carol", "write")
				comment("bob", "/hold")(s, r, pr)
				s.Advance(time.Minute)
				id := r.Comment(pr.Number, "bob", "waiting for the release")
				edit(s, r, id, "carol", "/hold cancel")
			}},
		{name: "a rename across two packages", author: "alice", want: checks.Failure, reason: "the pull request is not approved",
			base: map[string]string{"catalog/bar/OWNERS": "approvers:\n  - bob\n", "catalog/bar/catalog.yaml": bar, "catalog/bar/notes.md": "notes\n"},
			head: map[string]string{"catalog/bar/notes.md": githubtest.Delete, "catalog/foo/notes.md": "notes\n"}},
		{name: "an invalid policy", author: "alice", head: bump, want: checks.Failure, finding: ".catalogbot.yaml:5 error P2",
			base: map[string]string{".catalogbot.yaml": agreePolicy + "surprise: true\n"}},
		{name: "an error already on the base", author: "alice", want: checks.Success, finding: "catalog/bar/catalog.yaml:4 warning M5",
			base: map[string]string{"catalog/bar/OWNERS": "approvers:\n  - alice\n",
				"catalog/bar/catalog.yaml": strings.Replace(bar, "defaultChannel: stable", "defaultChannel: beta", 1)},
			head: map[string]string{"catalog/bar/notes.md": "notes\n"}},
		// Check runs are told apart by the App that made them.
		{name: "another App's failing run named catalogbot", author: "alice", head: bump, want: checks.Success, merged: "yes",
			then: other([3]string{"mallory-app", "catalogbot", "failure"})},
		{name: "another App's successful run named catalogbot", author: "mallory", head: bump, want: checks.Failure, merged: "no",
			reason: "the pull request is not approved", then: other([3]string{"mallory-app", "catalogbot", "success"})},
		{name: "a required check of the named App", author: "alice", head: bump, want: checks.Success, merged: "yes",
			base: requireCI("{name: ci, app: github-actions}"), then: other([3]string{"github-actions", "ci", "success"})},
		{name: "a required check of the named App, reported by another", author: "alice", head: bump, want: checks.Success, merged: "no",
			base: requireCI("{name: ci, app: github-actions}"), then: other([3]string{"mallory-app", "ci", "success"})},
		{name: "a required check by name, reported by any App", author: "alice", head: bump, want: checks.Success, merged: "yes",
			base: requireCI("ci"), then: other([3]string{"mallory-app", "ci", "success"})},
		// Neither passes what it could not check: the App's run stays in
		// progress, the Action fails.
		{name: "an image on a registry that rate limits", author: "alice", want: checks.Pending, merged: "no", rateLimited: true,
			reason: "check images could not judge yet", finding: "catalog/foo/catalog.yaml:15 warning IM3",
			head: map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fbctest.Foo, "quay.io/example/foo-bundle:v1.0.0", rateLimitedHost+"/foo-bundle:v1.0.1", 1)}},
	}
}

// afterOwnRun makes each of runs ({App slug, name, conclusion}) a check
// run of that App at the pull request's head, as soon as the catalogbot
// App has created its own run there.
func afterOwnRun(s *githubtest.Server, r *githubtest.Repo, pr *githubtest.PR, runs [][3]string) {
	head := pr.HeadSHA()
	var done atomic.Bool
	s.HookResponses(func(req *http.Request, resp *githubtest.Response) {
		if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/check-runs") || resp.Status != http.StatusCreated || done.Swap(true) {
			return
		}
		for _, run := range runs {
			c := github.NewClient(nil).WithAuthToken(s.OtherAppToken(r, run[0]))
			c.BaseURL, _ = url.Parse(s.URL + "/")
			if _, _, err := c.Checks.CreateCheckRun(context.Background(), r.Owner, r.Name, github.CreateCheckRunOptions{
				Name: run[1], HeadSHA: head, Status: github.String("completed"), Conclusion: github.String(run[2]),
			}); err != nil {
				panic(fmt.Sprintf("%s's %s run: %v", run[0], run[1], err))
			}
		}
	})
}

// communityOperators is the trimmed snapshot of community-operators-prod
// in testdata, with a policy that reads its packages' ci.yaml reviewers.
func communityOperators() map[string]string {
	files, err := changetest.ReadFiles(filepath.Join(repoRoot, "testdata", "community-operators-prod"))
	if err != nil {
		panic(err)
	}
	files[".catalogbot.yaml"] = agreePolicy + "  sources: [ci.yaml]\ncatalogs:\n  - each: catalogs/v4.*\n"
	return files
}

// agreePolicy turns merging on and names a bot of the repository's own.
const agreePolicy = "merge:\n  enabled: true\nowners:\n  bots: [ci-robot]\n"

// verdict is what a front end said about a pull request.
type verdict struct {
	Conclusion checks.Conclusion
	Title      string
	Reasons    []string
	Findings   []string
	// Shows is the App's status comment or the Action's job summary.
	Shows string
}

func TestFrontEndsAgree(t *testing.T) {
	for _, sc := range agreeScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			gh := githubtest.New(t)
			files := map[string]string{
				".catalogbot.yaml":         agreePolicy,
				"OWNERS":                   "approvers:\n  - root-admin\n",
				"catalog/.indexignore":     "OWNERS\n*.md\n",
				"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
				"catalog/foo/catalog.yaml": fbctest.Foo,
			}
			for k, v := range sc.base {
				files[k] = v
			}
			repo := gh.AddRepo("acme", "catalog", files)
			head := sc.head
			if sc.rateLimited {
				reg := registrytest.New(t)
				// Retry-After: 0 spares the test the retries' waits.
				reg.Fail(registrytest.Fault{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"0"}}})
				head = map[string]string{}
				for k, v := range sc.head {
					head[k] = strings.ReplaceAll(v, rateLimitedHost, reg.Host)
				}
			}
			repo.Commit("change", head, "change by "+sc.author)
			pr := repo.OpenPR(sc.author, "change", "main")
			if sc.then != nil {
				sc.then(gh, repo, pr)
			}

			// The Action first: it only reads, and the App may merge.
			action := actionVerdict(t, gh, repo, pr, sc.shows != "", imageFlags(sc.rateLimited)...)
			app := appVerdict(t, gh, repo, pr, sc.missed, imageOptions(t, sc.rateLimited)...)
			if sc.actionWant != "" {
				if action.Conclusion != sc.actionWant {
					t.Errorf("the Action concluded %s (%s), want %s", action.Conclusion, action.Title, sc.actionWant)
				}
				if app.Conclusion != sc.want {
					t.Errorf("the App concluded %s (%s), want %s", app.Conclusion, app.Title, sc.want)
				}
				return
			}
			if action.Conclusion != sc.want {
				t.Errorf("the Action concluded %s (%s), want %s", action.Conclusion, action.Title, sc.want)
			}
			if tc := sc.reason; tc != "" && !slices.Contains(action.Reasons, tc) {
				t.Errorf("the Action's reasons %q lack %q", action.Reasons, tc)
			}
			if tc := sc.finding; tc != "" && !slices.ContainsFunc(action.Findings, func(f string) bool { return strings.HasPrefix(f, tc) }) {
				t.Errorf("the Action's findings %q lack %q", action.Findings, tc)
			}
			if app.Conclusion != action.Conclusion || app.Title != action.Title {
				t.Errorf("conclusions differ:\n  App:    %s %q\n  Action: %s %q", app.Conclusion, app.Title, action.Conclusion, action.Title)
			}
			if !slices.Equal(app.Reasons, action.Reasons) {
				t.Errorf("reasons differ:\n  App:    %q\n  Action: %q", app.Reasons, action.Reasons)
			}
			if !slices.Equal(app.Findings, action.Findings) {
				t.Errorf("findings differ:\n  App:    %q\n  Action: %q", app.Findings, action.Findings)
			}
			if sc.shows != "" {
				if !strings.Contains(action.Shows, sc.shows) {
					t.Errorf("the Action's job summary lacks %q:\n%s", sc.shows, action.Shows)
				}
				if !strings.Contains(app.Shows, sc.shows) {
					t.Errorf("the App's status comment lacks %q:\n%s", sc.shows, app.Shows)
				}
			}
			if sc.merged != "" {
				merged := "no"
				for _, m := range repo.Merges() {
					if m.HeadSHA == pr.HeadSHA() {
						merged = "yes"
					}
				}
				if merged != sc.merged {
					t.Errorf("the App merged: %s, want %s (merges %+v)", merged, sc.merged, repo.Merges())
				}
			}
		})
	}
}

// actionVerdict runs check -o json as the Action runs it: on a checkout of
// the repository, with the pull_request event, GITHUB_TOKEN and
// GITHUB_API_URL pointing at the fake. flags replace the default
// --images=false --render=false. With summary set it runs check -o github
// too, for the job summary.
func actionVerdict(t *testing.T, gh *githubtest.Server, repo *githubtest.Repo, pr *githubtest.PR, summary bool, flags ...string) verdict {
	t.Helper()
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
	if len(flags) == 0 {
		flags = []string{"--images=false", "--render=false"}
	}
	res := ownersCLI(t, ws, append([]string{"check", "-o", "json"}, flags...)...)
	if res.code == exitError {
		t.Fatalf("check: exit %d\n%s", res.code, res.stderr)
	}
	var doc review.Document
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("check -o json: %v\n%s", err, res.stdout)
	}
	v := verdict{Conclusion: doc.Conclusion, Title: doc.Title}
	if summary {
		if res := ownersCLI(t, ws, append([]string{"check", "-o", "github"}, flags...)...); res.code == exitError {
			t.Fatalf("check -o github: exit %d\n%s", res.code, res.stderr)
		}
		v.Shows = readStepFile(t, files.summary)
	}
	if doc.Decision != nil && !doc.Decision.Merge {
		v.Reasons = doc.Decision.Reasons()
	}
	findings := doc.Policy
	for _, r := range doc.Results {
		findings = append(findings, r.Findings...)
	}
	// The App can only annotate what has a file and a line; that is the
	// list both must agree on.
	for _, a := range checks.Annotations(findings) {
		if a.File != "" && a.Line > 0 {
			v.Findings = append(v.Findings, fmt.Sprintf("%s:%d %s %s: %s", a.File, a.Line, a.Level, a.Title, a.Message))
		}
	}
	return v
}

// imageFlags and imageOptions make a row's images checked by the Action and
// the App, as serve checks them (anonymously), against stand-in registries
// on loopback, which the operator allows as it would an internal mirror.
func imageFlags(on bool) []string {
	if !on {
		return nil
	}
	return []string{"--images=true", "--render=false", "--allow-private-registry", "127.0.0.1"}
}

func imageOptions(t *testing.T, on bool) []func(*reconcile.AppOptions) {
	if !on {
		return nil
	}
	rule, err := egress.New([]string{"127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return []func(*reconcile.AppOptions){func(o *reconcile.AppOptions) {
		o.Images = &imagespkg.Options{Keychain: authn.NewMultiKeychain(), Egress: rule}
	}}
}

// appVerdict runs the App on the pull request and reads what it wrote: the
// catalogbot check run and the status comment. opts adjust the App's
// options (newTestApp).
func appVerdict(t *testing.T, gh *githubtest.Server, repo *githubtest.Repo, pr *githubtest.PR, missed int, opts ...func(*reconcile.AppOptions)) verdict {
	t.Helper()
	app := newTestApp(t, gh, opts...)
	head := pr.HeadSHA()
	// The App is told of the head changes of every pull request of the
	// repository but the last missed of this one, as GitHub delivers
	// pull_request opened and synchronize to it; the server hands each
	// to Observe before it is queued.
	for _, p := range repo.PRs() {
		changes := p.HeadChanges()
		if p.Number == pr.Number {
			changes = changes[:max(len(changes)-missed, 0)]
		}
		for i, hc := range changes {
			app.Observe(webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: p.Number, Kind: webhook.KindPR},
				Event: "pull_request", Action: hc.Action, Delivery: fmt.Sprintf("head-%d-%d", p.Number, i), Installation: gh.InstallationID(repo),
				Payload: gh.Payload("pull_request", hc.Action, githubtest.PayloadArgs{Repo: repo, PR: p.Number, HeadChange: &hc})})
		}
	}
	// The App is told of every comment edit, as GitHub delivers
	// issue_comment edited to it; the editor is the delivery's sender.
	for _, c := range repo.IssueComments(pr.Number) {
		if !c.UpdatedAt.After(c.CreatedAt) || c.User == gh.AppSlug()+"[bot]" {
			continue
		}
		edited := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: pr.Number, Kind: webhook.KindPR},
			Event: "issue_comment", Action: "edited", Delivery: fmt.Sprintf("edit-%d", c.ID), Installation: gh.InstallationID(repo),
			Payload: gh.Payload("issue_comment", "edited", githubtest.PayloadArgs{Repo: repo, PR: pr.Number, CommentID: c.ID})}
		if _, err := app.Process(context.Background(), edited); err != nil {
			t.Fatalf("the App, on an edit: %v", err)
		}
	}
	job := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: pr.Number, Kind: webhook.KindPR},
		Event: "pull_request", Delivery: "agree-1", Installation: gh.InstallationID(repo)}
	if _, err := app.Process(context.Background(), job); err != nil {
		t.Fatalf("the App: %v", err)
	}
	var run *githubtest.CheckRun
	for _, r := range repo.CheckRuns(head) {
		if r.Name == reconcile.CheckRunName && r.AppID == gh.AppID() && (run == nil || r.ID > run.ID) {
			run = &r
		}
	}
	if run == nil {
		t.Fatalf("the App wrote no check run at %s", head)
	}
	v := verdict{Conclusion: checks.Conclusion(run.Conclusion), Title: run.Title}
	if run.Status == "in_progress" {
		// What a run in progress after the App's check says: it
		// could not judge yet.
		v.Conclusion = checks.Pending
	}
	for _, a := range run.Annotations {
		level := a.AnnotationLevel
		if level == "failure" {
			level = "error"
		}
		v.Findings = append(v.Findings, fmt.Sprintf("%s:%d %s %s: %s", a.Path, a.StartLine, level, a.Title, a.Message))
	}
	for _, c := range repo.IssueComments(pr.Number) {
		if !strings.Contains(c.Body, reconcile.StatusMarker) {
			continue
		}
		v.Shows = c.Body
		_, reasons, ok := strings.Cut(c.Body, "**Not merging yet:**\n")
		if !ok {
			break
		}
		for _, line := range strings.Split(reasons, "\n") {
			r, ok := strings.CutPrefix(line, "- ")
			if !ok {
				break
			}
			// Each reason follows its code: "- `code`: reason".
			if _, text, coded := strings.Cut(r, "`: "); coded && strings.HasPrefix(r, "`") {
				r = text
			}
			v.Reasons = append(v.Reasons, r)
		}
	}
	return v
}

// newTestApp is the App as serve builds it, talking to the fake GitHub gh,
// closed when the test ends; opts adjust its options.
func newTestApp(t *testing.T, gh *githubtest.Server, opts ...func(*reconcile.AppOptions)) *reconcile.App {
	t.Helper()
	o := reconcile.AppOptions{
		HTTPClient: &http.Client{},
		Config: &webhook.Config{
			AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir(),
		},
		Metrics: webhook.NewMetrics(prometheus.NewRegistry()),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, f := range opts {
		f(&o)
	}
	app, err := reconcile.NewApp(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return app
}
