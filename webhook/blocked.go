package webhook

import (
	"context"
	"encoding/json"
	"strconv"
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
// Given the service's state (Persist), the record is kept there: a
// restart does not start the waits again (an alert on a wait of an hour
// must fire for a service that restarts every half hour), and every
// replica reports every pull request, whichever replica reconciled it
// last, and none reports one that another has seen merge. Without a state
// the record is of this process, and a restart starts every wait again
// at the next reconcile. Its zero value is not usable; NewMetrics makes
// it.
type BlockedWaits struct {
	desc *prometheus.Desc
	// Now is the clock; tests replace it before the first use.
	Now func() time.Time

	mu  sync.Mutex
	prs map[blockedKey]map[policy.Code]time.Time // since when each code has held, per pull request

	store Facts
	fail  func(error)
}

// blockedNS is the namespace of the record in the service's state: one
// value per pull request, under "owner/name#number", the start of each of
// its codes; a pull request that waits no more has none.
const blockedNS = "blocked"

// blockedTimeout bounds one read or write of the stored record.
const blockedTimeout = 10 * time.Second

// Persist keeps the record in f, shared by the replicas and kept across
// restarts; fail is told of the errors, after which a write is lost and a
// read reports nothing.
func (w *BlockedWaits) Persist(f Facts, fail func(error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.store, w.fail = f, fail
}

func (k blockedKey) String() string { return k.repo + "#" + strconv.Itoa(k.number) }

func parseBlockedKey(s string) (blockedKey, bool) {
	repo, n, ok := strings.Cut(s, "#")
	number, err := strconv.Atoi(n)
	return blockedKey{repo, number}, ok && err == nil
}

// stored returns the store, or nil to keep the record in memory.
func (w *BlockedWaits) stored() (Facts, func(error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.store, w.fail
}

// update sets k's codes to what next makes of the stored ones.
func (w *BlockedWaits) update(f Facts, fail func(error), k blockedKey, next func(old map[policy.Code]time.Time) map[policy.Code]time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), blockedTimeout)
	defer cancel()
	err := f.Update(ctx, blockedNS, k.String(), func(raw []byte, seen bool) ([]byte, bool) {
		var old map[policy.Code]time.Time
		if seen {
			_ = json.Unmarshal(raw, &old) // unreadable: the waits start again
		}
		b, err := json.Marshal(next(old))
		return b, err == nil
	})
	if err != nil && fail != nil {
		fail(err)
	}
}

// all is the stored record.
func (w *BlockedWaits) all(f Facts, fail func(error)) map[blockedKey]map[policy.Code]time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), blockedTimeout)
	defer cancel()
	raw, err := f.List(ctx, blockedNS)
	if err != nil {
		if fail != nil {
			fail(err)
		}
		return nil
	}
	out := make(map[blockedKey]map[policy.Code]time.Time, len(raw))
	for key, v := range raw {
		k, ok := parseBlockedKey(key)
		var codes map[policy.Code]time.Time
		if !ok || json.Unmarshal(v, &codes) != nil || len(codes) == 0 {
			continue
		}
		out[k] = codes
	}
	return out
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
	next := func(old map[policy.Code]time.Time) map[policy.Code]time.Time {
		next := make(map[policy.Code]time.Time, len(codes))
		for _, c := range codes {
			since, ok := old[c]
			if !ok {
				since = now
			}
			next[c] = since
		}
		return next
	}
	if f, fail := w.stored(); f != nil {
		w.update(f, fail, k, next)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prs[k] = next(w.prs[k])
}

// Codes are the codes the pull request is recorded with, nil when it is
// not recorded.
func (w *BlockedWaits) Codes(repo string, number int) []policy.Code {
	k := blockedKey{strings.ToLower(repo), number}
	var have map[policy.Code]time.Time
	if f, fail := w.stored(); f != nil {
		have = w.all(f, fail)[k]
	} else {
		w.mu.Lock()
		have = w.prs[k]
		w.mu.Unlock()
	}
	var out []policy.Code
	for _, c := range policy.Codes() {
		if _, ok := have[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

// Done forgets a pull request that merged or closed: it waits for nothing.
func (w *BlockedWaits) Done(repo string, number int) {
	w.forget(func(k blockedKey) bool { return k == blockedKey{strings.ToLower(repo), number} })
}

// Retain forgets the pull requests of repo that open does not list: they
// closed without an event to say so.
func (w *BlockedWaits) Retain(repo string, open func(number int) bool) {
	repo = strings.ToLower(repo)
	w.forget(func(k blockedKey) bool { return k.repo == repo && !open(k.number) })
}

// RetainRepos forgets the pull requests of the repositories keep does not
// keep (keep is given "owner/name" lower-cased): the App has them no more.
func (w *BlockedWaits) RetainRepos(keep func(repo string) bool) {
	w.forget(func(k blockedKey) bool { return !keep(k.repo) })
}

// forget drops the pull requests gone says are gone.
func (w *BlockedWaits) forget(gone func(blockedKey) bool) {
	if f, fail := w.stored(); f != nil {
		for k := range w.all(f, fail) {
			if gone(k) {
				w.update(f, fail, k, func(map[policy.Code]time.Time) map[policy.Code]time.Time { return nil })
			}
		}
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.prs {
		if gone(k) {
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
	var prs map[blockedKey]map[policy.Code]time.Time
	if f, fail := w.stored(); f != nil {
		prs = w.all(f, fail)
	} else {
		w.mu.Lock()
		defer w.mu.Unlock()
		prs = w.prs
	}
	for _, codes := range prs {
		for c, since := range codes {
			out[c] = max(out[c], now.Sub(since).Seconds())
		}
	}
	return out
}
