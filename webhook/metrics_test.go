package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
