package egress

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Credentials returns a transport that sends an Authorization header only
// to the registry host it belongs to, or to a host of the same registrable
// domain (its token realm: auth.docker.io for index.docker.io); to any
// other host the request goes without it, and an OAuth2 token request's
// form goes without the identity token or password it carries.
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
	if sameOwner(c.registry, req.URL.Host) {
		return c.next.RoundTrip(req)
	}
	if req.Header.Get("Authorization") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	if isForm(req) {
		var err error
		if req, err = withoutSecrets(req); err != nil {
			return nil, err
		}
	}
	return c.next.RoundTrip(req)
}

// secretFields are the form fields of an OAuth2 token request that carry
// the user's credentials: go-containerregistry sends an identity token (a
// refresh token) in the POST form to the realm, not in a header.
var secretFields = []string{"refresh_token", "password", "username", "grant_type", "access_type"}

// maxFormBytes bounds the token request form read here: the client builds
// it from a scope and a service, a few hundred bytes.
const maxFormBytes = 64 << 10

func isForm(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return false
	}
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

// withoutSecrets is req with the credential fields removed from its form,
// so that a realm on another owner's host is asked anonymously.
func withoutSecrets(req *http.Request) (*http.Request, error) {
	data, err := io.ReadAll(io.LimitReader(req.Body, maxFormBytes+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > maxFormBytes {
		return nil, errors.New("token request form too large")
	}
	form, err := url.ParseQuery(string(data))
	if err != nil {
		return nil, errors.New("token request form does not parse")
	}
	for _, f := range secretFields {
		form.Del(f)
	}
	body := []byte(form.Encode())
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	return req, nil
}

// sameOwner reports whether the hosts a and b (host or host:port) are one
// host, or hosts of one registrable domain (eTLD+1 by the public suffix
// list, its private section included, so two customers of one hosting
// domain are not one owner).
func sameOwner(a, b string) bool {
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
