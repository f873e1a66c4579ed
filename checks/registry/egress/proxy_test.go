package egress

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
)

// TestProxyFromEnvironment: a proxy the environment names is the
// operator's, reached wherever it is; a target that resolves inward is
// refused before it is handed to the proxy, which would dial it.
func TestProxyFromEnvironment(t *testing.T) {
	proxy := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "via proxy "+r.URL.Host)
	}))
	proxyURL, _ := url.Parse("http://" + proxy.Addr)
	saved := proxyFromEnvironment
	proxyFromEnvironment = func(*http.Request) (*url.URL, error) { return proxyURL, nil }
	t.Cleanup(func() { proxyFromEnvironment = saved })

	rule, err := New(nil, egresstest.Resolver{"internal.test": {"10.0.0.7"}, "public.test": {"203.0.113.5"}})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rule.Transport(Timeouts{})}

	_, err = client.Get("http://internal.test/v2/")
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Kind != KindPrivate {
		t.Errorf("internal target through the proxy: %v, want refused as private", err)
	}
	if proxy.Conns() != 0 {
		t.Errorf("the proxy was handed an internal target")
	}
	resp, err := client.Get("http://public.test/v2/")
	if err != nil {
		t.Fatalf("public target through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "via proxy public.test" {
		t.Errorf("got %q from the proxy", body)
	}
}
