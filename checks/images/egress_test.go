package images_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
)

const someDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tokenRegistry is a registry stand-in whose every /v2/ request is
// challenged for a bearer token from realm, and that records the
// Authorization headers it is sent.
type tokenRegistry struct {
	*egresstest.Server
	mu    sync.Mutex
	auths []string
}

func newTokenRegistry(t *testing.T, realm func() string) *tokenRegistry {
	r := &tokenRegistry{}
	r.Server = egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		if !strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q,service="registry"`, realm()))
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	return r
}

func (r *tokenRegistry) sent(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.auths {
		if strings.Contains(a, s) {
			return true
		}
	}
	return false
}

// tokenService answers every request with a token and records the
// Authorization headers it is sent.
type tokenService struct {
	*egresstest.Server
	mu    sync.Mutex
	auths []string
	// bodies are the request bodies: an OAuth2 token request carries
	// the user's identity token in its form.
	bodies []string
}

func newTokenService(t *testing.T, token string) *tokenService {
	s := &tokenService{}
	s.Server = egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		s.auths = append(s.auths, req.Header.Get("Authorization"))
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		io.WriteString(w, `{"token": "`+token+`"}`)
	}))
	return s
}

// TestRealmOnAnInternalHost: an attacker's registry answers with a
// challenge whose token realm is a host name that resolves to an internal
// service. The realm is never fetched, so the service's answer never
// reaches the attacker, and the image is a policy failure that names the
// rule and quotes nothing the service or the registry said.
func TestRealmOnAnInternalHost(t *testing.T) {
	internal := newTokenService(t, "INTERNAL-SECRET")
	attacker := newTokenRegistry(t, func() string { return "http://internal.corp.test:" + internal.Port + "/token" })
	res := egresstest.Resolver{"registry.attacker.test": {"127.0.0.1"}, "internal.corp.test": {"127.0.0.1"}}
	// The attacker's registry lives on loopback here; the allowlist
	// stands it in for a host on the internet.
	rule, err := egress.New([]string{"registry.attacker.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	host := "registry.attacker.test:" + attacker.Port
	o := options(newFakeClock(), nil)
	o.Egress, o.Insecure = rule, []string{host}
	got := verifyOne(t, newVerifier(t, o), host+"/app@"+someDigest, images.KindRelated)

	if got.Class != registry.ClassPolicy || !strings.Contains(got.Message, "internal.corp.test") || !strings.Contains(got.Message, "allow-private-registry") {
		t.Errorf("result %s: %s; want a policy failure naming the realm host and the allowlist", got.Class, got.Message)
	}
	if strings.Contains(got.Message, internal.Port) || strings.Contains(got.Message, "INTERNAL-SECRET") {
		t.Errorf("the message quotes the internal service: %s", got.Message)
	}
	if n := internal.Conns(); n != 0 {
		t.Errorf("%d connections to the internal service, want 0", n)
	}
	if attacker.sent("INTERNAL-SECRET") {
		t.Error("the internal service's token reached the attacker's registry")
	}
	if attacker.Conns() == 0 {
		t.Error("the registry itself was not asked")
	}
}

// TestRealmOnAnAllowedInternalHost: the operator allowed an internal host
// for images on it, not as a token realm (or redirect) that another
// registry names: the realm is not fetched, so what it would answer never
// reaches the other registry.
func TestRealmOnAnAllowedInternalHost(t *testing.T) {
	internal := newTokenService(t, "INTERNAL-SECRET")
	attacker := newTokenRegistry(t, func() string { return "http://registry.corp.test:" + internal.Port + "/token" })
	res := egresstest.Resolver{"registry.attacker.test": {"127.0.0.1"}, "registry.corp.test": {"127.0.0.1"}}
	// registry.attacker.test stands in for a host on the internet;
	// registry.corp.test is the operator's own, allowed on purpose.
	rule, err := egress.New([]string{"registry.attacker.test", "registry.corp.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	host := "registry.attacker.test:" + attacker.Port
	o := options(newFakeClock(), nil)
	o.Egress, o.Insecure = rule, []string{host}
	got := verifyOne(t, newVerifier(t, o), host+"/app@"+someDigest, images.KindRelated)

	if got.Class != registry.ClassPolicy || !strings.Contains(got.Message, "registry.corp.test") {
		t.Errorf("result %s: %s; want a policy failure naming the realm host", got.Class, got.Message)
	}
	if n := internal.Conns(); n != 0 {
		t.Errorf("%d connections to the internal service, want 0", n)
	}
	if attacker.sent("INTERNAL-SECRET") {
		t.Error("the internal service's token reached the attacker's registry")
	}
}

// TestCredentialsNeverLeaveTheirRegistry: the user's credentials for a
// registry go to its token realm on the same registrable domain, and to
// no realm elsewhere that the registry names.
func TestCredentialsNeverLeaveTheirRegistry(t *testing.T) {
	tests := []struct {
		name, realmHost string
		// identity gives the user an identity token, which an OAuth2
		// token request sends in its form rather than in a header.
		identity bool
		wantAuth bool
	}{
		{"realm of the same domain", "auth.example.test", false, true},
		{"realm elsewhere", "auth.evil.test", false, false},
		{"identity token, realm of the same domain", "auth.example.test", true, true},
		{"identity token, realm elsewhere", "auth.evil.test", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			realm := newTokenService(t, "registry-token")
			reg := newTokenRegistry(t, func() string { return "http://" + tt.realmHost + ":" + realm.Port + "/token" })
			// Both hosts stand in for hosts on the internet: no egress
			// rule (which would refuse loopback, allowed or not, for a
			// realm elsewhere), names dialled on loopback. Credentials
			// are kept home with or without a rule.
			host := "registry.example.test:" + reg.Port
			o := options(newFakeClock(), nil)
			o.Transport, o.Insecure = loopbackTransport(), []string{host}
			o.Keychain = registry.ContainersKeychain(writeAuthFile(t, t.TempDir(), host, robot, secret))
			if tt.identity {
				o.Keychain = registry.ContainersKeychain(writeIdentityFile(t, host, secret))
			}
			verifyOne(t, newVerifier(t, o), host+"/app@"+someDigest, images.KindRelated)

			realm.mu.Lock()
			auths := strings.Join(realm.auths, "\n") + "\n" + strings.Join(realm.bodies, "\n")
			realm.mu.Unlock()
			if len(realm.auths) == 0 {
				t.Fatal("the realm was not asked for a token")
			}
			sent := strings.Contains(auths, "Basic ")
			if tt.identity {
				sent = strings.Contains(auths, secret)
			}
			if sent != tt.wantAuth {
				t.Errorf("credentials sent to realm %s: %v, want %v", tt.realmHost, sent, tt.wantAuth)
			}
			if !reg.sent("Bearer registry-token") {
				t.Error("the registry was not sent the realm's token")
			}
		})
	}
}

// TestTarpitRegistry: a registry that accepts connections and never
// answers costs one per-reference deadline: the references that met it
// first run out of time, and every other reference on it fails at once,
// naming it, while a registry beside it is checked as usual.
func TestTarpitRegistry(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	good := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v2/" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	res := egresstest.Resolver{"slow.test": {"127.0.0.1"}, "fine.test": {"127.0.0.1"}}
	rule, err := egress.New([]string{"slow.test", "fine.test"}, res)
	if err != nil {
		t.Fatal(err)
	}
	slow, fine := "slow.test:"+tarpit.Port, "fine.test:"+good.Port
	o := options(newFakeClock(), nil)
	o.Egress, o.Insecure = rule, []string{slow, fine}
	o.ReferenceTimeout = 300 * time.Millisecond
	v := newVerifier(t, o)
	var uses []images.Use
	for i := range 16 {
		uses = append(uses, images.Use{Image: fmt.Sprintf("%s/app%d@%s", slow, i, someDigest), Location: images.Location{Kind: images.KindRelated, File: "c.yaml", Line: i + 1}})
	}
	uses = append(uses, images.Use{Image: fine + "/other@" + someDigest, Location: images.Location{Kind: images.KindRelated, File: "c.yaml", Line: 99}})
	start := time.Now()
	results, err := v.VerifyUses(context.Background(), uses)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	waited, failedFast := 0, 0
	for _, r := range results {
		if strings.HasPrefix(r.Image, fine) {
			if r.Class == registry.ClassTransport {
				t.Errorf("the registry beside the tarpit failed too: %s", r.Message)
			}
			continue
		}
		if r.Class != registry.ClassTransport || !strings.Contains(r.Message, "slow.test") {
			t.Errorf("%s: %s %q, want transport naming slow.test", r.Image, r.Class, r.Message)
		}
		switch {
		case strings.Contains(r.Message, "limits.referenceTimeout"):
			waited++
		case strings.Contains(r.Message, "earlier in this check"):
			failedFast++
		}
	}
	// The registry's own concurrency bound lets its first references
	// wait together; every later one fails at once.
	if waited == 0 || waited > 4 || waited+failedFast != 16 {
		t.Errorf("%d references waited out the deadline and %d failed at once, want at most 4 and the rest", waited, failedFast)
	}
	// Only the first contact dials; the other repositories wait for
	// its outcome.
	if tarpit.Conns() > 2 {
		t.Errorf("%d connections to the tarpit, want at most 2 (one contact, 2 schemes)", tarpit.Conns())
	}
	// A generous bound: one deadline and overhead, far below the 16
	// deadlines (or 4 rounds of 4) a check without the breaker costs.
	if took > 10*o.ReferenceTimeout {
		t.Errorf("verification took %s", took)
	}
}

// writeIdentityFile writes a containers auth.json whose entry for key is an
// identity token.
func writeIdentityFile(t *testing.T, key, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auth.json")
	data := fmt.Sprintf(`{"auths": {%q: {"identitytoken": %q}}}`, key, token)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loopbackTransport dials every host name on 127.0.0.1, at the port asked.
func loopbackTransport() *http.Transport {
	return &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}}
}

// TestTarpitSharedAcrossChecks: two checks of one process name the same
// silent registry. With the process's Hosts, only the first contacts it
// and waits out its deadline; the second gives up on it after the bounded
// wait, pending (not invalid), without dialling; once the first has
// timed out, a third fails at once naming the host and when it is asked
// again. A registry beside it is checked as usual throughout.
func TestTarpitSharedAcrossChecks(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	good := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v2/" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	rule, err := egress.New([]string{"slow.test", "fine.test"}, egresstest.Resolver{"slow.test": {"127.0.0.1"}, "fine.test": {"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	slow, fine := "slow.test:"+tarpit.Port, "fine.test:"+good.Port
	hosts := registry.NewHosts(registry.HostsOptions{Wait: 100 * time.Millisecond, CoolDown: time.Minute})
	verify := func(n int) []images.Result {
		o := options(newFakeClock(), nil)
		o.Egress, o.Insecure, o.Hosts = rule, []string{slow, fine}, hosts
		o.ReferenceTimeout = time.Second
		var uses []images.Use
		for i := range n {
			uses = append(uses, images.Use{Image: fmt.Sprintf("%s/app%d@%s", slow, i, someDigest), Location: images.Location{Kind: images.KindRelated, File: "c.yaml", Line: i + 1}})
		}
		uses = append(uses, images.Use{Image: fine + "/other@" + someDigest, Location: images.Location{Kind: images.KindRelated, File: "c.yaml", Line: 99}})
		results, err := newVerifier(t, o).VerifyUses(context.Background(), uses)
		if err != nil {
			t.Fatal(err)
		}
		var onTarpit []images.Result
		for _, r := range results {
			switch {
			case !strings.HasPrefix(r.Image, fine):
				onTarpit = append(onTarpit, r)
			case r.Class == registry.ClassTransport:
				t.Errorf("the registry beside the tarpit failed too: %s", r.Message)
			}
		}
		return onTarpit
	}
	// The messages each check's references on the tarpit end with.
	said := func(results []images.Result) map[string]int {
		out := map[string]int{}
		for _, r := range results {
			if r.Class != registry.ClassTransport || !strings.Contains(r.Message, slow) {
				t.Errorf("%s: %s %q, want transport (pending) naming %s", r.Image, r.Class, r.Message, slow)
			}
			switch {
			case strings.Contains(r.Message, "limits.referenceTimeout"):
				out["waited"]++
			case strings.Contains(r.Message, "earlier in this check"):
				out["fast"]++
			case strings.Contains(r.Message, "busy with other checks"):
				out["busy"]++
			case strings.Contains(r.Message, "it is asked again after"):
				out["open"]++
			}
		}
		return out
	}

	first := make(chan []images.Result, 1)
	go func() { first <- verify(4) }()
	// The second check starts once the first is in contact with the
	// tarpit.
	for tarpit.Conns() == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	second := verify(4)
	tookSecond := time.Since(start)
	firstSaid, secondSaid := said(<-first), said(second)
	if firstSaid["waited"] == 0 || firstSaid["waited"]+firstSaid["fast"]+firstSaid["open"] != 4 {
		t.Errorf("first check: %v, want its references to wait out the deadline, or fail at once after it", firstSaid)
	}
	if secondSaid["busy"] != 4 {
		t.Errorf("second check: %v, want every reference not asked, the registry busy", secondSaid)
	}
	// The second check's wait is bounded by Hosts' wait, not by the
	// first check's deadline.
	if tookSecond >= time.Second {
		t.Errorf("the second check took %s, as long as the first check's deadline", tookSecond)
	}
	if c := tarpit.Conns(); c > 2 {
		t.Errorf("%d connections to the tarpit, want at most 2 (one contact, 2 schemes)", c)
	}
	third := said(verify(4))
	if third["open"] != 4 {
		t.Errorf("third check: %v, want every reference failed at once, naming when the host is asked again", third)
	}
	if status, trips := hosts.Status(); trips != 1 || len(status) != 1 || status[0].State != registry.Open {
		t.Errorf("hosts: %+v, %d trips; want the tarpit open, once", status, trips)
	}
}
