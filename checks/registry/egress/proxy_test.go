package egress

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
)

// TestProxy: a rule goes through the proxy the operator named, reached
// wherever it is, and refuses a target that resolves inward before it is
// handed to the proxy, which would dial it; a proxy only the environment
// names is refused, since it resolves the target again out of the rule's
// sight. Without a rule, the environment's proxy is used.
func TestProxy(t *testing.T) {
	proxy := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "via proxy "+r.URL.Host)
	}))
	proxyURL, _ := url.Parse("http://" + proxy.Addr)
	saved := proxyFromEnvironment
	proxyFromEnvironment = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
	t.Cleanup(func() { proxyFromEnvironment = saved })
	resolver := egresstest.Resolver{"internal.test": {"10.0.0.7"}, "public.test": {"203.0.113.5"}}

	viaProxy := func(t *testing.T, tr http.RoundTripper) {
		t.Helper()
		resp, err := (&http.Client{Transport: tr}).Get("http://public.test/v2/")
		if err != nil {
			t.Fatalf("public target through the proxy: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "via proxy public.test" {
			t.Errorf("got %q from the proxy", body)
		}
	}

	t.Run("named", func(t *testing.T) {
		rule, err := New(nil, resolver)
		if err != nil {
			t.Fatal(err)
		}
		if err := rule.UseProxy(proxyURL.String()); err != nil {
			t.Fatal(err)
		}
		before := proxy.Conns()
		_, err = (&http.Client{Transport: rule.Transport(Timeouts{})}).Get("http://internal.test/v2/")
		var refused *RefusedError
		if !errors.As(err, &refused) || refused.Kind != KindPrivate {
			t.Errorf("internal target through the proxy: %v, want refused as private", err)
		}
		if proxy.Conns() != before {
			t.Errorf("the proxy was handed an internal target")
		}
		viaProxy(t, rule.Transport(Timeouts{}))
	})
	t.Run("environment", func(t *testing.T) {
		rule, err := New(nil, resolver)
		if err != nil {
			t.Fatal(err)
		}
		before := proxy.Conns()
		_, err = (&http.Client{Transport: rule.Transport(Timeouts{})}).Get("http://public.test/v2/")
		var perr *ProxyError
		if !errors.As(err, &perr) || perr.Proxy != proxy.Addr {
			t.Errorf("a proxy only the environment names: %v, want a *ProxyError naming %s", err, proxy.Addr)
		}
		if proxy.Conns() != before {
			t.Errorf("the environment's proxy was used for a rule's request")
		}
	})
	t.Run("no rule", func(t *testing.T) {
		var rule *Rule
		viaProxy(t, rule.Transport(Timeouts{}))
	})
}

func TestUseProxy(t *testing.T) {
	tests := []struct {
		raw string
		ok  bool
	}{
		{"http://proxy.internal:3128", true},
		{"https://proxy.internal", true},
		{"http://10.0.0.1:3128/", true},
		{"proxy.internal:3128", false},
		{"socks5://proxy.internal:1080", false},
		{"http://user:pw@proxy.internal:3128", false},
		{"http://proxy.internal:3128/path", false},
		{"http://", false},
		{"", false},
	}
	for _, tt := range tests {
		rule, _ := New(nil, egresstest.Resolver{})
		if err := rule.UseProxy(tt.raw); (err == nil) != tt.ok {
			t.Errorf("UseProxy(%q) = %v, want ok %v", tt.raw, err, tt.ok)
		}
	}
}
