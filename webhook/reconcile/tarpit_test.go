package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// timedProcessor runs the App and notes when each job started and ended,
// and the retry it asked for.
type timedProcessor struct {
	app *App
	mu  sync.Mutex
	// started and ended are by pull request, the first start and the
	// last end; retryAt the last retry asked for.
	started, ended, retryAt map[int]time.Time
	starts                  chan int
}

func (p *timedProcessor) Process(ctx context.Context, job webhook.Job) (webhook.Result, error) {
	pr := job.Key.PR
	p.mu.Lock()
	if _, ok := p.started[pr]; !ok {
		p.started[pr] = time.Now()
	}
	p.mu.Unlock()
	p.starts <- pr
	res, err := p.app.Process(ctx, job)
	p.mu.Lock()
	p.ended[pr], p.retryAt[pr] = time.Now(), res.RetryAt
	p.mu.Unlock()
	return res, err
}

func (p *timedProcessor) end(pr int) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.ended[pr]
	return t, ok
}

// TestTarpitPRsLeaveWorkersFree is issue 30's row "a registry that never
// answers, named in a PR": on a service of 2 workers (the durable queue on
// SQLite, the App as serve builds it), two pull requests name a bundle
// image on a registry that accepts connections and never answers, and 4
// ordinary pull requests follow, whose images are on a registry that
// answers. Before the process shared one bound and breaker per host,
// both tarpit pull requests held a worker for the per-reference deadline,
// and the ordinary ones waited for them.
//
// The bound stated: every ordinary pull request has its completed check
// run before the first tarpit pull request's try ends (one
// limits.referenceTimeout, 8 s here, after it began); the second tarpit
// pull request gives up on the registry after registryHostWait (0.5 s),
// without dialling it. Both tarpit pull requests are left in progress,
// naming the registry, with a retry asked for; a later try fails at once,
// naming the host and when it is asked again, and asks for its retry no
// sooner than that; readiness stays true.
func TestTarpitPRsLeaveWorkersFree(t *testing.T) {
	const referenceTimeout = 8 * time.Second
	tarpit := registrytest.NewTarpit(t)
	good := registrytest.New(t)
	_, goodPort, _ := strings.Cut(good.Host, ":")
	rule, err := egress.New([]string{"slow.test", "fine.test"}, egresstest.Resolver{"slow.test": {"127.0.0.1"}, "fine.test": {"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	slow, fine := "slow.test:"+tarpit.Port, "fine.test:"+goodPort
	digest := good.PushRandom(t, good.Ref("foo-bundle:v1"))

	// A cool-down longer than the first pending backoff (1 minute): the
	// retry waits for it rather than spend a try on a host not asked.
	cfg := &webhook.Config{Workers: 2, RegistryHostWait: 500 * time.Millisecond, RegistryCoolDown: 5 * time.Minute}
	hosts := registry.NewHosts(cfg.RegistryHosts())
	e := newEnvWith(t, catalogRepo(fmt.Sprintf("limits:\n  referenceTimeout: %s\n", referenceTimeout)), func(o *AppOptions) {
		cfg.AppID, cfg.PrivateKey, cfg.GitHubURL, cfg.CacheDir = o.Config.AppID, o.Config.PrivateKey, o.Config.GitHubURL, o.Config.CacheDir
		o.Config = cfg
		o.Images = &images.Options{Keychain: authn.NewMultiKeychain(), Egress: rule, Insecure: []string{slow, fine}, Hosts: hosts}
	})
	ctx := context.Background()
	if err := e.app.ProbeGitHub(ctx); err != nil {
		t.Fatal(err)
	}
	state, err := durable.Open(ctx, durable.Options{StateDir: t.TempDir(), Workers: cfg.Workers, ResyncInterval: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { state.Close() })
	p := &timedProcessor{app: e.app, started: map[int]time.Time{}, ended: map[int]time.Time{}, retryAt: map[int]time.Time{}, starts: make(chan int, 64)}
	q, err := state.Queue(p)
	if err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() { q.Drain(context.Background()) })
	t.Cleanup(cancel)
	if err := q.Start(qctx); err != nil {
		t.Fatal(err)
	}

	bundleOn := func(image string) string {
		return strings.Replace(fooCatalog, "quay.io/example/foo-bundle:v1.0.0", image, 1)
	}
	var tarpitPRs, ordinary []*githubtest.PR
	for i := range 2 {
		tarpitPRs = append(tarpitPRs, e.openPR("alice", fmt.Sprintf("tarpit-%d", i),
			map[string]string{"catalog/foo/catalog.yaml": bundleOn(fmt.Sprintf("%s/foo-bundle@sha256:%064d", slow, i))}))
	}
	for i := range 4 {
		ordinary = append(ordinary, e.openPR("alice", fmt.Sprintf("ordinary-%d", i),
			map[string]string{"catalog/foo/catalog.yaml": strings.Replace(bundleOn(fine+"/foo-bundle@"+digest.String()),
				"defaultChannel: stable\n", fmt.Sprintf("defaultChannel: stable\ndescription: change %d\n", i), 1)}))
	}
	// The tarpit pull requests go first and take both workers.
	for _, pr := range tarpitPRs {
		if r := q.Enqueue(e.job(pr, "pull_request")); r != webhook.Queued {
			t.Fatalf("enqueue #%d: %v", pr.Number, r)
		}
	}
	for range tarpitPRs {
		select {
		case <-p.starts:
		case <-time.After(30 * time.Second):
			t.Fatal("the tarpit pull requests did not start")
		}
	}
	for tarpit.Conns() == 0 {
		time.Sleep(time.Millisecond)
	}
	enqueued := time.Now()
	for _, pr := range ordinary {
		if r := q.Enqueue(e.job(pr, "pull_request")); r != webhook.Queued {
			t.Fatalf("enqueue #%d: %v", pr.Number, r)
		}
	}

	// Every pull request ends its first try.
	deadline := time.Now().Add(referenceTimeout + time.Minute)
	for _, pr := range append(append([]*githubtest.PR{}, tarpitPRs...), ordinary...) {
		for {
			if _, ok := p.end(pr.Number); ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("#%d did not end its first try", pr.Number)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The tarpit's try that contacted it ends last, one deadline after
	// it began.
	var tarpitEnd time.Time
	for _, pr := range tarpitPRs {
		if end, _ := p.end(pr.Number); end.After(tarpitEnd) {
			tarpitEnd = end
		}
	}
	var lastOrdinary time.Time
	for _, pr := range ordinary {
		run := e.run(pr.HeadSHA(), CheckRunName)
		if run.Status != "completed" {
			t.Errorf("ordinary #%d: run %s %q, want completed:\n%s", pr.Number, run.Status, run.Title, run.Summary)
		}
		end, _ := p.end(pr.Number)
		if end.After(lastOrdinary) {
			lastOrdinary = end
		}
	}
	t.Logf("ordinary pull requests checked %s after they were queued; the tarpit's try ended %s after they were queued",
		lastOrdinary.Sub(enqueued).Round(time.Millisecond), tarpitEnd.Sub(enqueued).Round(time.Millisecond))
	if !lastOrdinary.Before(tarpitEnd) {
		t.Errorf("the ordinary pull requests were checked %s after they were queued, not before the tarpit's first try ended (%s): the tarpit held every worker",
			lastOrdinary.Sub(enqueued).Round(time.Millisecond), tarpitEnd.Sub(enqueued).Round(time.Millisecond))
	}
	if c := tarpit.Conns(); c > 2 {
		t.Errorf("%d connections to the tarpit, want at most 2 (one contact, 2 schemes)", c)
	}

	// The tarpit pull requests wait on the named registry, and are tried
	// again later.
	for _, pr := range tarpitPRs {
		run := e.run(pr.HeadSHA(), CheckRunName)
		if run.Status != "in_progress" || !strings.Contains(run.Summary, "registry "+slow) {
			t.Errorf("tarpit #%d: run %s/%s %q, want in progress naming registry %s:\n%s", pr.Number, run.Status, run.Conclusion, run.Title, slow, run.Summary)
		}
		p.mu.Lock()
		retry := p.retryAt[pr.Number]
		p.mu.Unlock()
		if retry.IsZero() {
			t.Errorf("tarpit #%d: no retry asked for", pr.Number)
		}
	}
	// A third try, now that the breaker is open, fails at once without
	// dialling, naming the host and when it is asked again.
	// Its retry waits for the breaker's probe rather than spend a try
	// on a host that is not asked.
	var open *registry.HostOpenError
	if !errors.As(hosts.Check(slow), &open) {
		t.Fatalf("the breaker of %s is not open", slow)
	}
	conns := tarpit.Conns()
	start := time.Now()
	res, err := e.app.Process(ctx, e.job(tarpitPRs[1], "pull_request"))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if res.RetryAt.Before(open.Until) {
		t.Errorf("a try while the breaker is open: retry at %s, before the breaker lets a probe go (%s)", res.RetryAt.Format(time.TimeOnly), open.Until.Format(time.TimeOnly))
	}
	run := e.run(tarpitPRs[1].HeadSHA(), CheckRunName)
	text := run.Summary + run.Text
	for _, a := range run.Annotations {
		text += "\n" + a.Message
	}
	if run.Status != "in_progress" || !strings.Contains(text, "registry "+slow+" did not answer in an earlier check") || !strings.Contains(text, "asked again after") {
		t.Errorf("a try while the breaker is open: run %s %q, want in progress naming the host and when it is asked again:\n%s", run.Status, run.Title, text)
	}
	if tarpit.Conns() != conns || took >= referenceTimeout {
		t.Errorf("a try while the breaker is open took %s and dialled the tarpit %d times", took, tarpit.Conns()-conns)
	}
	// A registry pull requests name being down is not the service's
	// fault: readiness stays true.
	if err := webhook.AllReady(state.Ready, e.app.Ready)(); err != nil {
		t.Errorf("not ready while a registry is down: %v", err)
	}
	if status, _ := hosts.Status(); len(status) != 1 || status[0].Host != slow || status[0].State != registry.Open {
		t.Errorf("breakers: %+v, want %s open", status, slow)
	}
}
