package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/policy"
)

// TestMetricsOffThePublicHandler: the public handler serves no /metrics;
// MetricsHandler does, and with a token only to a request that bears it.
func TestMetricsOffThePublicHandler(t *testing.T) {
	const token = "a-metrics-token-0123456789"
	tests := []struct {
		name    string
		token   string // ServerOptions.MetricsToken
		public  bool   // ask the public handler
		auth    string
		code    int
		metrics bool // the reply is the metrics
	}{
		{"public handler", "", true, "", http.StatusNotFound, false},
		{"public handler with the token", token, true, "Bearer " + token, http.StatusNotFound, false},
		{"metrics handler", "", false, "", http.StatusOK, true},
		{"token: none sent", token, false, "", http.StatusUnauthorized, false},
		{"token: wrong", token, false, "Bearer " + token + "x", http.StatusUnauthorized, false},
		{"token: not bearer", token, false, "Basic " + token, http.StatusUnauthorized, false},
		{"token: right", token, false, "Bearer " + token, http.StatusOK, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newService(t, &recorder{}, QueueOptions{}, ServerOptions{MetricsToken: tc.token})
			h := s.srv.MetricsHandler()
			if tc.public {
				h = s.h
			}
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code || strings.Contains(w.Body.String(), "catalogbot_queue_depth") != tc.metrics {
				t.Fatalf("GET /metrics: %d %.200q, want %d", w.Code, w.Body, tc.code)
			}
			if tc.code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", w.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestBlockedWaits: each reason's series is the longest current wait of
// an open pull request with that reason; a reason a pull request keeps
// keeps its start, one it loses stops counting, and a pull request that
// is done counts no more. Every reason has a series, 0 when unused.
func TestBlockedWaits(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := start
	m.Blocked.Now = func() time.Time { return now }

	m.Blocked.Set("acme/catalog", 1, []policy.Code{policy.CodeApprovalMissing, policy.CodeChecksPending})
	now = start.Add(time.Minute)
	m.Blocked.Set("Acme/Catalog", 2, []policy.Code{policy.CodeApprovalMissing})
	m.Blocked.Set("acme/catalog", 1, []policy.Code{policy.CodeApprovalMissing}) // pending no more
	now = start.Add(3 * time.Minute)
	m.Blocked.Set("acme/other", 1, nil) // nothing recorded: unexplained

	want := map[string]float64{"approval-missing": 180, "unexplained": 0, "checks-pending": 0, "retrying": 0}
	check := func() {
		t.Helper()
		got := gatherBlocked(t, reg)
		if len(got) != len(policy.Codes()) {
			t.Errorf("%d series, want one per code (%d): %v", len(got), len(policy.Codes()), got)
		}
		for reason, v := range want {
			if got[reason] != v {
				t.Errorf("%s{reason=%q} = %v, want %v", BlockedName, reason, got[reason], v)
			}
		}
	}
	check()
	if got := m.Blocked.Codes("acme/other", 1); len(got) != 1 || got[0] != policy.CodeUnexplained {
		t.Errorf("codes of a pull request set with none = %v, want unexplained", got)
	}

	now = start.Add(4 * time.Minute)
	m.Blocked.Done("ACME/catalog", 1)
	m.Blocked.Retain("acme/other", func(int) bool { return false })
	want = map[string]float64{"approval-missing": 180, "unexplained": 0}
	check()
	m.Blocked.Retain("acme/catalog", func(n int) bool { return n != 2 })
	want = map[string]float64{"approval-missing": 0}
	check()

	m.Blocked.Set("acme/kept", 1, []policy.Code{policy.CodeHold})
	m.Blocked.Set("acme/gone", 1, []policy.Code{policy.CodeRetrying})
	now = start.Add(5 * time.Minute)
	m.Blocked.RetainRepos(func(repo string) bool { return repo == "acme/kept" })
	want = map[string]float64{"hold": 60, "retrying": 0}
	check()
}

// gatherBlocked reads catalogbot_pr_blocked_seconds by reason.
func gatherBlocked(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != BlockedName {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}
