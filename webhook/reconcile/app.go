package reconcile

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/policy/review/pkgindex"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/tmpdir"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/ghapi"
	"github.com/catalogbot/catalogbot/webhook/gitcache"
)

// AppOptions are what an App is made from.
type AppOptions struct {
	Config  *webhook.Config
	Metrics *webhook.Metrics // nil: metrics are kept but not registered anywhere
	Logger  *slog.Logger
	// HTTPClient's transport carries every GitHub API request, under the
	// retrying, rate-limit-aware transport of package ghapi. Nil means
	// http.DefaultTransport.
	HTTPClient *http.Client
	// GitHubBackoff is the first pause before a GitHub request that met
	// a server error is sent again (ghapi.TransportOptions.MinBackoff);
	// 0 is the transport's default. Tests of outages shorten it.
	GitHubBackoff time.Duration

	// Images, when set, turn on the image checks of pull requests
	// (pipeline.Input.ImageOptions). Its keychain must be read-only or
	// anonymous: the publish credentials of Config.Publish are never
	// used while checking a pull request. It must carry an egress rule
	// (and no Transport of its own). Nil leaves the image checks out.
	Images *images.Options
	// Renderer, when set, renders the reference list a pull request
	// changes (pipeline.Input.Renderer); it must be made registry-only
	// with an egress rule, since its entries are the pull request's data.
	Renderer *render.Renderer
	// UserAgent is sent with the registry requests of publishing; ""
	// leaves go-containerregistry's own.
	UserAgent string
	// Now is the clock of check runs and retries, for tests; nil is
	// time.Now.
	Now func() time.Time
	// MergeTurnTTL is how long a repository's merge turn outlives a
	// holder that stopped renewing it (turn.go); 0 is the configuration's
	// LeaseTTL, or 30 seconds.
	MergeTurnTTL time.Duration
	// MergeTurnRetry is how soon a pull request that found the merge
	// turn taken asks again, plus up to as much jitter, unless the
	// holder hands the turn on sooner; 0 is five seconds.
	MergeTurnRetry time.Duration
	// Memory, when set, is the memory the checks share
	// (webhook/membudget): each reserves what it will read before
	// reading it. Nil admits every check at once.
	Memory review.Memory
	// Facts, when set, keep what deliveries told the App (comment
	// editors, head push times, pending retries) beyond the process and
	// share them between replicas; nil keeps them in memory.
	Facts webhook.Facts
	// Propose, when set, turns on the App's proposals (propose.go):
	// RunProposer and ProposeRound poll the bundle repositories the
	// repositories' policies watch. It needs a Renderer.
	Propose *ProposeOptions
}

// App is the reconciler of catalogbot serve. It implements Processor: each
// job makes GitHub match what the repository's state calls for (a pull
// request checked, reported and perhaps merged; the default branch
// published), whatever the event that caused it, so that a job can be
// repeated or dropped and the next one still does the right thing.
type App struct {
	cfg      *webhook.Config
	metrics  *webhook.Metrics
	log      *slog.Logger
	gh       *ghapi.Apps
	cache    *gitcache.Cache
	images   *images.Options
	renderer *render.Renderer
	memory   review.Memory
	// userAgent is AppOptions.UserAgent.
	userAgent string
	// tmpCache is the cache directory made when Config.CacheDir is "",
	// removed by Close.
	tmpCache string
	// index keeps the package index of the base's catalogs beside the
	// git cache, so that a restart reads only the directories whose
	// trees it has not indexed.
	index *pkgindex.Store

	slugMu sync.Mutex
	slug   string // the App's slug, once known: its bot user is slug[bot]

	// edits are the comment edits the App was told of.
	edits editLog
	// heads are the head changes of pull requests the App was told of.
	heads headLog
	// waiting are the tries of pull requests whose check could not judge.
	waiting memo[prKey, waiting]
	// merges are the merges the App made, by repo@merge commit, and
	// published the commit each repository was last published at: the
	// approval attestation of the next publication lists the merges
	// between the two. Kept in the state with the other records, so that
	// a restart between a merge and its publication loses no approval;
	// without a state they are forgotten on a restart, which the
	// attestation then says.
	merges    memo[string, review.MergeRecord]
	published memo[string, string]
	// groups are the merge groups the App was told of (mergegroup.go).
	groups memo[prKey, group]
	// turns are the repositories' merge turns (turn.go), and the
	// leases of the proposer's rounds.
	turns turns
	clock func() time.Time
	// facts is AppOptions.Facts; prop the proposer, nil when off.
	facts webhook.Facts
	prop  *proposer

	// github is nil once GitHub accepted the App's credentials (see
	// ProbeGitHub), and otherwise why it has not yet.
	githubMu sync.Mutex
	github   error

	mu      sync.Mutex
	done    map[prKey]fingerprint // last finished reconcile of each open PR
	resyncN int64
	// instance tells this process's resync jobs from another's (see
	// resyncRepo).
	instance string
}

// NewApp checks o.Config enough to talk to GitHub and prepares the git
// cache.
func NewApp(o AppOptions) (*App, error) {
	cfg := o.Config
	if cfg == nil {
		return nil, errors.New("github app: no configuration")
	}
	key := cfg.PrivateKey
	if len(key) == 0 {
		if cfg.PrivateKeyFile == "" {
			return nil, errors.New("github app: no private key")
		}
		var err error
		if key, err = os.ReadFile(cfg.PrivateKeyFile); err != nil {
			return nil, fmt.Errorf("github app: private key: %w", err)
		}
	}
	m := o.Metrics
	if m == nil {
		m = webhook.NewMetrics(nil)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	// Pull request data names the registries the checks contact; the
	// App never checks without the egress rule.
	if o.Images != nil && (o.Images.Egress == nil || o.Images.Transport != nil) {
		return nil, errors.New("github app: the image checks need an egress rule (images.Options.Egress) and its transport")
	}
	if o.Renderer != nil && !o.Renderer.ForPullRequests() {
		return nil, errors.New("github app: the reference renderer must be registry-only with an egress rule")
	}
	var base http.RoundTripper = http.DefaultTransport
	if o.HTTPClient != nil && o.HTTPClient.Transport != nil {
		base = o.HTTPClient.Transport
	}
	tr := ghapi.NewTransport(ghapi.TransportOptions{
		Base:           base,
		MinBackoff:     o.GitHubBackoff,
		AttemptTimeout: cfg.GitHubTimeout,
		Hooks: ghapi.Hooks{
			Call:      func(method, code string) { m.GitHubCalls.WithLabelValues(method, code).Inc() },
			RateLimit: func(n int) { m.RateLimitRemaining.Set(float64(n)) },
		},
	})
	apiURL := cfg.GitHubURL
	if apiURL == "" {
		apiURL = ghapi.DefaultBaseURL
	}
	gh, err := ghapi.NewApps(cfg.AppID, key, apiURL, tr)
	if err != nil {
		return nil, err
	}
	var id [6]byte
	rand.Read(id[:])
	a := &App{cfg: cfg, metrics: m, log: log, gh: gh, images: o.Images, renderer: o.Renderer, memory: o.Memory, userAgent: o.UserAgent, done: make(map[prKey]fingerprint), clock: o.Now,
		github: errors.New("GitHub has not yet been asked for an installation token"), instance: hex.EncodeToString(id[:])}
	if a.clock == nil {
		a.clock = time.Now
	}
	a.turns.ttl, a.turns.retry = o.MergeTurnTTL, o.MergeTurnRetry
	a.facts = o.Facts
	if o.Propose != nil && o.Propose.Interval >= 0 && cfg.ProposeInterval >= 0 {
		if o.Renderer == nil {
			return nil, errors.New("github app: proposing needs the renderer (AppOptions.Renderer)")
		}
		po := *o.Propose
		po.Interval = cmp.Or(po.Interval, cfg.ProposeInterval, webhook.DefaultProposeInterval)
		po.UnplacedAfter = cmp.Or(po.UnplacedAfter, cfg.UnplacedAfter, webhook.DefaultUnplacedAfter)
		if po.Registry.Tags == nil {
			// Each round asks for the tag lists "if changed": a
			// repository with no new tag costs a 304.
			po.Registry.Tags = propose.NewTagCache()
		}
		a.prop = &proposer{o: po, watched: map[string][]string{}, kicked: map[string]bool{}, kick: make(chan struct{}, 1), memory: map[string][]byte{}}
	}
	if a.turns.ttl == 0 {
		a.turns.ttl = cfg.LeaseTTL
	}
	if o.Facts != nil {
		fail := func(err error) {
			m.Errors.WithLabelValues("state").Inc()
			log.Error("state: the App's records", "error", err)
		}
		a.edits.edits.persist(o.Facts, "edits", fail)
		a.heads.heads.persist(o.Facts, "heads", fail)
		a.waiting.persist(o.Facts, "waiting", fail)
		a.merges.persist(o.Facts, "merges", fail)
		a.published.persist(o.Facts, "published", fail)
		a.groups.persist(o.Facts, "groups", fail)
		m.Blocked.Persist(o.Facts, fail)
		a.turns.facts = o.Facts
	}
	dir := cfg.CacheDir
	if dir == "" {
		// Named for this process, so the next start sweeps it if the
		// service is killed before Close.
		if dir, err = tmpdir.Make("", tmpdir.Prefix+"git-"); err != nil {
			return nil, fmt.Errorf("github app: git cache: %w", err)
		}
		a.tmpCache = dir
	}
	if a.cache, err = gitcache.NewWithOptions(dir, gitcache.Options{Logger: log}); err != nil {
		return nil, err
	}
	// The package index lives beside the repositories, under a name no
	// GitHub owner can have, and outlives a restart as they do.
	if a.index, err = pkgindex.Open(filepath.Join(dir, ".package-index"), pkgindex.Options{}); err != nil {
		return nil, fmt.Errorf("github app: package index: %w", err)
	}
	return a, nil
}

// Close removes the git cache when NewApp made it in a temporary directory.
func (a *App) Close() error {
	if a.tmpCache == "" {
		return nil
	}
	return os.RemoveAll(a.tmpCache)
}

// gitFailed is a.fail("git", err) for a fetch with token of installation
// inst; a token git refused is forgotten first, so that the retry mints
// another instead of failing with it again until a REST request meets
// the same refusal.
func (a *App) gitFailed(ctx context.Context, inst int64, token string, err error) error {
	if gitcache.TokenRejected(err) {
		a.gh.RejectToken(ctx, inst, token)
	}
	return a.fail("git", err)
}

// Ready reports whether the App can do work: GitHub has accepted its
// credentials (ProbeGitHub, which RunReadiness repeats until it has), the
// last installation token it asked for was minted, and its git cache is
// usable (a repository found broken was rebuilt, and its file system
// takes a write: not full, not read-only). A service that cannot
// mint an installation token (GitHub unreachable, a wrong App id or key,
// a revoked installation) would take deliveries it cannot act on; not
// ready, it gets none until it can.
func (a *App) Ready() error {
	a.githubMu.Lock()
	gerr := a.github
	a.githubMu.Unlock()
	if gerr != nil {
		return webhook.NotReady("GitHub has not accepted the App's credentials", fmt.Errorf("github: %w", gerr))
	}
	if err := a.gh.TokenError(); err != nil {
		return webhook.NotReady("no installation token can be had", fmt.Errorf("github: %w", err))
	}
	info, err := os.Stat(a.cache.Dir())
	if err != nil {
		return webhook.NotReady("the git cache is unusable", fmt.Errorf("git cache: %w", err))
	}
	if !info.IsDir() {
		return webhook.NotReady("the git cache is unusable", fmt.Errorf("git cache: %s is not a directory", a.cache.Dir()))
	}
	if err := a.cache.Err(); err != nil {
		return webhook.NotReady("the git cache is broken and could not be repaired", err)
	}
	if err := a.cache.Writable(); err != nil {
		return webhook.NotReady("the git cache cannot be written", err)
	}
	return nil
}

// ProbeGitHub asks GitHub what the App needs from it before any work: it
// lists the App's installations (the App's key is accepted) and mints a
// token of one of the first few (installation tokens can be had; a
// suspended installation gives none, so the next is tried). An App
// installed nowhere yet is ready once its key is accepted. Ready reports
// the outcome until the next probe.
func (a *App) ProbeGitHub(ctx context.Context) error {
	err := a.probeGitHub(ctx)
	a.githubMu.Lock()
	a.github = err
	a.githubMu.Unlock()
	return err
}

func (a *App) probeGitHub(ctx context.Context) error {
	insts, _, err := a.gh.App().Apps.ListInstallations(ctx, &github.ListOptions{PerPage: 5})
	if err != nil {
		return fmt.Errorf("list the App's installations: %w", err)
	}
	for _, in := range insts {
		if _, err = a.gh.InstallationToken(ctx, in.GetID()); err == nil {
			return nil
		}
	}
	return err
}

// RunReadiness probes GitHub (ProbeGitHub) until it has accepted the
// App's credentials or ctx ends, waiting first every, then twice as long
// each time up to a minute. After that it probes again only while the last
// installation token could not be minted (Ready is false then), so that
// readiness comes back once GitHub gives tokens again even if no job
// asks for one.
func (a *App) RunReadiness(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = time.Second
	}
	first, wait := true, every
	for {
		a.githubMu.Lock()
		accepted := a.github == nil
		a.githubMu.Unlock()
		if !accepted || a.gh.TokenError() != nil {
			err := a.ProbeGitHub(ctx)
			switch {
			case err == nil && first:
				a.log.Info("GitHub accepted the App's credentials: ready")
			case err == nil:
				a.log.Info("GitHub gives installation tokens again: ready")
			default:
				a.log.Warn("not ready: GitHub did not give an installation token", "err", err, "retry_in", wait)
			}
			if err == nil {
				first, wait = false, every
			} else {
				wait = min(2*wait, time.Minute)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Observe notes what a delivery alone says, for the reconciles to come:
// who edited a comment, and when a pull request's head became its head. The server calls it for every job before the queue
// may coalesce it away (webhook.ServerOptions.Observe); Process calls it
// too, for jobs that come another way.
func (a *App) Observe(job webhook.Job) {
	a.edits.record(job)
	a.heads.record(job)
}

// Process does one job. It implements Processor. The Result holds the work
// a KindResync job (and a push that changes the rules) finds, and when a
// pull request's check that could not judge is tried again.
func (a *App) Process(ctx context.Context, job webhook.Job) (webhook.Result, error) {
	switch job.Key.Kind {
	case webhook.KindPR:
		a.Observe(job)
		retryAt, next, err := a.reconcile(ctx, job)
		return webhook.Result{RetryAt: retryAt, Jobs: next}, err
	case webhook.KindPush:
		jobs, err := a.publish(ctx, job)
		return webhook.Result{Jobs: jobs}, err
	case webhook.KindResync:
		jobs, err := a.Resync(ctx)
		return webhook.Result{Jobs: jobs}, err
	case webhook.KindMergeGroup:
		retryAt, err := a.mergeGroup(ctx, job)
		return webhook.Result{RetryAt: retryAt}, err
	default:
		return webhook.Result{}, fmt.Errorf("job %s: unknown kind %q", job.Key, job.Key.Kind)
	}
}

// fail counts an error of stage and returns it.
func (a *App) fail(stage string, err error) error {
	a.metrics.Errors.WithLabelValues(stage).Inc()
	return err
}

// installationOf is the installation that job names, or the one the App
// has on repo when the payload named none.
func (a *App) installationOf(ctx context.Context, job webhook.Job, owner, name string) (int64, error) {
	if job.Installation > 0 {
		return job.Installation, nil
	}
	inst, _, err := a.gh.App().Apps.FindRepositoryInstallation(ctx, owner, name)
	if err != nil {
		return 0, fmt.Errorf("find the installation on %s/%s: %w", owner, name, err)
	}
	return inst.GetID(), nil
}

// botLogin is the login of the App's bot user ("slug[bot]"), or "" while
// it is not known. The slug is learnt from the check runs the App makes,
// which name their App, rather than from GET /app: that costs a request
// and needs the App's JWT.
func (a *App) botLogin() string {
	a.slugMu.Lock()
	defer a.slugMu.Unlock()
	if a.slug == "" {
		return ""
	}
	return a.slug + "[bot]"
}

// learnSlug notes the App's slug from a check run it made.
func (a *App) learnSlug(run *github.CheckRun) {
	if run.GetApp().GetID() != a.gh.AppID() || run.GetApp().GetSlug() == "" {
		return
	}
	a.slugMu.Lock()
	a.slug = run.GetApp().GetSlug()
	a.slugMu.Unlock()
}

// splitRepo splits "owner/name".
func splitRepo(full string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("invalid repository %q: want owner/name", full)
	}
	return owner, name, nil
}

// statusOf is the HTTP status of a go-github error, 0 when it has none.
func statusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// now is the time check runs are stamped with.
func (a *App) now() time.Time { return a.clock().UTC() }

// observe records how long a reconcile took.
func (a *App) observe(start time.Time) {
	a.metrics.CheckDuration.Observe(time.Since(start).Seconds())
}

var _ webhook.Processor = (*App)(nil)
