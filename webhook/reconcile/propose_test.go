package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	dto "github.com/prometheus/client_model/go"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// proposeRepo is a catalog repository whose policy watches the bundle
// repository acme/foo-bundle of reg for package foo, at 1.0.0.
func proposeRepo(reg *registrytest.Registry) map[string]string {
	return map[string]string{
		".catalogbot.yaml": fmt.Sprintf(`propose:
  - package: foo
    repository: %s/acme/foo-bundle
    channels: [stable]
    graph: replaces
    soak: 0s
`, reg.Host),
		"OWNERS":                   "approvers: [maintainer]\n",
		"catalog/foo/catalog.yaml": proposetest.Package("foo", "stable", "foo.v1.0.0", "1.0.0"),
	}
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// proposeOptions turns proposing on, reaching reg.
func proposeOptions(t testing.TB, reg *registrytest.Registry, clk *clock, facts webhook.Facts) func(*AppOptions) {
	return func(o *AppOptions) {
		rule, err := egress.New([]string{reg.Host}, nil)
		if err != nil {
			t.Fatal(err)
		}
		anonymous := authn.NewMultiKeychain()
		r, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
		if err != nil {
			t.Fatal(err)
		}
		o.Renderer = r
		o.Propose = &ProposeOptions{Registry: propose.Registry{Keychain: anonymous, Egress: rule}, Interval: time.Minute, UnplacedAfter: time.Hour}
		o.Now = clk.Now
		o.Facts = facts
	}
}

// proposals are the open pull requests labelled as proposals.
func (e *env) proposals() []*githubtest.PR {
	var out []*githubtest.PR
	for _, pr := range e.repo.PRs() {
		if pr.State() == "open" && strings.Contains(strings.Join(pr.Labels(), ","), ProposalLabel) {
			out = append(out, pr)
		}
	}
	return out
}

// round makes a round and runs the checks it asks for.
func (e *env) round(only map[string]bool) []webhook.Job {
	e.t.Helper()
	ctx := context.Background()
	jobs, err := e.app.ProposeRound(ctx, only)
	if err != nil {
		e.t.Fatalf("propose round: %v", err)
	}
	for _, j := range jobs {
		if err := processAll(ctx, e.app, j); err != nil {
			e.t.Fatalf("check of proposal #%d: %v", j.Key.PR, err)
		}
	}
	return jobs
}

// TestAppProposes follows one package through the App's proposals: a new
// tag becomes an open, labelled pull request from catalogbot/propose/foo
// whose check passes; a round within the interval does nothing; a newer
// tag before the merge moves the same pull request; the releases landing
// on main by other means close it.
func TestAppProposes(t *testing.T) {
	reg := registrytest.New(t)
	clk := &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnvWith(t, proposeRepo(reg), proposeOptions(t, reg, clk, nil))
	e.gh.SetClock(clk.Now)
	// approved has the package's owner approve the proposal and checks
	// it again: the check is green.
	approved := func(pr *githubtest.PR) {
		t.Helper()
		run := e.run(pr.HeadSHA(), CheckRunName)
		if run.Status != "completed" || run.Title != "Failed: owners" {
			t.Errorf("check run at the proposal's head before approval: %s %q; want only the owners' approval missing", run.Status, run.Title)
		}
		clk.Advance(2 * time.Second)
		e.repo.Comment(pr.Number, "maintainer", "/approve")
		e.process(pr, "issue_comment")
		if run := e.run(pr.HeadSHA(), CheckRunName); run.Status != "completed" || run.Conclusion != "success" {
			t.Errorf("check run at the proposal's head: %s/%s %q, want completed/success", run.Status, run.Conclusion, run.Title)
		}
	}

	// Nothing new: no pull request.
	if jobs := e.round(nil); len(jobs) != 0 || len(e.repo.PRs()) != 0 {
		t.Fatalf("a round with no new tag made %d jobs, %d pull requests", len(jobs), len(e.repo.PRs()))
	}

	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	if jobs := e.round(nil); len(jobs) != 0 {
		t.Fatalf("a round within the interval of the last made %d jobs", len(jobs))
	}
	clk.Advance(time.Minute)
	e.round(nil)
	open := e.proposals()
	if len(open) != 1 {
		t.Fatalf("%d open proposals, want 1", len(open))
	}
	pr := open[0]
	if pr.HeadRef() != "catalogbot/propose/foo" || pr.BaseRef() != "main" || pr.Author() != e.gh.AppSlug()+"[bot]" {
		t.Errorf("proposal #%d: %s → %s by %s", pr.Number, pr.HeadRef(), pr.BaseRef(), pr.Author())
	}
	if !strings.Contains(pr.Title(), "foo: propose 1.1.0") || !strings.Contains(pr.Body(), "stable: foo.v1.0.0 → foo.v1.1.0") {
		t.Errorf("proposal title %q body %q", pr.Title(), pr.Body())
	}
	blob, err := e.repo.ReadFile(pr.HeadSHA(), "catalog/foo/foo.v1.1.0.yaml")
	if err != nil || !strings.Contains(blob, reg.Host+"/acme/foo-bundle@sha256:") {
		t.Errorf("the proposal's bundle: %q, %v", blob, err)
	}
	approved(pr)
	first := pr.HeadSHA()

	// A newer release before the merge: the same pull request, moved.
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.2.0", "foo", "foo.v1.2.0", "1.2.0")
	clk.Advance(time.Minute)
	e.round(nil)
	if open := e.proposals(); len(open) != 1 || open[0].Number != pr.Number {
		t.Fatalf("after a newer release: %d open proposals, want #%d alone", len(open), pr.Number)
	}
	if pr.HeadSHA() == first || !strings.Contains(pr.Title(), "1.1.0, 1.2.0") {
		t.Errorf("the proposal was not moved: head %s title %q", pr.HeadSHA(), pr.Title())
	}
	if _, err := e.repo.ReadFile(pr.HeadSHA(), "catalog/foo/foo.v1.2.0.yaml"); err != nil {
		t.Errorf("the moved proposal lacks 1.2.0: %v", err)
	}
	approved(pr)

	// The releases land on main without the pull request.
	e.repo.SetBranch("main", pr.HeadSHA())
	clk.Advance(time.Minute)
	e.round(nil)
	if pr.State() != "closed" {
		t.Fatalf("the proposal whose releases landed is %s, want closed", pr.State())
	}
	if cs := e.repo.IssueComments(pr.Number); len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "is in the catalog") {
		t.Errorf("no comment says why the proposal closed: %v", cs)
	}
	if v := e.gh.Violations(); len(v) > 0 {
		t.Errorf("violations of GitHub's description: %v", v)
	}
}

// TestRegistryNotificationPollsAtOnce: with an interval of an hour, a
// Distribution push notification on /hooks/registry makes the App poll
// the repository watching the pushed repository at once.
func TestRegistryNotificationPollsAtOnce(t *testing.T) {
	reg := registrytest.New(t)
	clk := &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnvWith(t, proposeRepo(reg), func(o *AppOptions) {
		proposeOptions(t, reg, clk, nil)(o)
		o.Propose.Interval = time.Hour
	})
	const secret = "a-registry-secret-of-some-length"
	srv, err := webhook.NewServer(webhook.ServerOptions{
		Secrets: [][]byte{[]byte(serveSecret)}, Queue: webhook.NewQueue(e.app, webhook.QueueOptions{}),
		RegistryHook: webhook.RegistryHookOptions{Secret: secret, Notify: e.app.NotifyRegistry},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan webhook.Job, 4)
	rounds := func() float64 { return e.counter(e.metrics.ProposeRounds, "unchanged") }
	go e.app.RunProposer(ctx, func(j webhook.Job) { jobs <- j })
	// The first round (nothing new) tells the App what is watched.
	for deadline := time.Now().Add(30 * time.Second); rounds() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first round within 30s")
		}
	}

	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	// Distribution names its registry as the pusher reached it.
	body := `{"events":[{"id":"e1","timestamp":"2026-03-01T10:00:00Z","action":"push",
	  "target":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:00","repository":"acme/foo-bundle","tag":"1.1.0"},
	  "request":{"host":"registry.internal:5000","method":"PUT"}}]}`
	post := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/hooks/registry", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/vnd.docker.distribution.events.v1+json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("Bearer not-the-secret"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong secret: %d, want 401", code)
	}
	if code := post("Bearer " + secret); code != http.StatusAccepted {
		t.Fatalf("the notification: %d, want 202", code)
	}
	select {
	case j := <-jobs:
		if j.Key.Kind != webhook.KindPR || len(e.proposals()) != 1 {
			t.Fatalf("the notification's round gave %v and %d proposals", j, len(e.proposals()))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the notification made no proposal (the interval is an hour)")
	}
}

// TestProposeOneLeaderOnSharedState: two App instances on one state make
// their rounds at once; one pull request is opened.
func TestProposeOneLeaderOnSharedState(t *testing.T) {
	reg := registrytest.New(t)
	clk := &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	state, err := durable.Open(context.Background(), durable.Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer state.Close()
	e := newEnvWith(t, proposeRepo(reg), proposeOptions(t, reg, clk, state.Facts()))
	o := AppOptions{
		Config:  &webhook.Config{AppID: e.gh.AppID(), PrivateKey: e.gh.PrivateKeyPEM(), GitHubURL: e.gh.URL + "/", CacheDir: t.TempDir()},
		Metrics: webhook.NewMetrics(nil),
	}
	proposeOptions(t, reg, clk, state.Facts())(&o)
	other, err := NewApp(o)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, app := range []*App{e.app, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = app.ProposeRound(context.Background(), nil)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// And again, each, now that one has polled.
	for _, app := range []*App{other, e.app} {
		if _, err := app.ProposeRound(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.repo.PRs()); n != 1 {
		t.Fatalf("two instances on one state opened %d pull requests, want 1", n)
	}
}

// TestUnplacedAlarm: a release the check refuses (its image is a bundle
// of another package) has no proposal; once seen longer than
// UnplacedAfter it shows in catalogbot_bundle_unplaced_seconds, and not
// before.
func TestUnplacedAlarm(t *testing.T) {
	reg := registrytest.New(t)
	clk := &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnvWith(t, proposeRepo(reg), proposeOptions(t, reg, clk, nil))
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "qux", "qux.v1.1.0", "1.1.0")

	gauge := func() (float64, bool) {
		var m dto.Metric
		g, err := e.metrics.BundleUnplaced.GetMetricWithLabelValues("acme/catalog", "foo")
		if err != nil {
			t.Fatal(err)
		}
		// GetMetricWith creates the series; it was there when its
		// value is not zero.
		if err := g.Write(&m); err != nil {
			t.Fatal(err)
		}
		v := m.GetGauge().GetValue()
		e.metrics.BundleUnplaced.DeleteLabelValues("acme/catalog", "foo")
		return v, v != 0
	}
	e.round(nil)
	if len(e.proposals()) != 0 {
		t.Fatal("a refused release was proposed")
	}
	if v, ok := gauge(); ok {
		t.Fatalf("the alarm shows %v s at once; want nothing before an hour", v)
	}
	clk.Advance(61 * time.Minute)
	e.round(nil)
	if v, ok := gauge(); !ok || v != (61*time.Minute).Seconds() {
		t.Fatalf("after 61 minutes the alarm shows %v (%v); want %v", v, ok, (61 * time.Minute).Seconds())
	}
}

// TestDeclinedProposalStaysClosed: a proposal people close without
// merging is not opened again for the same releases; a newer release is
// proposed afresh.
func TestDeclinedProposalStaysClosed(t *testing.T) {
	reg := registrytest.New(t)
	clk := &clock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnvWith(t, proposeRepo(reg), proposeOptions(t, reg, clk, nil))
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	e.round(nil)
	open := e.proposals()
	if len(open) != 1 {
		t.Fatalf("%d proposals, want 1", len(open))
	}
	open[0].Close()
	clk.Advance(time.Minute)
	e.round(nil)
	if n := len(e.proposals()); n != 0 {
		t.Fatalf("the declined releases were proposed again: %d open proposals", n)
	}
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "1.2.0", "foo", "foo.v1.2.0", "1.2.0")
	clk.Advance(time.Minute)
	e.round(nil)
	if open := e.proposals(); len(open) != 1 || !strings.Contains(open[0].Title(), "1.2.0") {
		t.Fatalf("a newer release after a declined proposal: %d open proposals", len(open))
	}
}
