package egress

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Credentials returns a transport that sends an Authorization header only
// to the registry host it belongs to, or to a host of the same registrable
// domain (its token realm: auth.docker.io for index.docker.io); to any
// other host the request goes without it.
//
// go-containerregistry sends a registry's credentials to whatever token
// realm the registry's challenge names, so a registry that names a realm
// elsewhere would receive, through that realm, its user's credentials for
// another service. IP addresses and single-label names have no
// registrable domain: their credentials go to the same host alone.
// A legitimate registry whose realm sits under an unrelated domain is then
// asked anonymously, and says so with an authorization failure.
func Credentials(next http.RoundTripper, registry string) http.RoundTripper {
	return &credentials{next: next, registry: registry}
}

type credentials struct {
	next     http.RoundTripper
	registry string
}

func (c *credentials) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" && !SameOwner(c.registry, req.URL.Host) {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	return c.next.RoundTrip(req)
}

// SameOwner reports whether the hosts a and b (host or host:port) are one
// host, or hosts of one registrable domain (eTLD+1 by the public suffix
// list, its private section included, so two customers of one hosting
// domain are not one owner).
func SameOwner(a, b string) bool {
	ha, hb := hostname(a), hostname(b)
	if ha == hb {
		return true
	}
	da, ok := registrable(ha)
	if !ok {
		return false
	}
	db, ok := registrable(hb)
	return ok && da == db
}

func hostname(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// registrable is the registrable domain of host; ok is false for IP
// addresses and names that have none.
func registrable(host string) (string, bool) {
	if _, err := netip.ParseAddr(host); err == nil || !strings.Contains(host, ".") {
		return "", false
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	return d, err == nil
}
