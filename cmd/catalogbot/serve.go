package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
	"github.com/catalogbot/catalogbot/webhook/membudget"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// serveFlags are the command line of serve.
type serveFlags struct {
	config    string
	logFormat string
	drain     time.Duration
}

func newServeCmd(a *app) *cobra.Command {
	f := serveFlags{logFormat: "json", drain: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the GitHub App: check, report on, merge and publish a catalog repository's pull requests",
		Long: `Run catalogbot as a GitHub App. It receives the App's webhooks on
POST /webhook, checks every pull request of the repositories it is
installed on at its head commit (owners, fbc, references, images), reports
the result as a "catalogbot" check run and one pull request comment, merges
what the repository's policy lets it merge, pinned to the checked commit,
and publishes the catalog image when the default branch moves.

The configuration file (YAML; see examples/serve.yaml) names the App id,
its private key, the webhook secrets (several, for rotation), the listen
address, the workers, the resync interval, the publish credentials and
allowPrivateRegistries, the internal registries (host or host:port) that
pull request checks may reach: every other registry, token realm or
redirect that resolves to a loopback, private or link-local address is
refused; and registryProxy, the forward proxy pull request checks go
through (a proxy the environment names is not used for them);
registryHostConcurrency, registryHostWait and registryCoolDown shape the
bound and circuit breaker every job shares per registry host, so that a
registry that never answers holds one worker for one deadline, not all.
Secrets can come from the environment instead: CATALOGBOT_WEBHOOK_SECRET or
CATALOGBOT_WEBHOOK_SECRETS (comma separated), CATALOGBOT_APP_ID,
CATALOGBOT_PRIVATE_KEY (PEM) or CATALOGBOT_PRIVATE_KEY_FILE. The server
refuses to start without a webhook secret.

Besides /webhook it serves GET /healthz (liveness) and /readyz; /readyz
says ready once GitHub has accepted the App's credentials, and answers 503
with the reason while the state cannot be written, no installation token
can be minted, or the git cache is broken beyond repair or cannot be
written (its disk full), so a replica that
cannot do the work takes no deliveries. Prometheus /metrics
is served on a listener of its own, metricsAddr (127.0.0.1:9090 by
default), and asks for a bearer token when CATALOGBOT_METRICS_TOKEN is set.
On start and every resync interval it lists the open pull requests of every
installation, so a lost webhook loses nothing. Every proposeInterval (1m)
it polls the bundle repositories the policies watch (propose:) and opens
or moves one labelled pull request per package with new releases; with
CATALOGBOT_REGISTRY_HOOK_SECRET set, POST /hooks/registry takes registry
push notifications and polls at once. The work queue and what
deliveries told it (comment editors, push times, pending retries) live in
a state that outlives the process: one SQLite file under stateDir by
default, or the PostgreSQL database named by CATALOGBOT_DATABASE_URL, which
several replicas share. SIGTERM stops taking deliveries and finishes the
work under way (at most --drain-timeout) before exiting; queued work stays
in the state.`,
		Example: `  catalogbot serve --config /etc/catalogbot/config.yaml
  CATALOGBOT_WEBHOOK_SECRET=... catalogbot serve --config serve.yaml --log-format text`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf(cmd.CommandPath(), "serve takes no arguments, got %q", args)
			}
			if f.logFormat != "json" && f.logFormat != "text" {
				return usageErrorf(cmd.CommandPath(), "invalid --log-format %q: want json or text%s", f.logFormat, checks.DidYouMean(f.logFormat, []string{"json", "text"}))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServe(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "the configuration file (YAML); without it everything comes from the environment")
	fl.StringVar(&f.logFormat, "log-format", f.logFormat, "log format: json or text")
	fl.DurationVar(&f.drain, "drain-timeout", f.drain, "how long SIGTERM waits for the work under way")
	return cmd
}

func (a *app) runServe(ctx context.Context, f serveFlags) error {
	cfg, err := webhook.LoadConfig(f.config, os.Getenv)
	if err != nil {
		return err
	}
	// Checked here, before anything starts, so that a wrong key is named
	// as such rather than by the JWT library's advice to its callers.
	if cfg.PrivateKey, err = cfg.ReadPrivateKey(); err != nil {
		return err
	}
	log := a.log
	if f.logFormat == "json" {
		log = jsonLogger(a.stderr, a.level)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := webhook.NewMetrics(reg)

	// The memory limit: GOMEMLIMIT, or a share of the container's. The
	// checks share a budget derived from it, so that the workers, each
	// with a large file, never pass it together.
	mem, err := membudget.SetLimit(os.Getenv, cgroupRoot)
	if err != nil {
		return err
	}
	budget := membudget.New(membudget.Options{Size: membudget.BudgetFor(mem.Limit), Registerer: reg})
	if mem.Limit > 0 {
		log.Info("memory limit", "limit_bytes", mem.Limit, "from", mem.From, "cgroup_bytes", mem.Cgroup, "check_budget_bytes", budget.Size())
	} else {
		log.Warn("no memory limit (neither GOMEMLIMIT nor a cgroup limit): checks are not held to a memory budget")
	}

	// Pull requests are checked with anonymous registry access: the
	// publisher's credentials (cfg.Publish) are never used for a check.
	// Every registry connection a pull request leads to passes the
	// egress rule.
	anonymous := authn.NewMultiKeychain()
	rule, err := egress.New(cfg.AllowPrivateRegistries, a.resolver)
	if err != nil {
		return err
	}
	if cfg.RegistryProxy != "" {
		if err := rule.UseProxy(cfg.RegistryProxy); err != nil {
			return err
		}
	}
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		return err
	}
	// The machine's clock, unless a test injects a skew (faultclock.go).
	now, skew, err := faultClock(os.Getenv)
	if err != nil {
		return err
	}
	if skew != 0 {
		log.Warn("the service's clock is moved by a fault injected for tests", "offset", skew.String(), "env", envClockOffset)
	}
	// The work queue and what deliveries told the App live in the state:
	// a SQLite file by default, or the PostgreSQL database replicas share.
	stateDir := cfg.StateDir
	if stateDir == "" && cfg.DatabaseURL == "" {
		if stateDir, err = durable.DefaultStateDir(); err != nil {
			return err
		}
	}
	state, err := durable.Open(ctx, durable.Options{
		DatabaseURL: cfg.DatabaseURL, StateDir: stateDir,
		Workers: cfg.Workers, MaxPending: cfg.MaxPending, DedupeTTL: cfg.DedupeTTL, ReplayWindow: cfg.ReplayWindow,
		ResyncInterval: cfg.ResyncInterval, LeaseTTL: cfg.LeaseTTL, Logger: log, Metrics: metrics, Now: now,
	})
	if err != nil {
		return err
	}
	defer state.Close()
	// Every job's checks share one bound per registry host and one
	// breaker per host: a registry pull requests name that never
	// answers holds one worker for one deadline, not every worker on
	// every try.
	hosts := registry.NewHosts(cfg.RegistryHosts())
	reg.MustRegister(webhook.NewRegistryHosts(hosts))
	bot, err := reconcile.NewApp(reconcile.AppOptions{
		Config: cfg, Metrics: metrics, Logger: log,
		Images:    &images.Options{Keychain: anonymous, UserAgent: a.userAgent(), Log: log, Egress: rule, Hosts: hosts},
		Renderer:  renderer,
		UserAgent: a.userAgent(),
		Facts:     state.Facts(),
		// The App proposes new releases of the bundle repositories the
		// policies watch, reading them as the checks do: anonymously,
		// through the egress rule.
		Propose: &reconcile.ProposeOptions{Registry: propose.Registry{Keychain: anonymous, Egress: rule}},
		Memory:  budget,
		Now:     now,
	})
	if err != nil {
		return err
	}
	defer bot.Close()
	queue, err := state.Queue(bot)
	if err != nil {
		return err
	}
	srv, err := webhook.NewServer(webhook.ServerOptions{
		Secrets: cfg.Secrets(), Queue: queue, Metrics: metrics, Gatherer: reg, Logger: log,
		// Not ready while the state cannot be written or the App cannot
		// work: GitHub gives no token, the git cache is broken.
		Ready:   webhook.AllReady(state.Ready, bot.Ready),
		Observe: bot.Observe, MetricsToken: cfg.MetricsToken,
		RegistryHook: webhook.RegistryHookOptions{Secret: cfg.RegistryHookSecret, Notify: bot.NotifyRegistry},
	})
	if err != nil {
		return err
	}

	// Deliveries stop at the first signal; the work under way runs on a
	// context of its own, so that it can finish while the process drains.
	sigCtx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	// The resync of every open pull request, at start and every
	// interval, is a periodic job of the queue's: one replica (the
	// elected leader) queues it for all.
	if err := queue.Start(workCtx); err != nil {
		return err
	}
	go bot.RunReadiness(sigCtx, time.Second)
	// Every replica polls; each repository's round is made by one, under
	// its lease in the state (docs/proposals.md).
	go bot.RunProposer(sigCtx, func(j webhook.Job) { queue.EnqueueAll([]webhook.Job{j}) })

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	// /metrics has a listener of its own, off the public one.
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("metricsAddr: listen on %s: %w", cfg.MetricsAddr, err)
	}
	if cfg.MetricsToken == "" && !loopback(mln.Addr()) {
		log.Warn("/metrics is served without a token on an address other hosts may reach; set "+webhook.EnvMetricsToken+" or a loopback metricsAddr",
			"metrics_addr", mln.Addr().String())
	}
	httpSrv := webhook.NewHTTPServer(cfg.Listen, srv.Handler())
	metricsSrv := webhook.NewHTTPServer(cfg.MetricsAddr, srv.MetricsHandler())
	served := make(chan error, 2)
	go func() { served <- httpSrv.Serve(ln) }()
	go func() { served <- metricsSrv.Serve(mln) }()
	log.Info("serving", "addr", ln.Addr().String(), "metrics_addr", mln.Addr().String(), "app_id", cfg.AppID, "workers", cfg.Workers, "resync", cfg.ResyncInterval.String())

	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-sigCtx.Done():
	}
	log.Info("shutting down: draining the work under way", "queued", queue.Len(), "timeout", f.drain.String())
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.drain)
	defer cancel()
	// New deliveries are refused (503) from here; GitHub's redelivery or
	// the next resync brings them back.
	if err := httpSrv.Shutdown(drainCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("http shutdown", "err", err)
	}
	if err := queue.Drain(drainCtx); err != nil {
		log.Warn("drain stopped before the work was done; it stays queued for the next start or another replica", "err", err)
	}
	// Metrics stay readable while the work drains.
	if err := metricsSrv.Shutdown(drainCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("metrics shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

// cgroupRoot is where the process's cgroup file system is mounted, as a
// container sees its own cgroup.
const cgroupRoot = "/sys/fs/cgroup"

// jsonLogger is the service's JSON log. encoding/json leaves bidirectional
// overrides, DEL and C1 controls raw, and the log quotes pull request data
// (paths, names, errors that echo them), so those are written as \u
// escapes. The text handler quotes them already.
func jsonLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(checks.VisibleJSONWriter(w), &slog.HandlerOptions{Level: level}))
}

// loopback reports whether addr is a loopback address, which only the host
// (or the pod) reaches.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
