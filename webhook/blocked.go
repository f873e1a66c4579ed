package webhook

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/policy"
)

// BlockedName is the metric of how long open pull requests have waited,
// by reason (BlockedWaits).
const BlockedName = "catalogbot_pr_blocked_seconds"

// BlockedWaits records why each open pull request the App reconciled is
// not merged, and since when, and exports it as the gauge
// catalogbot_pr_blocked_seconds{reason}: for each reason (a policy.Code),
// the longest time any open pull request has been blocked by it, now.
//
// A gauge of the current longest wait, and not a histogram: a histogram
// observes a wait only when it ends, so the pull request that waits
// forever, which is what an alert is for, is the one it never shows. The
// maximum (rather than the sum) is the wait of the worst pull request,
// which is what "waited more than an hour" means; a sum grows with the
// number of pull requests as well. Every reason has its series from the
// start, at 0 while no pull request has it, so that an alert sees it
// before the first wait. One series per pull request would give the
// cardinality to whoever opens pull requests.
//
// The record is of this process: a restart starts every wait again at the
// next reconcile, which the periodic resync makes of every open pull
// request. Its zero value is not usable; NewMetrics makes it.
type BlockedWaits struct {
	desc *prometheus.Desc
	// Now is the clock; tests replace it before the first use.
	Now func() time.Time

	mu  sync.Mutex
	prs map[blockedKey]map[policy.Code]time.Time // since when each code has held, per pull request
}

type blockedKey struct {
	repo   string // owner/name, lower-cased
	number int
}

func newBlockedWaits() *BlockedWaits {
	return &BlockedWaits{
		desc: prometheus.NewDesc(BlockedName,
			"Longest time an open pull request has been kept from merging, by reason (seconds; 0 when none is).",
			[]string{"reason"}, nil),
		Now: time.Now,
		prs: map[blockedKey]map[policy.Code]time.Time{},
	}
}

// Set records that the pull request is blocked by codes now. A code it
// already had keeps its start; the others start now, and codes it no
// longer has are dropped. No codes is recorded as policy.CodeUnexplained:
// an open pull request that is not merged always waits for something.
func (w *BlockedWaits) Set(repo string, number int, codes []policy.Code) {
	if len(codes) == 0 {
		codes = policy.CodesOf(policy.OrUnexplained(nil))
	}
	now := w.Now()
	k := blockedKey{strings.ToLower(repo), number}
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.prs[k]
	next := make(map[policy.Code]time.Time, len(codes))
	for _, c := range codes {
		since, ok := old[c]
		if !ok {
			since = now
		}
		next[c] = since
	}
	w.prs[k] = next
}

// Codes are the codes the pull request is recorded with, nil when it is
// not recorded.
func (w *BlockedWaits) Codes(repo string, number int) []policy.Code {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []policy.Code
	for _, c := range policy.Codes() {
		if _, ok := w.prs[blockedKey{strings.ToLower(repo), number}][c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// Done forgets a pull request that merged or closed: it waits for nothing.
func (w *BlockedWaits) Done(repo string, number int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.prs, blockedKey{strings.ToLower(repo), number})
}

// Retain forgets the pull requests of repo that open does not list: they
// closed without an event to say so.
func (w *BlockedWaits) Retain(repo string, open func(number int) bool) {
	repo = strings.ToLower(repo)
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.prs {
		if k.repo == repo && !open(k.number) {
			delete(w.prs, k)
		}
	}
}

// RetainRepos forgets the pull requests of the repositories keep does not
// keep (keep is given "owner/name" lower-cased): the App has them no more.
func (w *BlockedWaits) RetainRepos(keep func(repo string) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.prs {
		if !keep(k.repo) {
			delete(w.prs, k)
		}
	}
}

// Describe implements prometheus.Collector.
func (w *BlockedWaits) Describe(ch chan<- *prometheus.Desc) { ch <- w.desc }

// Collect implements prometheus.Collector: the longest wait of each
// reason, now.
func (w *BlockedWaits) Collect(ch chan<- prometheus.Metric) {
	for c, secs := range w.Longest() {
		ch <- prometheus.MustNewConstMetric(w.desc, prometheus.GaugeValue, secs, string(c))
	}
}

// Longest is, for every code, the longest time an open pull request has
// been blocked by it, in seconds: 0 for a code no pull request has.
func (w *BlockedWaits) Longest() map[policy.Code]float64 {
	now := w.Now()
	out := make(map[policy.Code]float64, len(policy.Codes()))
	for _, c := range policy.Codes() {
		out[c] = 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, codes := range w.prs {
		for c, since := range codes {
			out[c] = max(out[c], now.Sub(since).Seconds())
		}
	}
	return out
}
