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

	mu   sync.Mutex
	inst map[int64]*installation
}

type installation struct {
	tr     *ghinstallation.Transport
	client *github.Client
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
	tok, err := in.tr.Token(ctx)
	if err != nil {
		return "", fmt.Errorf("installation %d: token: %w", id, err)
	}
	return tok, nil
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
	tr := ghinstallation.NewFromAppsTransport(a.atr, id)
	tr.BaseURL = a.atr.BaseURL
	in := &installation{tr: tr, client: a.newClient(tr)}
	a.inst[id] = in
	return in, nil
}
