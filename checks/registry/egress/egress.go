// Package egress is the rule for network access that pull request data
// steers: which addresses a registry client may dial when the registry
// host, its token realm or a redirect was named by a pull request, how
// long each step of a request may take, and where credentials may go.
//
// A pull request can name any registry host. Left alone, the service
// would contact whatever the host resolves to: a loopback port, an
// internal service, the cloud metadata endpoint. The Rule refuses
// loopback, private, link-local, unique-local, shared (CGNAT), multicast,
// unspecified and reserved addresses, and the IPv6 forms that carry one
// (IPv4-mapped, NAT64, 6to4, Teredo, IPv4-compatible), unless the operator
// allowlisted the host. It checks the address actually dialled,
// in the dialer's Control hook, so a name that resolves differently the
// second time (DNS rebinding), a redirect or a token realm naming an
// internal host gains nothing: every connection of the transport passes
// the same hook.
//
// Credentials is the other half: an Authorization header leaves only for
// the registry it belongs to, or a host of the same registrable domain
// (index.docker.io and its realm auth.docker.io), never for a realm or
// redirect elsewhere.
//
// It is a leaf: it imports nothing of catalogbot.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kind is the kind of address the rule refuses.
type Kind string

const (
	KindLoopback    Kind = "loopback"
	KindPrivate     Kind = "private (RFC 1918)"
	KindLinkLocal   Kind = "link-local"
	KindUniqueLocal Kind = "unique-local"
	KindUnspecified Kind = "unspecified"
	KindShared      Kind = "shared (carrier-grade NAT)"
	KindMulticast   Kind = "multicast"
	// KindReserved is an address no registry has: the benchmarking,
	// IETF protocol, future-use and broadcast blocks, and the local-use
	// NAT64 prefix, whose gateways are the operator's own.
	KindReserved Kind = "reserved"
)

var (
	sharedPrefix = netip.MustParsePrefix("100.64.0.0/10")
	// The unique-local block is fc00::/7; netip's IsPrivate covers it
	// together with RFC 1918, which the rule names apart.
	uniqueLocalPrefix = netip.MustParsePrefix("fc00::/7")
	// 0.0.0.0/8 is "this network": Linux dials 0.0.0.0 as loopback.
	thisNetworkPrefix = netip.MustParsePrefix("0.0.0.0/8")
	// The NAT64 well-known prefix carries an IPv4 address in its last 32
	// bits, which a NAT64 gateway dials.
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	// The local-use NAT64 prefix (RFC 8215) is translated by the
	// operator's own gateways, at a prefix length only they know: refused
	// whole, whatever address it seems to carry.
	nat64LocalPrefix = netip.MustParsePrefix("64:ff9b:1::/48")
	// 6to4 (RFC 3056) carries an IPv4 address in bits 16 to 48, which a
	// 6to4 relay dials.
	sixToFourPrefix = netip.MustParsePrefix("2002::/16")
	// Teredo (RFC 4380) carries the client's IPv4 address, inverted, in
	// its low 32 bits.
	teredoPrefix = netip.MustParsePrefix("2001::/32")
	// IPv4-compatible addresses (::a.b.c.d, deprecated by RFC 4291) are
	// still routed to the IPv4 address by a host with an automatic
	// tunnel; :: and ::1 are in this block too and keep their own kinds.
	compatPrefix = netip.MustParsePrefix("::/96")
	// Blocks no registry lives in: benchmarking (RFC 2544), IETF protocol
	// assignments (RFC 6890, DS-Lite's 192.0.0.0/29 among them), and the
	// future-use block with the limited broadcast address at its top.
	reservedPrefixes = []netip.Prefix{
		netip.MustParsePrefix("198.18.0.0/15"),
		netip.MustParsePrefix("192.0.0.0/24"),
		netip.MustParsePrefix("240.0.0.0/4"),
	}
)

// embedded is the IPv4 address a gateway, relay or tunnel would dial for
// ip: the address it carries when it is IPv4-mapped, NAT64, 6to4, Teredo
// or IPv4-compatible, and ip itself otherwise.
func embedded(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if !ip.Is6() {
		return ip
	}
	b := ip.As16()
	switch {
	case nat64Prefix.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:]))
	case sixToFourPrefix.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6]))
	case teredoPrefix.Contains(ip):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	case compatPrefix.Contains(ip) && !ip.IsUnspecified() && !ip.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:]))
	}
	return ip
}

// classify says whether ip is an address pull request data must not reach,
// and which kind it is. An IPv6 address that carries an IPv4 address is
// judged as the address it carries, as the kernel, gateway or relay dials
// it: IPv4-mapped (::ffff:10.0.0.1), NAT64 (64:ff9b::10.0.0.1), 6to4
// (2002:0a00:0001::), Teredo and IPv4-compatible (::10.0.0.1).
func classify(ip netip.Addr) (Kind, bool) {
	if nat64LocalPrefix.Contains(ip) {
		return KindReserved, true
	}
	ip = embedded(ip)
	for _, p := range reservedPrefixes {
		if p.Contains(ip) {
			return KindReserved, true
		}
	}
	switch {
	case ip.IsLoopback():
		return KindLoopback, true
	case ip.IsUnspecified(), ip.Is4() && thisNetworkPrefix.Contains(ip):
		return KindUnspecified, true
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return KindLinkLocal, true
	case uniqueLocalPrefix.Contains(ip):
		return KindUniqueLocal, true
	case ip.IsPrivate():
		return KindPrivate, true
	case sharedPrefix.Contains(ip):
		return KindShared, true
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return KindMulticast, true
	}
	return "", false
}

// Resolver looks names up; *net.Resolver is one. Tests give a Rule their
// own, so that no external name is ever resolved.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// RefusedError is a connection the rule did not make.
type RefusedError struct {
	// Host is the host the request named, as it named it (a registry, a
	// token realm or a redirect target).
	Host string
	Kind Kind
	// Registry, when set, is the registry whose token realm or redirect
	// named Host, which the operator allowed for its own images only.
	Registry string
}

func (e *RefusedError) Error() string {
	if e.Registry != "" {
		return fmt.Sprintf("host %s is a %s address allowed for its own images only, and registry %s named it as a token realm or redirect; "+
			"checks of pull requests do not follow it there", e.Host, e.Kind, e.Registry)
	}
	what := "resolves to"
	if _, err := netip.ParseAddr(strings.Trim(e.Host, "[]")); err == nil {
		what = "is"
	}
	return fmt.Sprintf("host %s %s a %s address, which checks of pull requests do not contact; "+
		"an operator who trusts it can allow it (check --allow-private-registry %s, or allowPrivateRegistries in the service configuration)",
		e.Host, what, e.Kind, e.Host)
}

// errRefused matches every *RefusedError with errors.Is.
var errRefused = errors.New("refused by the egress rule")

func (e *RefusedError) Is(target error) bool { return target == errRefused }

// Rule decides which addresses may be dialled. A nil *Rule allows every
// address: commands that work on their user's own input (images verify,
// render, assemble, publish) contact what it names.
type Rule struct {
	allow    map[string]bool
	resolver Resolver
	// proxy is the forward proxy the operator named; nil sends every
	// request directly.
	proxy *url.URL
}

// UseProxy has every request of the rule's transports go through the
// forward proxy raw (http://host:port or https://host:port), which the
// operator names: the rule then checks each target by name before it is
// handed to the proxy, which resolves it again where no dialer hook sees.
// Without it, a proxy the environment names (HTTPS_PROXY) is refused: an
// environment set up for other work does not silently widen what pull
// request data reaches.
func (r *Rule) UseProxy(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("registry proxy %q: want http://HOST[:PORT] or https://HOST[:PORT]", raw)
	}
	r.proxy = u
	return nil
}

// ProxyError is a request not sent because the environment names a proxy
// for it that the operator did not name to the rule.
type ProxyError struct {
	// Proxy is the proxy's host:port, as the environment named it.
	Proxy string
}

func (e *ProxyError) Error() string {
	return fmt.Sprintf("the environment names proxy %s (HTTPS_PROXY, HTTP_PROXY), which checks of pull requests use only when the operator names it "+
		"(check --registry-proxy, or registryProxy in the service configuration): the proxy resolves each target again, where the egress rule cannot see the address", e.Proxy)
}

// New returns the rule that refuses internal addresses except for the hosts
// in allow, each a host or host:port (a host allows every port). resolver
// looks names up; nil is net.DefaultResolver.
func New(allow []string, resolver Resolver) (*Rule, error) {
	r := &Rule{allow: map[string]bool{}, resolver: resolver}
	if r.resolver == nil {
		r.resolver = net.DefaultResolver
	}
	for _, h := range allow {
		key, err := allowKey(h)
		if err != nil {
			return nil, err
		}
		r.allow[key] = true
	}
	return r, nil
}

// allowKey checks an allowlist entry and returns it in the form Allowed
// looks it up in.
func allowKey(h string) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("private registry %q: want a host or host:port, without scheme or path", h)
	}
	if h == "" || strings.ContainsAny(h, "/ \t@?#") {
		return bad()
	}
	host, port := h, ""
	if hp, p, err := net.SplitHostPort(h); err == nil {
		host, port = hp, p
		if port == "" {
			return bad()
		}
	} else if strings.Count(h, ":") == 1 {
		return bad()
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return bad()
	}
	if port == "" {
		return host, nil
	}
	return net.JoinHostPort(host, port), nil
}

// Allowed reports whether the operator allowlisted addr (host or
// host:port): every address it resolves to may be dialled.
func (r *Rule) Allowed(addr string) bool {
	if r == nil {
		return true
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, ""
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	return r.allow[host] || port != "" && r.allow[net.JoinHostPort(host, port)]
}

// Timeouts bound the steps of one request. Zero fields take
// defaultTimeouts' values.
type Timeouts struct {
	// Connect bounds the TCP connection, TLS bounds the handshake, and
	// Header the wait for the response headers once the request is sent.
	Connect, TLS, Header time.Duration
	// Idle bounds the time a connection may go without a byte moving
	// while a request is under way: a registry that starts a body and
	// then stalls is cut off, one that keeps sending is not.
	Idle time.Duration
}

// defaultTimeouts are the bounds of every request of a pull request check.
var defaultTimeouts = Timeouts{Connect: 10 * time.Second, TLS: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second}

func (t Timeouts) orDefault() Timeouts {
	pick := func(v, d time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return d
	}
	return Timeouts{
		Connect: pick(t.Connect, defaultTimeouts.Connect),
		TLS:     pick(t.TLS, defaultTimeouts.TLS),
		Header:  pick(t.Header, defaultTimeouts.Header),
		Idle:    pick(t.Idle, defaultTimeouts.Idle),
	}
}

// Transport returns an HTTP transport whose every connection passes the
// rule (none is refused for a nil rule), with the timeouts t. A nil rule
// uses proxies from the environment (HTTPS_PROXY) as http.DefaultTransport
// does. A rule uses only the proxy the operator named with UseProxy, which
// may be internal, and checks the target handed to it by name first; a
// proxy the environment names is refused with a *ProxyError.
func (r *Rule) Transport(t Timeouts) *http.Transport {
	t = t.orDefault()
	d := &dialer{rule: r, timeouts: t, proxies: map[string]bool{}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = d.DialContext
	tr.DialTLSContext = nil
	tr.Proxy = d.proxy
	tr.TLSHandshakeTimeout = t.TLS
	tr.ResponseHeaderTimeout = t.Header
	tr.ExpectContinueTimeout = time.Second
	return tr
}

// proxyFromEnvironment is http.ProxyFromEnvironment; tests replace it, as
// the standard library reads the environment once per process.
var proxyFromEnvironment = http.ProxyFromEnvironment

type dialer struct {
	rule     *Rule
	timeouts Timeouts

	mu      sync.Mutex
	proxies map[string]bool // proxy host:port the environment named
}

// proxy picks the proxy of req: the environment's without a rule, the one
// the operator named with a rule. The target is checked by name before it
// is handed to a proxy: the proxy dials it, not this process, so there is
// no dialled address of its own to check. The proxy resolves the name
// again, and may get another answer; that is why a rule takes only a proxy
// the operator chose, one that can be trusted to apply its own rule.
func (d *dialer) proxy(req *http.Request) (*url.URL, error) {
	var u *url.URL
	if d.rule != nil && d.rule.proxy != nil {
		u = d.rule.proxy
	} else {
		env, err := proxyFromEnvironment(req)
		if err != nil || env == nil {
			return env, err
		}
		if d.rule != nil {
			return nil, &ProxyError{Proxy: env.Host}
		}
		u = env
	}
	if d.rule != nil && !d.rule.Allowed(req.URL.Host) {
		ips, err := d.lookup(req.Context(), req.URL.Hostname())
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if kind, bad := classify(ip); bad {
				return nil, &RefusedError{Host: req.URL.Hostname(), Kind: kind}
			}
		}
	}
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	d.mu.Lock()
	d.proxies[addr] = true
	d.mu.Unlock()
	return u, nil
}

// lookup resolves host through the rule's resolver (the system's without
// a rule). It judges nothing: the addresses are judged as they are
// dialled.
func (d *dialer) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	var res Resolver = net.DefaultResolver
	if d.rule != nil {
		res = d.rule.resolver
	}
	return lookup(ctx, res, host)
}

func lookup(ctx context.Context, res Resolver, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	return res.LookupNetIP(ctx, "ip", host)
}

// Confine returns a transport for the requests about registry's images:
// the operator's allowlist lets them reach an allowed internal host only
// when it is that registry or of its owner (sameOwner). An allowed host is
// trusted for the images on it; a token realm or redirect that another
// registry names there would have the service fetch from an internal host
// what that registry then receives (a token, a manifest), so it is judged
// like any other host. A nil rule confines nothing.
func (r *Rule) Confine(next http.RoundTripper, registry string) http.RoundTripper {
	if r == nil {
		return next
	}
	return &confined{rule: r, next: next, registry: registry}
}

type confined struct {
	rule     *Rule
	next     http.RoundTripper
	registry string
}

func (c *confined) RoundTrip(req *http.Request) (*http.Response, error) {
	if c.rule.Allowed(req.URL.Host) && !sameOwner(c.registry, req.URL.Host) {
		ips, err := lookup(req.Context(), c.rule.resolver, req.URL.Hostname())
		if err == nil {
			for _, ip := range ips {
				if kind, bad := classify(ip); bad {
					err = &RefusedError{Host: req.URL.Hostname(), Kind: kind, Registry: c.registry}
					break
				}
			}
		}
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, err
		}
	}
	return c.next.RoundTrip(req)
}

// DialContext dials addr (host:port) at the first of its addresses that
// answers and that the rule lets it dial. When the rule refuses them all,
// the error is a *RefusedError, which quotes no address.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := d.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	nd := &net.Dialer{Timeout: d.timeouts.Connect, KeepAlive: 30 * time.Second}
	d.mu.Lock()
	proxy := d.proxies[addr]
	d.mu.Unlock()
	// The operator's own hosts are dialled whatever they resolve to: a
	// proxy from the environment, or a host the configuration allows.
	if d.rule != nil && !proxy && !d.rule.Allowed(addr) {
		nd.Control = d.rule.control(host)
	}
	var first error
	for _, ip := range ips {
		c, err := nd.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
		if err == nil {
			return &idleConn{Conn: c, idle: d.timeouts.Idle}, nil
		}
		var refused *RefusedError
		if errors.As(err, &refused) {
			// Reported as the rule's, not the dialer's, so that
			// the address is not quoted.
			err = refused
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first == nil {
		first = &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
	}
	return nil, first
}

// control is the dialer's last word on the address it is about to
// connect to: whatever resolved it and however, an internal address is
// not dialled.
func (r *Rule) control(host string) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &RefusedError{Host: host, Kind: KindUnspecified}
		}
		if kind, bad := classify(ap.Addr()); bad {
			return &RefusedError{Host: host, Kind: kind}
		}
		return nil
	}
}

// idleConn gives every read and write a fresh deadline: a peer that stops
// sending or receiving for idle is cut off, one that keeps the bytes
// moving is not (the per-reference deadline bounds the whole).
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.idle)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}
