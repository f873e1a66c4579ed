package webhook

import (
	"github.com/prometheus/client_golang/prometheus"
	"sync"
)

// Delivery results, the values of the result label of
// catalogbot_webhook_deliveries_total. Each delivery is counted once.
const (
	ResultAccepted     = "accepted"      // queued as new work
	ResultReplaced     = "replaced"      // accepted, and superseded a queued older job of the same key
	ResultIgnored      = "ignored"       // verified, but outside the allowlist or an irrelevant action
	ResultDuplicate    = "duplicate"     // a delivery id seen within the dedupe TTL
	ResultReplay       = "replay"        // a body already queued, running or done within the replay window, under a new id
	ResultBadSignature = "bad_signature" // missing, malformed or wrong X-Hub-Signature-256
	ResultMalformed    = "malformed"     // missing headers, bad JSON or missing required fields
	ResultTooLarge     = "too_large"     // body over the size cap
	ResultTooSlow      = "too_slow"      // body sent slower than the minimum rate; the connection was closed
	ResultOverloaded   = "overloaded"    // queue full or draining; resync recovers the work
)

// Metrics are the service's Prometheus metrics. Every name starts with
// catalogbot_. The fields are exported so that every part of the service
// (intake, reconciler, GitHub transport, publisher) records into one set.
type Metrics struct {
	Deliveries         *prometheus.CounterVec // labels: event, result
	Replays            *prometheus.CounterVec // label: event; deliveries dropped as replays
	QueueDepth         prometheus.Gauge
	QueueAge           prometheus.Histogram   // seconds from Received to start of work
	CheckDuration      prometheus.Histogram   // seconds per reconcile
	GitHubCalls        *prometheus.CounterVec // labels: method, code ("error" when no response)
	RateLimitRemaining prometheus.Gauge
	Merges             *prometheus.CounterVec // label: result (merged|conflict|refused|error)
	Publishes          *prometheus.CounterVec // label: result (pushed|unchanged|failed)
	Errors             *prometheus.CounterVec // label: stage
	// Takeovers counts the keys whose work a replica took over from one
	// that stopped (webhook/durable); label: why (lease: its lease
	// lapsed; fetched: it died between River's fetch and the lease).
	Takeovers *prometheus.CounterVec
	// Retries counts the failed jobs held to be tried again, by the
	// failure's class (webhook.RetryClass: transient, unauthorized).
	Retries *prometheus.CounterVec
	// InvalidBranches counts the repositories whose published branch's
	// catalog does not validate, as the publish job last judged it
	// (SetBranchInvalid): main holds a tree the merge decisions never
	// judged, and nothing is published from it.
	InvalidBranches prometheus.Gauge
	// BundleUnplaced is, per repository and package, how long the oldest
	// release seen without a catalog entry or an open proposal has been
	// seen, once that is longer than the service's unplacedAfter: the
	// missing-proposal alarm (docs/proposals.md). A package with none has
	// no series.
	BundleUnplaced *prometheus.GaugeVec
	// ProposeRounds counts the proposer's polls of a repository, by
	// result ("proposed", "unchanged", "failed").
	ProposeRounds *prometheus.CounterVec
	// RegistryNotifications counts /hooks/registry requests, by result.
	RegistryNotifications *prometheus.CounterVec
	invalidMu             sync.Mutex
	invalid               map[string]bool
	// Blocked is why each open pull request waits and since when:
	// catalogbot_pr_blocked_seconds{reason}, the longest current wait
	// of each reason (see BlockedWaits for why a gauge of the maximum).
	Blocked *BlockedWaits
}

// NewMetrics creates the metrics and registers them on reg. A nil reg leaves
// them unregistered, which suits tests that do not read them. Registering
// twice on one registry panics, as prometheus.MustRegister does: two Metrics
// on one registry is a wiring mistake.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	// Queue age spans milliseconds (idle service) to many minutes (a backlog
	// behind slow registries), check duration seconds to minutes.
	ageBuckets := []float64{.001, .005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
	checkBuckets := []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_webhook_deliveries_total",
			Help: "Webhook deliveries received, by event and result.",
		}, []string{"event", "result"}),
		Replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_webhook_replays_total",
			Help: "Verified deliveries dropped because the same signed body was queued, running or done within the replay window, by event.",
		}, []string{"event"}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogbot_queue_depth",
			Help: "Jobs queued and not yet started.",
		}),
		QueueAge: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "catalogbot_queue_age_seconds",
			Help:    "Time from a job's receipt to the start of its work.",
			Buckets: ageBuckets,
		}),
		CheckDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "catalogbot_check_duration_seconds",
			Help:    "Time to reconcile one pull request.",
			Buckets: checkBuckets,
		}),
		GitHubCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_github_api_calls_total",
			Help: "GitHub API requests, by method and response code (\"error\" when no response came).",
		}, []string{"method", "code"}),
		RateLimitRemaining: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "catalogbot_github_rate_limit_remaining",
			Help: "X-RateLimit-Remaining of the latest GitHub API response.",
		}),
		Merges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_merges_total",
			Help: "Merge attempts, by result.",
		}, []string{"result"}),
		Publishes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_publishes_total",
			Help: "Catalog image publishes, by result.",
		}, []string{"result"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "catalogbot_errors_total",
			Help: "Errors, by the stage that failed.",
		}, []string{"stage"}),
	}
	// The fixed result sets start at zero so that rate() and alerts see the
	// series before the first event of each kind.
	for _, r := range []string{"merged", "conflict", "refused", "error", "unjudged"} {
		m.Merges.WithLabelValues(r)
	}
	for _, r := range []string{"pushed", "unchanged", "failed"} {
		m.Publishes.WithLabelValues(r)
	}
	m.Takeovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogbot_queue_takeovers_total",
		Help: "Keys whose work this replica took over from a replica that stopped, by why.",
	}, []string{"why"})
	for _, w := range []string{"lease", "fetched"} {
		m.Takeovers.WithLabelValues(w)
	}
	m.Retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogbot_job_retries_total",
		Help: "Failed jobs held to be tried again, by the class of the failure.",
	}, []string{"class"})
	for _, c := range []RetryClass{Transient, Unauthorized} {
		m.Retries.WithLabelValues(c.String())
	}
	m.InvalidBranches = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "catalogbot_invalid_branches",
		Help: "Repositories whose published branch's catalog does not validate, as last published.",
	})
	m.invalid = map[string]bool{}
	m.BundleUnplaced = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "catalogbot_bundle_unplaced_seconds",
		Help: "Seconds since the oldest release of a watched bundle repository with no catalog entry and no open proposal was first seen, once past unplacedAfter, by repository and package.",
	}, []string{"repo", "package"})
	m.ProposeRounds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogbot_propose_rounds_total",
		Help: "Polls of a repository's watched bundle repositories, by result.",
	}, []string{"result"})
	for _, r := range []string{"proposed", "unchanged", "failed"} {
		m.ProposeRounds.WithLabelValues(r)
	}
	m.RegistryNotifications = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "catalogbot_registry_notifications_total",
		Help: "Registry push notifications received on /hooks/registry, by result.",
	}, []string{"result"})
	m.Blocked = newBlockedWaits()
	if reg != nil {
		reg.MustRegister(m.Deliveries, m.Replays, m.QueueDepth, m.QueueAge, m.CheckDuration, m.GitHubCalls,
			m.RateLimitRemaining, m.Merges, m.Publishes, m.Errors, m.Takeovers, m.Retries, m.InvalidBranches, m.Blocked,
			m.BundleUnplaced, m.ProposeRounds, m.RegistryNotifications)
	}
	return m
}

// SetBranchInvalid records whether the published branch of repo validated
// when it was last published.
func (m *Metrics) SetBranchInvalid(repo string, invalid bool) {
	m.invalidMu.Lock()
	defer m.invalidMu.Unlock()
	if invalid {
		m.invalid[repo] = true
	} else {
		delete(m.invalid, repo)
	}
	m.InvalidBranches.Set(float64(len(m.invalid)))
}
