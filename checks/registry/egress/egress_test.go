package egress_test

import (
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want egress.Kind // "" allowed
	}{
		{"127.0.0.1", egress.KindLoopback},
		{"127.255.0.9", egress.KindLoopback},
		{"::1", egress.KindLoopback},
		{"::ffff:127.0.0.1", egress.KindLoopback},
		{"10.1.2.3", egress.KindPrivate},
		{"172.16.0.1", egress.KindPrivate},
		{"172.31.255.255", egress.KindPrivate},
		{"192.168.1.1", egress.KindPrivate},
		{"::ffff:10.0.0.1", egress.KindPrivate},
		{"64:ff9b::a9fe:a9fe", egress.KindLinkLocal},
		{"64:ff9b::8.8.8.8", ""},
		{"169.254.169.254", egress.KindLinkLocal},
		{"::ffff:169.254.169.254", egress.KindLinkLocal},
		{"fe80::1", egress.KindLinkLocal},
		{"fc00::1", egress.KindUniqueLocal},
		{"fd00:ec2::254", egress.KindUniqueLocal},
		{"0.0.0.0", egress.KindUnspecified},
		{"0.1.2.3", egress.KindUnspecified},
		{"::", egress.KindUnspecified},
		{"100.64.0.1", egress.KindShared},
		{"100.127.255.254", egress.KindShared},
		{"224.0.0.1", egress.KindLinkLocal},
		{"239.1.2.3", egress.KindMulticast},
		{"ff02::1", egress.KindLinkLocal},
		{"ff05::1", egress.KindMulticast},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"100.128.0.1", ""},
		{"::ffff:8.8.8.8", ""},
		{"2001:4860:4860::8888", ""},
		// Local-use NAT64: the operator's gateways, whatever it carries.
		{"64:ff9b:1::a00:1", egress.KindReserved},
		{"64:ff9b:1:ffff::808:808", egress.KindReserved},
		{"64:ff9b:2::808:808", ""},
		// 6to4 carries its IPv4 address in bits 16 to 48.
		{"2002:a00:1::1", egress.KindPrivate},
		{"2002:7f00:1::", egress.KindLoopback},
		{"2002:a9fe:a9fe::1", egress.KindLinkLocal},
		{"2002:808:808::1", ""},
		// IPv4-compatible: the last 32 bits, :: and ::1 keeping their kinds.
		{"::10.0.0.1", egress.KindPrivate},
		{"::169.254.169.254", egress.KindLinkLocal},
		{"::127.0.0.2", egress.KindLoopback},
		{"::8.8.8.8", ""},
		// Teredo: the client address is the low 32 bits, inverted.
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", egress.KindPrivate},  // 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", egress.KindLoopback}, // 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", ""},                  // 8.8.8.8
		{"2001:db8::1", ""},
		// Reserved IPv4 blocks, alone and carried.
		{"198.18.0.1", egress.KindReserved},
		{"198.19.255.255", egress.KindReserved},
		{"198.20.0.1", ""},
		{"192.0.0.1", egress.KindReserved},
		{"192.0.0.170", egress.KindReserved},
		{"192.0.1.1", ""},
		{"240.0.0.1", egress.KindReserved},
		{"254.1.2.3", egress.KindReserved},
		{"255.255.255.255", egress.KindReserved},
		{"::ffff:255.255.255.255", egress.KindReserved},
		{"64:ff9b::c612:1", egress.KindReserved},
		{"2002:c612:1::", egress.KindReserved},
	}
	for _, tt := range tests {
		kind, bad := egress.Classify(netip.MustParseAddr(tt.ip))
		if kind != tt.want || bad != (tt.want != "") {
			t.Errorf("Classify(%s) = %q, %v; want %q", tt.ip, kind, bad, tt.want)
		}
	}
}

func TestAllowlistEntries(t *testing.T) {
	tests := []struct {
		entry string
		ok    bool
	}{
		{"mirror.internal", true},
		{"mirror.internal:5000", true},
		{"10.0.0.5", true},
		{"[fd00::1]:5000", true},
		{"fd00::1", true},
		{"", false},
		{"https://mirror.internal", false},
		{"mirror.internal/path", false},
		{"mirror.internal:", false},
		{"user@mirror.internal", false},
		{"mirror internal", false},
	}
	for _, tt := range tests {
		_, err := egress.New([]string{tt.entry}, egresstest.Resolver{})
		if (err == nil) != tt.ok {
			t.Errorf("New([%q]): err = %v, want ok %v", tt.entry, err, tt.ok)
		}
	}
	r, err := egress.New([]string{"Mirror.Internal", "other.internal:5000"}, egresstest.Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"mirror.internal": true, "mirror.internal:443": true, "MIRROR.internal:5000": true,
		"other.internal:5000": true, "other.internal:5001": false, "other.internal": false, "third.internal:5000": false,
	} {
		if got := r.Allowed(addr); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestTransportRefusesInternalTargets sends requests through the rule's
// transport to names the test resolver maps onto an internal service on
// loopback (or to addresses that must never be dialled), and counts the
// connections the service accepted.
func TestTransportRefusesInternalTargets(t *testing.T) {
	internal := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "INTERNAL-SECRET")
	}))
	// public stands in for a host on the internet (allowlisted, as it
	// lives on loopback here) that redirects its clients inward.
	public := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	res := egresstest.Resolver{
		"internal.test":       {"127.0.0.1"},
		"mapped.test":         {"::ffff:127.0.0.1"},
		"metadata.test":       {"169.254.169.254"},
		"ula.test":            {"fd00::1"},
		"mixed.test":          {"10.0.0.1", "127.0.0.1"},
		"public.test":         {"127.0.0.1"},
		"mirror.test":         {"127.0.0.1"},
		"mirror-on-port.test": {"127.0.0.1"},
	}
	allow := []string{"public.test", "mirror.test", "mirror-on-port.test:" + internal.Port}
	rule, err := egress.New(allow, res)
	if err != nil {
		t.Fatal(err)
	}
	to := func(host string) string { return "http://" + host + ":" + internal.Port + "/v2/" }
	tests := []struct {
		name, url string
		refused   egress.Kind // "" reaches the internal service
	}{
		{"name of loopback", to("internal.test"), egress.KindLoopback},
		{"loopback literal", "http://" + internal.Addr + "/v2/", egress.KindLoopback},
		{"IPv4-mapped loopback", to("mapped.test"), egress.KindLoopback},
		{"metadata service", "http://metadata.test/latest/meta-data/", egress.KindLinkLocal},
		{"metadata literal", "http://169.254.169.254/latest/meta-data/", egress.KindLinkLocal},
		{"unique-local", to("ula.test"), egress.KindUniqueLocal},
		{"every address internal", to("mixed.test"), egress.KindPrivate},
		{"redirect inward", "http://public.test:" + public.Port + "/?to=" + to("internal.test"), egress.KindLoopback},
		{"allowlisted host", to("mirror.test"), ""},
		{"allowlisted host:port", to("mirror-on-port.test"), ""},
	}
	client := &http.Client{Transport: rule.Transport(egress.Timeouts{Connect: time.Second})}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := internal.Conns()
			resp, err := client.Get(tt.url)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("GET %s: %v", tt.url, err)
				}
				resp.Body.Close()
				if internal.Conns() == before {
					t.Errorf("the allowlisted host was not contacted")
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s: %s, want refused", tt.url, resp.Status)
			}
			var refused *egress.RefusedError
			if !errors.As(err, &refused) || refused.Kind != tt.refused || !errors.Is(err, egress.ErrRefused) {
				t.Fatalf("GET %s: %v, want refused as %s", tt.url, err, tt.refused)
			}
			msg := refused.Error()
			if strings.Contains(msg, internal.Port) || !strings.HasSuffix(tt.name, "literal") && (strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "169.254")) {
				t.Errorf("the refusal quotes an address or port: %s", msg)
			}
			if !strings.Contains(msg, "--allow-private-registry") || !strings.Contains(msg, "allowPrivateRegistries") {
				t.Errorf("the refusal does not say how to allow the host: %s", msg)
			}
			if n := internal.Conns() - before; n != 0 {
				t.Errorf("%d connections to the internal service, want 0", n)
			}
		})
	}
}

// TestNilRuleContactsAnything: commands on their user's own input pass no
// rule and reach loopback as before.
func TestNilRuleContactsAnything(t *testing.T) {
	s := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	var rule *egress.Rule
	resp, err := (&http.Client{Transport: rule.Transport(egress.Timeouts{})}).Get("http://" + s.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.Conns() != 1 {
		t.Errorf("%d connections, want 1", s.Conns())
	}
}

// TestTimeouts: a server that never answers fails the request on the
// header timeout, and one that stops in the middle of a body fails the
// read on the idle timeout; a body that keeps moving is read whole.
func TestTimeouts(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	s := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, "start")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/stall" {
			<-stall
			return
		}
		for i := 0; i < 995; i += 199 {
			time.Sleep(10 * time.Millisecond)
			io.WriteString(w, strings.Repeat("x", 199))
			w.(http.Flusher).Flush()
		}
	}))
	rule, err := egress.New([]string{"127.0.0.1"}, egresstest.Resolver{})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rule.Transport(egress.Timeouts{Header: 100 * time.Millisecond, Idle: 2 * time.Second})}

	if _, err := client.Get("http://" + tarpit.Addr + "/v2/"); err == nil || !isTimeout(err) {
		t.Errorf("tarpit: %v, want a timeout", err)
	}
	resp, err := client.Get("http://" + s.Addr + "/trickle")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(body) != 1000 {
		t.Errorf("trickling body: %d bytes, %v; want all 1000", len(body), err)
	}

	idle := &http.Client{Transport: rule.Transport(egress.Timeouts{Idle: 100 * time.Millisecond})}
	resp, err = idle.Get("http://" + s.Addr + "/stall")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || !isTimeout(err) {
		t.Errorf("stalled body: %v, want a timeout", err)
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func TestSameOwner(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"index.docker.io", "auth.docker.io", true},
		{"index.docker.io", "auth.docker.io:443", true},
		{"registry.redhat.io", "sso.redhat.com", false},
		{"quay.io", "quay.io", true},
		{"registry.example.test:5000", "auth.example.test", true},
		{"registry.example.test", "auth.evil.test", false},
		{"alice.github.io", "bob.github.io", false},
		{"ghcr.io", "ghcr.io.evil.test", false},
		{"127.0.0.1:5000", "127.0.0.1:6000", true},
		{"127.0.0.1:5000", "127.0.0.2:5000", false},
		{"localhost:5000", "localhost", true},
		{"registry", "auth", false},
		{"[::1]:5000", "::1", true},
	}
	for _, tt := range tests {
		if got := egress.SameOwner(tt.a, tt.b); got != tt.want {
			t.Errorf("SameOwner(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestCredentialsStayHome: the Authorization header reaches the registry
// and its own realm, and nothing else.
func TestCredentialsStayHome(t *testing.T) {
	var got []string
	rec := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.Host+" "+r.Header.Get("Authorization"))
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	tr := egress.Credentials(rec, "registry.example.test")
	for _, u := range []string{"https://registry.example.test/v2/", "https://auth.example.test/token", "https://auth.evil.test/token"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Authorization", "Basic c2VjcmV0")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") == "" {
			t.Errorf("the caller's request to %s was changed", u)
		}
	}
	want := []string{"registry.example.test Basic c2VjcmV0", "auth.example.test Basic c2VjcmV0", "auth.evil.test "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestConfine: an allowed internal host is reached for its own images (or
// its owner's), never as another registry's realm or redirect; hosts the
// operator did not allow are left to the dialer.
func TestConfine(t *testing.T) {
	res := egresstest.Resolver{"registry.corp.test": {"10.0.0.5"}, "auth.corp.test": {"10.0.0.6"}, "cdn.example.test": {"203.0.113.9"}}
	rule, err := egress.New([]string{"registry.corp.test", "auth.corp.test", "cdn.example.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		registry, target string
		refused          bool
	}{
		{"registry.corp.test", "registry.corp.test", false},
		{"registry.corp.test:5000", "auth.corp.test:8443", false}, // one owner
		{"quay.example.test", "registry.corp.test", true},
		{"quay.example.test", "auth.corp.test:8443", true},
		{"quay.example.test", "cdn.example.test", false},   // allowed, and not internal
		{"quay.example.test", "other.example.test", false}, // not allowed: the dialer judges it
	}
	for _, tt := range tests {
		sent := false
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent = true
			return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
		})
		req, _ := http.NewRequest(http.MethodGet, "https://"+tt.target+"/token", nil)
		_, err := rule.Confine(next, tt.registry).RoundTrip(req)
		var refused *egress.RefusedError
		if got := errors.As(err, &refused); got != tt.refused || sent == tt.refused {
			t.Errorf("%s → %s: refused %v (%v), sent %v; want refused %v", tt.registry, tt.target, got, err, sent, tt.refused)
		}
	}
	if tr := (*egress.Rule)(nil).Confine(http.DefaultTransport, "quay.io"); tr != http.DefaultTransport {
		t.Error("a nil rule confines")
	}
}
