package githubtest

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rateLimit is the primary rate limit the fake advertises, like an installation's.
const rateLimit = 5000

// Server is a fake GitHub: REST API, App authentication and git smart HTTP on one httptest.Server.
// Use s.URL+"/" as go-github's BaseURL.
type Server struct {
	*httptest.Server
	t testing.TB

	appID  int64
	key    *rsa.PrivateKey
	keyPEM []byte
	spec   *specValidator
	mux    *http.ServeMux
	start  time.Time

	mu              sync.Mutex
	clock           func() time.Time // nil is time.Now
	clockOffset     time.Duration
	nextID          int64
	repos           map[string]*Repo // by lower-case "owner/name"
	repoOrder       []*Repo
	installs        map[string]*installation // by lower-case account login
	installOrder    []*installation
	tokens          map[string]*token
	otherApps       map[string]*otherApp // by slug
	users           map[string]int64
	requests        []Request
	violations      []Violation
	faults          []fault
	outageUntil     time.Time // FailUntil's outage
	outageStatus    int
	rateUsed        int
	allowViolations bool
	hook            func(*http.Request, *Response)
	gitHook         func(*http.Request, string) // HookGit's
	// hooks are the receivers of the deliveries the fake makes on its
	// own (hooks.go).
	hooks sinks
}

// Request is one request the fake answered.
type Request struct {
	Method string
	Path   string // URL path without the query
	Query  string
	Status int
}

// Violation is a request or response that does not match GitHub's OpenAPI description.
type Violation struct {
	Method, Path string
	Kind         string // "request", "response" or "route" (no such operation)
	Err          string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s: %s does not match the OpenAPI description: %s", v.Method, v.Path, v.Kind, v.Err)
}

// Response is a reply as the fake is about to send it; a response hook may change it.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

type installation struct {
	id      int64
	account string
	repos   []*Repo
	created time.Time
}

type token struct {
	value   string
	inst    *installation
	expires time.Time
	// app is the App the token acts as: nil for the catalogbot App,
	// another App's for a token from OtherAppToken.
	app *otherApp
	// user is set for a user's token (UserToken): requests act as that
	// user rather than as the App.
	user string
}

// otherApp is a GitHub App other than catalogbot installed on the same
// account: what it writes (check runs) is labelled with its identity, as
// GitHub labels it, whatever name it gives.
type otherApp struct {
	id   int64
	slug string
}

type fault struct {
	status    int
	rateLimit bool // a secondary rate limit rather than an outage
}

// New starts a fake GitHub; it is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("githubtest: generating the App key: %v", err)
	}
	spec, err := loadSpec()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	s := &Server{
		t:         t,
		appID:     100000 + int64(time.Now().UnixNano()%900000),
		key:       key,
		keyPEM:    pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		spec:      spec,
		start:     time.Now(),
		nextID:    1000,
		repos:     map[string]*Repo{},
		installs:  map[string]*installation{},
		tokens:    map[string]*token{},
		otherApps: map[string]*otherApp{},
		users:     map[string]int64{},
	}
	s.mux = s.routes()
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// AppID is the GitHub App's id.
func (s *Server) AppID() int64 { return s.appID }

// AppSlug is the App's slug; the App's own comments and check runs are by "<slug>[bot]".
func (s *Server) AppSlug() string { return "catalogbot" }

// PrivateKeyPEM is the App's private key (PKCS#1 PEM), generated for this server.
func (s *Server) PrivateKeyPEM() []byte { return append([]byte(nil), s.keyPEM...) }

// InstallationID is the id of the App installation that holds r.
func (s *Server) InstallationID(r *Repo) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.installationOf(r.Owner).id
}

// Repo returns owner/name, or nil.
func (s *Server) Repo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(owner+"/"+name)]
}

// Requests lists the requests answered so far, oldest first (git requests included).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Violations lists the OpenAPI mismatches seen so far.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// AllowViolations stops OpenAPI mismatches from failing the test; they are still listed by
// Violations. For tests of the validation itself.
func (s *Server) AllowViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowViolations = true
}

// HookResponses calls f on every REST response before it is validated and sent.
func (s *Server) HookResponses(f func(*http.Request, *Response)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = f
}

// FailNext makes the next n REST requests fail with status (for example 502), as an outage would.
// Git requests are not affected.
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, fault{status: status})
	}
}

// FailUntil makes every REST request fail with status (for example 502)
// until the time until, as an outage of some length would, however many
// requests come meanwhile. Git requests are not affected.
func (s *Server) FailUntil(until time.Time, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outageUntil, s.outageStatus = until, status
}

// RateLimitNext makes the next n REST requests hit GitHub's secondary rate limit: 403 with
// Retry-After: 1, the x-ratelimit-* headers and GitHub's message and documentation_url.
func (s *Server) RateLimitNext(n int) { s.rateLimitNext(n, http.StatusForbidden) }

// TooManyRequestsNext is RateLimitNext answered with 429, which GitHub also uses for secondary
// rate limits.
func (s *Server) TooManyRequestsNext(n int) { s.rateLimitNext(n, http.StatusTooManyRequests) }

func (s *Server) rateLimitNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, fault{status: status, rateLimit: true})
	}
}

// Advance moves the fake's clock forward (installation tokens expire an hour after issue).
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clockOffset += d
}

// SetClock makes now the fake's clock (Advance still moves it on), for
// tests that move GitHub's clock and the service's together. Everything
// the fake stamps, its Date header included, is on this clock.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// Now is the fake's clock, to the second as GitHub's timestamps are.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now()
}

func (s *Server) now() time.Time {
	now := time.Now
	if s.clock != nil {
		now = s.clock
	}
	return now().Add(s.clockOffset).UTC().Truncate(time.Second)
}

func (s *Server) newID() int64 { s.nextID++; return s.nextID }

func (s *Server) userID(login string) int64 {
	key := strings.ToLower(login)
	if id, ok := s.users[key]; ok {
		return id
	}
	id := s.newID()
	s.users[key] = id
	return id
}

func (s *Server) installationOf(owner string) *installation {
	key := strings.ToLower(owner)
	if in := s.installs[key]; in != nil {
		return in
	}
	in := &installation{id: s.newID(), account: owner, created: s.now()}
	s.installs[key] = in
	s.installOrder = append(s.installOrder, in)
	return in
}

func (s *Server) installationByID(id int64) *installation {
	for _, in := range s.installOrder {
		if in.id == id {
			return in
		}
	}
	return nil
}

func (s *Server) violation(v Violation) {
	s.mu.Lock()
	s.violations = append(s.violations, v)
	allow := s.allowViolations
	s.mu.Unlock()
	if !allow {
		s.t.Errorf("githubtest: %s", v)
	}
}

// ServeHTTP answers git smart-HTTP requests and REST requests; REST requests and responses are
// validated against the OpenAPI description.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if owner, name, service, ok := gitPath(r.URL.Path); ok {
		status := s.serveGit(w, r, owner, name, service)
		s.record(r, status)
		return
	}
	// GraphQL is not in the REST description; the fake answers the one
	// mutation a bot needs there (mergequeue.go).
	if r.URL.Path == "/graphql" {
		s.record(r, s.serveGraphQL(w, r))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	// A JSON null body is no body to GitHub; ghinstallation sends one when asking for a token
	// without options.
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		body = nil
		r.ContentLength = 0
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	resp := &Response{Header: http.Header{}}
	op, verr := s.spec.findRoute(r)
	injected := false
	switch {
	case verr != nil:
		s.violation(Violation{Method: r.Method, Path: r.URL.Path, Kind: "route", Err: verr.Error()})
		writeError(resp, http.StatusNotFound, "Not Found")
	default:
		if err := s.spec.validateRequest(r, body, op); err != nil {
			s.violation(Violation{Method: r.Method, Path: r.URL.Path, Kind: "request", Err: err.Error()})
			writeError(resp, http.StatusUnprocessableEntity, "Invalid request.\n\n"+err.Error())
			injected = true // GitHub's 422 for a malformed request is not in every operation's description
			break
		}
		if f, ok := s.takeFault(); ok {
			s.faultResponse(resp, f)
			injected = true
			break
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		s.mu.Lock()
		s.mux.ServeHTTP(rec, r)
		s.mu.Unlock()
		resp.Status, resp.Header, resp.Body = rec.Code, rec.Header(), rec.Body.Bytes()
	}

	if r.Method == http.MethodGet && resp.Status == http.StatusOK {
		sum := sha256.Sum256(resp.Body)
		etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
		resp.Header.Set("ETag", etag)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			resp.Status, resp.Body = http.StatusNotModified, nil
			resp.Header.Del("Content-Type")
		}
	}
	s.setRateHeaders(resp)

	s.mu.Lock()
	// GitHub's clock, as the timestamps in the body are: the service
	// decides freshness on it.
	resp.Header.Set("Date", s.now().Format(http.TimeFormat))
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		hook(r, resp)
	}
	if verr == nil && !injected {
		if err := s.spec.validateResponse(r, body, op, resp); err != nil {
			s.violation(Violation{Method: r.Method, Path: r.URL.Path, Kind: "response", Err: err.Error()})
		}
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	if len(resp.Body) > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.Body)))
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
	s.record(r, resp.Status)
}

func (s *Server) record(r *http.Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: status})
}

func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, c := range strings.Split(header, ",") {
		c = strings.TrimSpace(c)
		if c == "*" || strings.TrimPrefix(c, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

func (s *Server) takeFault() (fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Now().Before(s.outageUntil) {
		return fault{status: s.outageStatus}, true
	}
	if len(s.faults) == 0 {
		return fault{}, false
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f, true
}

func (s *Server) faultResponse(resp *Response, f fault) {
	if !f.rateLimit {
		writeError(resp, f.status, http.StatusText(f.status))
		return
	}
	resp.Status = f.status
	resp.Header.Set("Retry-After", "1")
	resp.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp.Body, _ = json.Marshal(map[string]string{
		"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
		"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
	})
}

// setRateHeaders sends the x-ratelimit-* headers GitHub sends on every reply. A 304 does not count
// against the limit, as on GitHub.
func (s *Server) setRateHeaders(resp *Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if resp.Status != http.StatusNotModified && s.rateUsed < rateLimit {
		s.rateUsed++
	}
	h := resp.Header
	h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(rateLimit-s.rateUsed))
	h.Set("X-RateLimit-Used", strconv.Itoa(s.rateUsed))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.start.Add(time.Hour).Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("X-GitHub-Request-Id", fmt.Sprintf("%X:%X", s.start.UnixNano()&0xffff, len(s.requests)))
}

func writeError(resp *Response, status int, message string) {
	resp.Status = status
	resp.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp.Body, _ = json.Marshal(map[string]string{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

// bearer is the credential of an Authorization header ("token X" or "Bearer X").
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"token ", "Bearer ", "bearer "} {
		if strings.HasPrefix(h, p) {
			return strings.TrimSpace(h[len(p):])
		}
	}
	return ""
}

// verifyJWT checks an App JWT: RS256 signed by the App key, iss the App id, issued no later than a
// minute from now and expiring within ten minutes of issue, as GitHub requires.
func (s *Server) verifyJWT(tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return fmt.Errorf("JWT header: %w", err)
	}
	if header.Alg != "RS256" {
		return fmt.Errorf("JWT alg %q, want RS256", header.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("JWT signature: %w", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("JWT signature: %w", err)
	}
	var claims struct {
		Iss json.RawMessage `json:"iss"`
		Iat int64           `json:"iat"`
		Exp int64           `json:"exp"`
	}
	if err := decodeSegment(parts[1], &claims); err != nil {
		return fmt.Errorf("JWT claims: %w", err)
	}
	iss := strings.Trim(string(claims.Iss), `"`)
	if iss != strconv.FormatInt(s.appID, 10) {
		return fmt.Errorf("JWT iss %s, want %d", claims.Iss, s.appID)
	}
	now := time.Now().Unix()
	switch {
	case claims.Iat == 0 || claims.Exp == 0:
		return fmt.Errorf("JWT without iat or exp")
	case claims.Iat > now+60:
		return fmt.Errorf("JWT issued in the future")
	case claims.Exp <= now:
		return fmt.Errorf("JWT expired")
	case claims.Exp-claims.Iat > 11*60:
		return fmt.Errorf("JWT lives %ds, more than GitHub's 10 minutes", claims.Exp-claims.Iat)
	}
	return nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// newToken issues an installation token that expires in an hour.
func (s *Server) newToken(in *installation) *token {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	tk := &token{value: "ghs_" + hex.EncodeToString(b), inst: in, expires: s.now().Add(time.Hour)}
	s.tokens[tk.value] = tk
	return tk
}

// tokenApp is the other App a valid token acts as, nil for catalogbot's.
func (s *Server) tokenApp(value string) *otherApp {
	if tk := s.tokens[value]; tk != nil {
		return tk.app
	}
	return nil
}

// UserToken returns a token with which requests to r act as user, as a
// personal access token does: comments it edits are edited by user. It
// reaches r's installation's repositories only, which is all the fake
// models.
func (s *Server) UserToken(r *Repo, user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tk := s.newToken(s.installationOf(r.Owner))
	tk.user = user
	return tk.value
}

// actor is who a request with token value acts as: the token's user, or
// the App's bot for an installation token.
func (s *Server) actor(value string) string {
	if tk := s.tokens[value]; tk != nil && tk.user != "" {
		return tk.user
	}
	return s.AppSlug() + "[bot]"
}

// tokenInstallation is the installation of a valid installation token, or nil.
func (s *Server) tokenInstallation(value string) *installation {
	tk := s.tokens[value]
	if tk == nil || !s.now().Before(tk.expires) {
		return nil
	}
	return tk.inst
}

// ExpireTokens makes every issued installation token invalid, as if an hour had passed for them.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tk := range s.tokens {
		tk.expires = s.now().Add(-time.Second)
	}
}
