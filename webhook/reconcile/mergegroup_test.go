package reconcile

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// queueEnv is a repository whose ruleset requires a merge queue and
// catalogbot's check, with the App served behind the real receiver and
// queue. The fake delivers the events it raises itself to the App when
// they are among events, as GitHub delivers those an App subscribed to.
func queueEnv(t *testing.T, events ...string) (*env, string, *tracker, *webhook.Queue) {
	t.Helper()
	e := newEnv(t, catalogRepo(mergePolicy))
	url, d, q := e.serve(t)
	e.gh.SendWebhooks(t, url, serveSecret, events...)
	e.repo.RequireMergeQueue("main")
	e.repo.RequireChecks("main", CheckRunName)
	return e, url, d, q
}

// queued opens a pull request by alice, the owner of foo, and reconciles
// it: checked, approved by its author, and queued.
func (e *env) queued(branch string, files map[string]string) *githubtest.PR {
	e.t.Helper()
	pr := e.openPR("alice", branch, files)
	e.process(pr, "pull_request")
	for _, q := range e.repo.MergeQueue("main") {
		if q.Number == pr.Number {
			return pr
		}
	}
	e.t.Fatalf("#%d was not queued: %+v", pr.Number, e.repo.MergeQueue("main"))
	return nil
}

// TestMergeGroupMerges: the queue's commit of a pull request is judged
// on merge_group, and the queue, which requires catalogbot's check on it,
// merges it: main becomes the group's commit.
func TestMergeGroupMerges(t *testing.T) {
	e, _, d, q := queueEnv(t, "merge_group")
	pr := e.queued("bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})

	g, err := e.repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	if job := d.wait(t); job.Key != (webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindMergeGroup}) || job.Action != "checks_requested" {
		t.Fatalf("job %v %s, want the merge group's", job.Key, job.Action)
	}
	run := e.run(g.HeadSHA, CheckRunName)
	if run.Conclusion != "success" || !strings.Contains(run.Summary, review.GroupNote) {
		t.Fatalf("the group's run: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
	if !pr.Merged() || e.repo.Branch("main") != g.HeadSHA {
		t.Fatalf("not merged through the queue: merged %v, main %s, group %s", pr.Merged(), e.repo.Branch("main"), g.HeadSHA)
	}
	d.wait(t) // merge_group destroyed (merged)
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, ok := e.app.groups.get(prKey{"acme/catalog", pr.Number}); !ok || got.HeadSHA != "" {
		t.Errorf("the merged group is still remembered: %+v", got)
	}
}

// TestMergeGroupStallsUnheard: an App that is not told of merge groups
// never reports on the queue's commit, and the queue, which requires the
// check there, never merges, however green the pull request is. The same
// group merges as soon as its merge_group delivery reaches the App.
func TestMergeGroupStallsUnheard(t *testing.T) {
	e, url, d, _ := queueEnv(t) // subscribed to nothing the queue raises
	pr := e.queued("bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	if run := e.run(pr.HeadSHA(), CheckRunName); run.Conclusion != "success" {
		t.Fatalf("the pull request's own run: %s", run.Conclusion)
	}
	base := e.repo.Branch("main")
	g, err := e.repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pr.Merged() || e.repo.Branch("main") != base {
			t.Fatal("the queue merged a group whose required check never reported")
		}
	}
	if _, ok := e.repo.MergeGroupOf("main"); !ok {
		t.Fatal("the queue let go of the group")
	}
	for _, r := range e.repo.CheckRuns(g.HeadSHA) {
		if r.Name == CheckRunName {
			t.Fatalf("a %s run on the group's commit: %+v", CheckRunName, r)
		}
	}
	if d := e.gh.Delivered(); len(d) != 0 {
		t.Fatalf("delivered %+v to an App not subscribed to it", d)
	}

	e.gh.Deliver(t, url, serveSecret, "merge_group", e.gh.Payload("merge_group", "checks_requested", githubtest.PayloadArgs{Repo: e.repo, Group: &g}))
	d.wait(t)
	if !pr.Merged() || e.repo.Branch("main") != g.HeadSHA {
		t.Fatalf("the delivered group did not merge: merged %v", pr.Merged())
	}
}

// TestMergeGroupInvalidTogether: two pull requests that each add channel
// fast to foo, in files of their own, are each valid and queued; batched in
// one group they make main hold a duplicate channel. The group's check
// fails naming it, and main stays where it was.
func TestMergeGroupInvalidTogether(t *testing.T) {
	e, _, d, _ := queueEnv(t, "merge_group")
	one := e.queued("fast-a", map[string]string{"catalog/foo/fast-a.yaml": fastChannel})
	two := e.queued("fast-b", map[string]string{"catalog/foo/fast-b.yaml": fastChannel})
	base := e.repo.Branch("main")

	g, err := e.repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.PRs) != 2 {
		t.Fatalf("group = %+v, want both pull requests", g)
	}
	d.wait(t)
	run := e.run(g.HeadSHA, CheckRunName)
	var said strings.Builder
	said.WriteString(run.Summary)
	for _, a := range run.Annotations {
		said.WriteString("\n" + a.Path + ": " + a.Message)
	}
	if run.Conclusion != "failure" || !strings.Contains(said.String(), `duplicate channel "fast"`) {
		t.Fatalf("the group's run: %s %s, want a failure naming the duplicate channel\n%s", run.Conclusion, run.Title, said.String())
	}
	if one.Merged() || two.Merged() || e.repo.Branch("main") != base {
		t.Fatalf("main moved to an invalid catalog: merged %v %v, main %s (was %s)", one.Merged(), two.Merged(), e.repo.Branch("main"), base)
	}
	if _, ok := e.repo.MergeGroupOf("main"); ok || len(e.repo.MergeQueue("main")) != 0 {
		t.Errorf("the failed group is still queued: %+v", e.repo.MergeQueue("main"))
	}
}

// TestMergeGroupDestroyedForgets: a destroyed group is forgotten, and a
// retry of its check that comes after (which carries no payload) judges
// nothing; a group whose ref moved on is not judged at its old commit.
func TestMergeGroupDestroyedForgets(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	pr := e.queued("bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	g, err := e.repo.StartMergeGroup("main") // nothing required: it merges at once
	if err != nil {
		t.Fatal(err)
	}
	job := func(action string, payload bool) webhook.Job {
		j := webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindMergeGroup},
			Event: "retry", Installation: e.gh.InstallationID(e.repo)}
		if payload {
			j.Event, j.Action = "merge_group", action
			j.Payload = e.gh.Payload("merge_group", action, githubtest.PayloadArgs{Repo: e.repo, Group: &g, Reason: "merged"})
		}
		return j
	}
	// Its ref is gone with the merge: the delivery is noted, and nothing
	// is judged at a commit the ref no longer names.
	if err := processAll(context.Background(), e.app, job("checks_requested", true)); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.repo.CheckRuns(g.HeadSHA) {
		if r.Name == CheckRunName {
			t.Errorf("a run on a group whose ref is gone: %+v", r)
		}
	}
	if got, ok := e.app.groups.get(prKey{"acme/catalog", pr.Number}); !ok || got.HeadSHA != g.HeadSHA {
		t.Fatalf("the group was not noted: %+v", got)
	}
	if err := processAll(context.Background(), e.app, job("destroyed", true)); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.app.groups.get(prKey{"acme/catalog", pr.Number}); got.HeadSHA != "" {
		t.Fatalf("the destroyed group is remembered: %+v", got)
	}
	before := len(e.requests())
	if err := processAll(context.Background(), e.app, job("", false)); err != nil {
		t.Fatal(err)
	}
	for _, r := range e.requests()[before:] {
		t.Errorf("a retry of a destroyed group asked GitHub: %s %s", r.Method, r.Path)
	}
	if v := e.gh.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

// TestMergeGroupCouldNotJudge: a group whose image's registry rate limits
// is never passed. Its run stays in progress and is retried with the
// pull requests' backoff, from what the delivery said (the retry carries
// no payload), and fails after the last try: the queue then lets go of
// the group, and main never holds what could not be checked.
func TestMergeGroupCouldNotJudge(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	e := pendingEnv(t, &now)
	e.repo.RequireMergeQueue("main")
	e.repo.RequireChecks("main", CheckRunName)
	reg := registrytest.New(t)
	reg.PushRandom(t, reg.Ref("foo-bundle:v1.0.1"))
	pr := e.queued("bump", map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "quay.io/example/foo-bundle:v1.0.0", reg.Ref("foo-bundle:v1.0.1"), 1)})
	reg.Fail(registrytest.Fault{Status: 429})
	base := e.repo.Branch("main")
	g, err := e.repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	job := webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindMergeGroup},
		Event: "merge_group", Action: "checks_requested", Installation: e.gh.InstallationID(e.repo),
		Payload: e.gh.Payload("merge_group", "checks_requested", githubtest.PayloadArgs{Repo: e.repo, Group: &g})}
	for try, wait := range []time.Duration{time.Minute, 2 * time.Minute} {
		queued := e.processCollect(job)
		run := e.run(g.HeadSHA, CheckRunName)
		if run.Status != "in_progress" || !strings.Contains(run.Summary, "rate limited the requests") {
			t.Fatalf("try %d: run %s/%q, want in progress, waiting for the registry:\n%s", try+1, run.Status, run.Conclusion, run.Summary)
		}
		if len(queued) != 1 || queued[0].Key != job.Key || !queued[0].NotBefore.Equal(now.Add(wait)) || len(queued[0].Payload) != 0 {
			t.Fatalf("try %d: queued %+v, want one retry of %s at %s", try+1, queued, job.Key, now.Add(wait))
		}
		if _, ok := e.repo.MergeGroupOf("main"); !ok || pr.Merged() {
			t.Fatalf("try %d: the queue did not wait for the check", try+1)
		}
		now = now.Add(wait)
		job = queued[0]
	}
	if queued := e.processCollect(job); len(queued) != 0 {
		t.Errorf("the last try queued %+v, want nothing", queued)
	}
	if run := e.run(g.HeadSHA, CheckRunName); run.Conclusion != "failure" || run.Title != "Could not judge: images after 3 tries" {
		t.Errorf("after the last try: run %s %q, want a failure", run.Conclusion, run.Title)
	}
	if _, ok := e.repo.MergeGroupOf("main"); ok || pr.Merged() || e.repo.Branch("main") != base {
		t.Errorf("the queue kept or merged a group that could not be checked: merged %v", pr.Merged())
	}
}

// TestMergeGroupRetriedAfterAnError: a job on a group that fails (GitHub
// answered with an error) is tried again by itself, since no resync comes
// back to a merge group and the queue would wait for its check until it
// gave up; the retry judges the group from what the delivery said.
func TestMergeGroupRetriedAfterAnError(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	e.repo.RequireMergeQueue("main")
	e.repo.RequireChecks("main", CheckRunName)
	pr := e.queued("bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	var failed atomic.Bool
	e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if r.Method == http.MethodGet && r.URL.Path == "/repos/acme/catalog" && failed.CompareAndSwap(false, true) {
			resp.Status, resp.Body = http.StatusNotFound, []byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
		}
	})
	g, err := e.repo.StartMergeGroup("main")
	if err != nil {
		t.Fatal(err)
	}
	job := webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: pr.Number, Kind: webhook.KindMergeGroup},
		Event: "merge_group", Action: "checks_requested", Installation: e.gh.InstallationID(e.repo),
		Payload: e.gh.Payload("merge_group", "checks_requested", githubtest.PayloadArgs{Repo: e.repo, Group: &g})}
	res, err := e.app.Process(context.Background(), job)
	if err == nil || !failed.Load() {
		t.Fatalf("the job did not fail: %v", err)
	}
	next := res.Next(job, e.app.now())
	if len(next) != 1 || next[0].NotBefore.IsZero() || next[0].Key != job.Key {
		t.Fatalf("after the failure: queued %+v, want one retry of %s", next, job.Key)
	}
	if _, err := e.app.Process(context.Background(), next[0]); err != nil {
		t.Fatal(err)
	}
	if run := e.run(g.HeadSHA, CheckRunName); run.Conclusion != "success" || !pr.Merged() {
		t.Errorf("after the retry: run %s, merged %v", run.Conclusion, pr.Merged())
	}
}
