package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

// DefaultBaseURL is GitHub.com's REST API.
const DefaultBaseURL = "https://api.github.com/"

// Apps hands out GitHub clients for one GitHub App: the App itself,
// authenticated with a JWT signed by its private key, and each of its
// installations, authenticated with an installation token that is fetched
// when first needed and renewed before it expires. A client per
// installation is made once and reused, so its token is too.
type Apps struct {
	appID   int64
	baseURL *url.URL
	atr     *ghinstallation.AppsTransport
	app     *github.Client

	mu      sync.Mutex
	inst    map[int64]*installation
	mintErr error // the last mint's; see TokenError
}

// installation is the client of one installation. Its token transport is
// replaced when GitHub rejects the token it holds (401): ghinstallation
// renews a token only by our clock, so a token GitHub revoked, or one
// GitHub's clock, ahead of ours, finds expired, would otherwise be sent
// until our clock says it expired, every request failing meanwhile.
type installation struct {
	apps   *Apps
	id     int64
	client *github.Client

	mu sync.Mutex
	tr *ghinstallation.Transport
}

// NewApps parses the App's private key (PEM) and prepares its clients.
// baseURL is the REST API's base ("" for GitHub.com; GitHub Enterprise
// Server's is https://HOST/api/v3/), and base the transport every request
// goes through, normally a *Transport.
func NewApps(appID int64, privateKeyPEM []byte, baseURL string, base http.RoundTripper) (*Apps, error) {
	if appID <= 0 {
		return nil, fmt.Errorf("GitHub App: invalid app id %d", appID)
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(baseURL, "/") {
		baseURL += "/"
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GitHub App: invalid API base URL %q", baseURL)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	atr, err := ghinstallation.NewAppsTransport(base, appID, privateKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("GitHub App %d: private key: %w", appID, err)
	}
	// ghinstallation wants the base without the trailing slash; it adds
	// its own paths to it.
	atr.BaseURL = strings.TrimSuffix(baseURL, "/")
	a := &Apps{appID: appID, baseURL: u, atr: atr, inst: make(map[int64]*installation)}
	a.app = a.newClient(atr)
	return a, nil
}

func (a *Apps) newClient(tr http.RoundTripper) *github.Client {
	c := github.NewClient(&http.Client{Transport: tr})
	// Set directly rather than WithEnterpriseURLs, which would append
	// api/v3/ to any base that lacks it.
	base := *a.baseURL
	c.BaseURL = &base
	upload := *a.baseURL
	c.UploadURL = &upload
	return c
}

// AppID is the App's id.
func (a *Apps) AppID() int64 { return a.appID }

// App is the client authenticated as the App (JWT): for /app endpoints such
// as listing installations.
func (a *Apps) App() *github.Client { return a.app }

// Installation is the client of installation id.
func (a *Apps) Installation(id int64) (*github.Client, error) {
	in, err := a.installation(id)
	if err != nil {
		return nil, err
	}
	return in.client, nil
}

// InstallationToken returns a current token of installation id, for git
// over HTTPS (user "x-access-token").
func (a *Apps) InstallationToken(ctx context.Context, id int64) (string, error) {
	in, err := a.installation(id)
	if err != nil {
		return "", err
	}
	tok, err := in.token(ctx, in.transport())
	if err != nil {
		return "", fmt.Errorf("installation %d: token: %w", id, err)
	}
	return tok, nil
}

// RejectToken forgets installation id's token when it is still tok:
// GitHub refused it over git (revoked, or expired before its time), so
// the next use mints another, as a REST request's 401 makes it do.
func (a *Apps) RejectToken(ctx context.Context, id int64, tok string) {
	in, err := a.installation(id)
	if err != nil {
		return
	}
	tr := in.transport()
	if cur, err := tr.Token(ctx); err == nil && cur == tok {
		in.drop(tr)
	}
}

// TokenError is why the last attempt to mint an installation token
// failed, nil when it succeeded (or none was made yet): readiness.
func (a *Apps) TokenError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mintErr
}

func (a *Apps) installation(id int64) (*installation, error) {
	if id <= 0 {
		return nil, fmt.Errorf("GitHub App %d: invalid installation id %d", a.appID, id)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if in, ok := a.inst[id]; ok {
		return in, nil
	}
	in := &installation{apps: a, id: id}
	in.tr = in.newTransport()
	in.client = a.newClient(in)
	a.inst[id] = in
	return in, nil
}

func (in *installation) newTransport() *ghinstallation.Transport {
	tr := ghinstallation.NewFromAppsTransport(in.apps.atr, in.id)
	tr.BaseURL = in.apps.atr.BaseURL
	return tr
}

func (in *installation) transport() *ghinstallation.Transport {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.tr
}

// drop forgets tr's token, if tr is still the current transport: of many
// requests that met the same 401 at once, one makes the next mint.
func (in *installation) drop(tr *ghinstallation.Transport) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.tr == tr {
		in.tr = in.newTransport()
	}
}

// token is tr's token, minting one when it has none or it is near its
// expiry; the outcome of a mint is kept for TokenError.
func (in *installation) token(ctx context.Context, tr *ghinstallation.Transport) (string, error) {
	tok, err := tr.Token(ctx)
	if err != nil && ctx.Err() != nil {
		return "", err // ours, not GitHub's: says nothing of readiness
	}
	in.apps.mu.Lock()
	in.apps.mintErr = err
	in.apps.mu.Unlock()
	return tok, err
}

// RoundTrip sends req with the installation's token. A 401 drops the token
// and the request is sent once more with a newly minted one; a second 401
// is the caller's (webhook.Unauthorized: the job is tried again later).
func (in *installation) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := in.transport()
	if _, err := in.token(req.Context(), tr); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("installation %d: token: %w", in.id, err)
	}
	again := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !again {
		return resp, err
	}
	drain(resp)
	in.drop(tr)
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		if retry.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	tr = in.transport()
	if _, err := in.token(req.Context(), tr); err != nil {
		if retry.Body != nil {
			retry.Body.Close()
		}
		return nil, fmt.Errorf("installation %d: token: %w", in.id, err)
	}
	return tr.RoundTrip(retry)
}
