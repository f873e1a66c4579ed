package reconcile

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// clashBase is package foo with two bundles in channel stable, the second
// replacing the first.
const clashBase = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
  - name: foo.v1.1.0
    replaces: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/example/foo-bundle:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.1.0
image: quay.io/example/foo-bundle:v1.1.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.1.0
`

// bundleDoc is a bundle of package pkg at version v.
func bundleDoc(pkg, v string) string {
	return fmt.Sprintf("---\nschema: olm.bundle\npackage: %s\nname: %s.v%s\nimage: quay.io/example/%s-bundle:v%s\nproperties:\n  - type: olm.package\n    value:\n      packageName: %s\n      version: %s\n", pkg, pkg, v, pkg, v, pkg, v)
}

// clash is a change that is valid alone on clashBase; some pairs of them
// are invalid together.
type clash struct {
	name  string
	files func(id int) map[string]string
}

// clashes are the kinds of changes the property test draws from. Pairs
// that make main invalid: two "fast" (a duplicate channel), two "v2" (a
// duplicate bundle and channel), "bar" with "bar-in-foo" (two packages
// claiming one name), "candidate" with "drop-v1.0.0" (an entry naming a
// bundle the other removes), "default-beta" with "drop-beta"... and
// "default-fast" with "fast". "channel" and "retag" combine with anything.
var clashes = []clash{
	{"fast", func(id int) map[string]string {
		return map[string]string{fmt.Sprintf("catalog/foo/fast-%d.yaml", id): "schema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.1.0\n"}
	}},
	{"v2", func(id int) map[string]string {
		return map[string]string{fmt.Sprintf("catalog/foo/v2-%d.yaml", id): bundleDoc("foo", "2.0.0") + "---\nschema: olm.channel\npackage: foo\nname: v2\nentries:\n  - name: foo.v2.0.0\n"}
	}},
	{"bar", func(int) map[string]string {
		return map[string]string{"catalog/bar/catalog.yaml": "---\nschema: olm.package\nname: bar\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: bar\nname: stable\nentries:\n  - name: bar.v1.0.0\n" + bundleDoc("bar", "1.0.0")}
	}},
	{"bar-in-foo", func(int) map[string]string {
		return map[string]string{"catalog/foo/bar.yaml": "---\nschema: olm.package\nname: bar\ndefaultChannel: alpha\n---\nschema: olm.channel\npackage: bar\nname: alpha\nentries:\n  - name: bar.v0.1.0\n" + bundleDoc("bar", "0.1.0")}
	}},
	{"candidate", func(id int) map[string]string {
		return map[string]string{fmt.Sprintf("catalog/foo/candidate-%d.yaml", id): fmt.Sprintf("schema: olm.channel\npackage: foo\nname: candidate-%d\nentries:\n  - name: foo.v1.0.0\n", id)}
	}},
	{"drop-v1.0.0", func(int) map[string]string {
		s := strings.Replace(clashBase, "  - name: foo.v1.0.0\n  - name: foo.v1.1.0\n    replaces: foo.v1.0.0\n", "  - name: foo.v1.1.0\n", 1)
		i := strings.Index(s, "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.0.0\n")
		j := strings.Index(s, "---\nschema: olm.bundle\npackage: foo\nname: foo.v1.1.0\n")
		return map[string]string{"catalog/foo/catalog.yaml": s[:i] + s[j:]}
	}},
	{"default-fast", func(int) map[string]string {
		return map[string]string{"catalog/foo/catalog.yaml": strings.Replace(clashBase, "defaultChannel: stable", "defaultChannel: fast", 1) +
			"---\nschema: olm.channel\npackage: foo\nname: fast\nentries:\n  - name: foo.v1.1.0\n"}
	}},
	{"channel", func(id int) map[string]string {
		return map[string]string{fmt.Sprintf("catalog/foo/ch-%d.yaml", id): fmt.Sprintf("schema: olm.channel\npackage: foo\nname: ch-%d\nentries:\n  - name: foo.v1.1.0\n", id)}
	}},
	{"retag", func(id int) map[string]string {
		return map[string]string{"catalog/foo/catalog.yaml": strings.Replace(clashBase, "foo-bundle:v1.1.0", fmt.Sprintf("foo-bundle:v1.1.0-r%d", id), 1)}
	}},
}

// mainWorld is a fake GitHub, a catalog repository, and replicas of the App
// that share one state, fed pull request jobs by a scheduler that plays the
// queue: jobs run concurrently on random replicas, retries come back when
// asked, and some jobs are killed part way.
type mainWorld struct {
	t        testing.TB
	rng      *rand.Rand
	rngMu    sync.Mutex
	gh       *githubtest.Server
	repo     *githubtest.Repo
	apps     []*App
	logs     lockedBuffer
	mu       sync.Mutex
	due      map[int]time.Time // pull request -> when its job is due
	running  map[int]bool
	opened   map[int]time.Time
	mergedAt map[int]time.Time
	events   map[int]string // the event of each pull request's due job
	killRate float64
}

func (w *mainWorld) intn(n int) int {
	w.rngMu.Lock()
	defer w.rngMu.Unlock()
	return w.rng.IntN(n)
}

func (w *mainWorld) float() float64 {
	w.rngMu.Lock()
	defer w.rngMu.Unlock()
	return w.rng.Float64()
}

func newMainWorld(t testing.TB, seed uint64, replicas int, o mainOptions) *mainWorld {
	gh := githubtest.New(t)
	files := catalogRepo(mergePolicy)
	files["catalog/foo/catalog.yaml"] = clashBase
	w := &mainWorld{t: t, rng: rand.New(rand.NewPCG(seed, 0x6d61696e)), gh: gh, due: map[int]time.Time{}, running: map[int]bool{}, opened: map[int]time.Time{}, mergedAt: map[int]time.Time{}}
	w.repo = gh.AddRepo("acme", "catalog", files)
	logger := slog.New(slog.NewTextHandler(&w.logs, nil))
	metrics := webhook.NewMetrics(prometheus.NewRegistry())
	state, err := durable.Open(context.Background(), durable.Options{StateDir: t.TempDir(), DatabaseURL: o.databaseURL, Logger: logger, Metrics: metrics, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(state.Close)
	for range replicas {
		app, err := NewApp(AppOptions{
			Config:         &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir()},
			Metrics:        metrics,
			Logger:         logger,
			HTTPClient:     &http.Client{Transport: http.DefaultTransport},
			GitHubBackoff:  time.Millisecond,
			Facts:          state.Facts(),
			MergeTurnTTL:   o.turnTTL,
			MergeTurnRetry: o.turnRetry,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { app.Close() })
		w.apps = append(w.apps, app)
	}
	return w
}

// mainOptions are how a mainWorld's replicas are set up; zero values are
// the service's defaults.
type mainOptions struct {
	databaseURL string // "": one SQLite file shared by the replicas
	turnTTL     time.Duration
	turnRetry   time.Duration
}

// schedule makes pull request n's job due at when, unless it is due sooner;
// a job the App asked for is a retry, as the queue makes it.
func (w *mainWorld) schedule(n int, when time.Time) { w.scheduleAs(n, when, "retry") }

func (w *mainWorld) scheduleAs(n int, when time.Time, event string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.events == nil {
		w.events = map[int]string{}
	}
	if _, ok := w.due[n]; !ok || event != "retry" {
		w.events[n] = event
	}
	if d, ok := w.due[n]; !ok || when.Before(d) {
		w.due[n] = when
	}
}

// next takes a due job that is not running, or says how many are pending.
func (w *mainWorld) next() (n int, ok bool, pending int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for pr, d := range w.due {
		if !w.running[pr] && !d.After(now) {
			delete(w.due, pr)
			w.running[pr] = true
			return pr, true, len(w.due) + len(w.running)
		}
	}
	return 0, false, len(w.due) + len(w.running)
}

func (w *mainWorld) finish(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, n)
}

// work runs jobs until none is pending for a while.
func (w *mainWorld) work(workers int, deadline time.Duration) {
	var wg sync.WaitGroup
	end := time.Now().Add(deadline)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idle := 0
			for time.Now().Before(end) {
				n, ok, pending := w.next()
				if !ok {
					if pending == 0 {
						if idle++; idle > 20 {
							return
						}
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				idle = 0
				w.runJob(n)
				w.finish(n)
			}
		}()
	}
	wg.Wait()
}

var jobN struct {
	sync.Mutex
	n int
}

// runJob runs pull request n's job on a random replica, killing it part way
// at killRate, and schedules what comes next: the retry it asks for, or,
// for a killed or failed job, its takeover a moment later.
func (w *mainWorld) runJob(n int) {
	app := w.apps[w.intn(len(w.apps))]
	jobN.Lock()
	jobN.n++
	id := jobN.n
	jobN.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := false
	if w.float() < w.killRate {
		killed = true
		time.AfterFunc(time.Duration(w.intn(400))*time.Millisecond, cancel)
	}
	w.mu.Lock()
	event := w.events[n]
	w.mu.Unlock()
	job := webhook.Job{Key: webhook.Key{Repo: "acme/catalog", PR: n, Kind: webhook.KindPR}, Event: event,
		Delivery: "d-" + strconv.Itoa(id), Installation: w.gh.InstallationID(w.repo)}
	res, err := app.Process(ctx, job)
	if w.repo.PR(n).Merged() {
		w.mu.Lock()
		if _, ok := w.mergedAt[n]; !ok {
			w.mergedAt[n] = time.Now()
		}
		w.mu.Unlock()
	}
	for _, j := range res.Jobs {
		if j.Key.Kind == webhook.KindPR {
			w.schedule(j.Key.PR, time.Now())
		}
	}
	switch {
	case killed && ctx.Err() != nil, err != nil:
		w.schedule(n, time.Now().Add(200*time.Millisecond))
	case !res.RetryAt.IsZero():
		w.schedule(n, res.RetryAt)
	}
}

// TestMainStaysValid is the rule every merge bot keeps: main only ever holds
// a tree that was judged as it is. Random sets of pull requests, each valid
// alone and some pairs invalid together, are checked and merged
// concurrently by one to three replicas on one state, with jobs killed part
// way; some are opened from an old base after others merged. After every
// merge (each commit of main), the catalog validates; no pull request is
// merged twice; and when the work settles, every open pull request's run
// says why it waits, with no state the App only passes through.
func TestMainStaysValid(t *testing.T) {
	seeds := []uint64{
		// Schedules that made main invalid when the head alone was
		// judged: two "fast" channels merged one after the other.
		2, 8,
	}
	n := uint64(50)
	if testing.Short() {
		n = 10
	}
	for s := range n {
		if !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
	}
	var longest time.Duration
	var merged, total int
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			replicas := 1 + int(seed%3)
			// A killed holder's turn lapses soon; a loaded machine
			// still renews it in time.
			w := newMainWorld(t, seed, replicas, mainOptions{turnTTL: 5 * time.Second, turnRetry: 100 * time.Millisecond})
			w.killRate = 0.15
			start := w.repo.Branch("main")
			var prs []*githubtest.PR
			count := 3 + w.intn(4)
			var story []string
			for i := range count {
				c := clashes[w.intn(len(clashes))]
				branch := fmt.Sprintf("pr-%d", i)
				// Every branch starts from main as it was.
				w.repo.Commit(branch, c.files(i), c.name)
				story = append(story, fmt.Sprintf("%s: %s", branch, c.name))
			}
			open := func(i int) {
				pr := w.repo.OpenPR("root-admin", fmt.Sprintf("pr-%d", i), "main")
				prs = append(prs, pr)
				w.opened[pr.Number] = time.Now()
				w.scheduleAs(pr.Number, time.Now(), "pull_request")
			}
			// Most are opened at once; the rest after the first
			// merges, from the old base.
			late := w.intn(count)
			for i := range count - late {
				open(i)
			}
			w.work(2+replicas, 60*time.Second)
			for i := count - late; i < count; i++ {
				open(i)
			}
			w.work(2+replicas, 60*time.Second)
			// A resync: every open pull request once more, with
			// nothing killed.
			w.killRate = 0
			for _, pr := range prs {
				if pr.State() == "open" {
					w.scheduleAs(pr.Number, time.Now(), "pull_request")
				}
			}
			w.work(2+replicas, 60*time.Second)

			failed := false
			fail := func(format string, args ...any) {
				failed = true
				t.Errorf(format, args...)
			}
			// Every commit main went through validates.
			commits := w.mainCommits(start)
			for _, sha := range commits {
				if msg := w.validate(sha); msg != "" {
					fail("main at %s does not validate: %s", change.ShortSHA(sha), msg)
				}
			}
			seen := map[int]int{}
			for _, m := range w.repo.Merges() {
				if seen[m.Number]++; seen[m.Number] > 1 {
					fail("#%d merged twice", m.Number)
				}
			}
			for _, pr := range prs {
				total++
				if pr.Merged() {
					merged++
					if d := w.mergedAt[pr.Number].Sub(w.opened[pr.Number]); d > longest {
						longest = d
					}
					continue
				}
				run := w.ownRun(pr.HeadSHA())
				if run == nil {
					fail("#%d is open with no catalogbot run at its head", pr.Number)
					continue
				}
				codes, ok := review.ParseBlockedBy(run.Text)
				if !ok || len(codes) == 0 || slices.ContainsFunc(codes, func(c policy.Code) bool { return slices.Contains(passing, c) }) {
					fail("#%d is open, its run says %q:\n%s", pr.Number, codes, run.Text)
				}
			}
			if failed {
				t.Logf("%d replicas; pull requests: %s\nthe service's log:\n%s", replicas, strings.Join(story, "; "), w.logs.String())
			}
		})
	}
	t.Logf("%d of %d pull requests merged; the longest from opening to merge took %s", merged, total, longest.Round(time.Millisecond))
}

// mainCommits lists main's first parents from its tip back to from.
func (w *mainWorld) mainCommits(from string) []string {
	w.t.Helper()
	c := w.apps[0].cache
	token, err := w.apps[0].gh.InstallationToken(context.Background(), w.gh.InstallationID(w.repo))
	if err != nil {
		w.t.Fatal(err)
	}
	tip, err := c.Branch(context.Background(), gitcache.Source{Repo: "acme/catalog", URL: w.repo.CloneURL(), Token: token}, "main")
	if err != nil {
		w.t.Fatal(err)
	}
	shas, _, err := c.FirstParents("acme/catalog", from, tip, 1000)
	if err != nil {
		w.t.Fatal(err)
	}
	return shas
}

// validate validates the catalog of main at sha, and says why it is
// invalid, "" when it is valid.
func (w *mainWorld) validate(sha string) string {
	tree, err := w.apps[0].cache.Tree("acme/catalog", sha)
	if err != nil {
		w.t.Fatal(err)
	}
	sub, err := fs.Sub(tree, "catalog")
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := fbc.Validate(context.Background(), sub, fbc.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	return res.OPMMessage
}

func (w *mainWorld) ownRun(sha string) *githubtest.CheckRun {
	var found *githubtest.CheckRun
	for _, r := range w.repo.CheckRuns(sha) {
		if r.Name == CheckRunName && r.AppID == w.gh.AppID() && (found == nil || r.ID > found.ID) {
			found = &r
		}
	}
	return found
}

// BenchmarkMergeStream measures the bound of the merge turn's fairness: 100
// approved, green pull requests that do not conflict (each adds a channel
// of its own), opened at once, merged by three replicas on one PostgreSQL
// state with the service's defaults (a pull request that finds the turn
// taken asks again within 2–4 s). Every merge moves main, so each pull
// request is judged again on the tip it merges onto. Reported: the time
// from opening to merge, median and longest, and the merges a second.
func BenchmarkMergeStream(b *testing.B) {
	url := durabletest.Postgres(b)
	own := slices.IndexFunc(clashes, func(c clash) bool { return c.name == "channel" })
	for i := range b.N {
		w := newMainWorld(b, uint64(i), 3, mainOptions{databaseURL: url})
		var prs []*githubtest.PR
		for n := range 100 {
			branch := fmt.Sprintf("stream-%d", n)
			w.repo.Commit(branch, clashes[own].files(n), "a channel of its own")
			pr := w.repo.OpenPR("root-admin", branch, "main")
			prs = append(prs, pr)
		}
		began := time.Now()
		for _, pr := range prs {
			w.opened[pr.Number] = began
			w.scheduleAs(pr.Number, began, "pull_request")
		}
		w.work(2*3, 15*time.Minute)
		took := time.Since(began)
		var waits []time.Duration
		for _, pr := range prs {
			if !pr.Merged() {
				b.Fatalf("#%d was not merged", pr.Number)
			}
			waits = append(waits, w.mergedAt[pr.Number].Sub(began))
		}
		slices.Sort(waits)
		b.ReportMetric(waits[len(waits)/2].Seconds(), "median-s")
		b.ReportMetric(waits[len(waits)-1].Seconds(), "max-s")
		b.ReportMetric(float64(len(prs))/took.Seconds(), "merges/s")
	}
}
