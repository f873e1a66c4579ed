package webhook

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "sigs.k8s.io/yaml/goyaml.v3"

	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/yamlnode"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/sign/keyref"
)

// Config defaults.
const (
	DefaultListen         = ":8080"
	DefaultMetricsAddr    = "127.0.0.1:9090"
	DefaultResyncInterval = 10 * time.Minute
	DefaultGitHubURL      = "https://api.github.com/"

	// MinSecretLen is the shortest webhook secret accepted. The secret is
	// all that stands between the internet and a merge.
	MinSecretLen = 16
	// DefaultProposeInterval is how often the App polls the bundle
	// repositories the policies watch (propose:): a new tag becomes an
	// open pull request within this plus one round's work
	// (docs/proposals.md has the figures). MinProposeInterval keeps the
	// polls from spending registries' and GitHub's quotas.
	DefaultProposeInterval = time.Minute
	MinProposeInterval     = 10 * time.Second
	// DefaultUnplacedAfter is how long a release may be seen without a
	// catalog entry or an open proposal before the alarm
	// (catalogbot_bundle_unplaced_seconds) shows it.
	DefaultUnplacedAfter = time.Hour

	// MinResyncInterval keeps resync from spending the installation's API
	// quota on listing pull requests.
	MinResyncInterval = 30 * time.Second

	// DefaultPendingRetries is how often a check that could not judge
	// (a registry rate limited, timed out or could not be reached) is
	// tried again before it fails; DefaultPendingBackoff the wait before
	// the first retry, which doubles with each retry up to
	// MaxPendingBackoff. Six retries from one minute wait about an hour
	// in all.
	DefaultPendingRetries = 6
	DefaultPendingBackoff = time.Minute
	MaxPendingBackoff     = 30 * time.Minute
	// MinPendingBackoff keeps retries from hammering a registry that is
	// down or rate limiting.
	MinPendingBackoff = time.Second

	// DefaultRegistryHostConcurrency bounds the contacts with one
	// registry host under way at once across every job of the process;
	// DefaultRegistryHostWait how long a check with no contact of its
	// own waits for one of them before it yields (pending, tried again
	// later); DefaultRegistryCoolDown how long a host that did not answer
	// is not asked (doubling per failed probe, up to 10 minutes). See
	// registry.Hosts.
	DefaultRegistryHostConcurrency = registry.DefaultHostContacts
	DefaultRegistryHostWait        = registry.DefaultHostWait
	DefaultRegistryCoolDown        = registry.DefaultCoolDown
)

// Environment variables that override the file. Secrets never need to be
// in the file.
const (
	EnvWebhookSecret  = "CATALOGBOT_WEBHOOK_SECRET"  // one secret
	EnvWebhookSecrets = "CATALOGBOT_WEBHOOK_SECRETS" // comma separated, for rotation
	EnvAppID          = "CATALOGBOT_APP_ID"
	EnvPrivateKey     = "CATALOGBOT_PRIVATE_KEY" // PEM text
	EnvPrivateKeyFile = "CATALOGBOT_PRIVATE_KEY_FILE"
	EnvMetricsToken   = "CATALOGBOT_METRICS_TOKEN" // bearer token /metrics asks for
	// EnvRegistryHookSecret is the shared secret of /hooks/registry;
	// unset, the endpoint is off.
	EnvRegistryHookSecret = "CATALOGBOT_REGISTRY_HOOK_SECRET"
	// EnvDatabaseURL is the PostgreSQL database replicas share
	// (postgres://user:password@host:port/db): a credential, so it is
	// read from the environment only.
	EnvDatabaseURL = "CATALOGBOT_DATABASE_URL"
)

// Config is the configuration of catalogbot serve (--config FILE, YAML).
type Config struct {
	AppID          int64
	PrivateKeyFile string
	PrivateKey     []byte // from the environment only; wins over PrivateKeyFile
	WebhookSecrets []string
	Listen         string
	// MetricsAddr is the listener of GET /metrics, apart from Listen:
	// loopback by default, so that only the host (or the pod) reads it.
	MetricsAddr string
	// MetricsToken, from the environment only, is the bearer token
	// /metrics asks for; set it when MetricsAddr is reachable from a
	// network.
	MetricsToken   string
	Workers        int
	MaxPending     int
	ResyncInterval time.Duration
	DedupeTTL      time.Duration
	ReplayWindow   time.Duration // how long a delivery's body, done, is still a replay under a new id
	GitHubURL      string        // REST API base, ending in /; default https://api.github.com/ (GHES, tests)
	CacheDir       string        // git object cache; "" = a temporary directory
	// StateDir holds the embedded state (one SQLite file): the work queue
	// and what deliveries told the App, kept across restarts; "" is
	// $XDG_STATE_HOME/catalogbot (~/.local/state/catalogbot). Unused when
	// DatabaseURL is set.
	StateDir string
	// DatabaseURL, from the environment only, is the PostgreSQL state
	// that several replicas share.
	DatabaseURL string
	// LeaseTTL is how long a replica may go without renewing the lease
	// of a job it runs before another replica takes the job over: the
	// bound on the takeover after a replica dies. 0 is the default (30s).
	LeaseTTL time.Duration
	// GitHubTimeout bounds each attempt of a GitHub API request, from
	// sending it to the last byte of the answer; an attempt past it is
	// given up and sent again. 0 is the default (30s).
	GitHubTimeout time.Duration
	Bots          []string // extra logins whose comments never count

	// PendingRetries and PendingBackoff say how a check that could not
	// judge is tried again: PendingRetries times, the first after
	// PendingBackoff, each wait twice the one before up to
	// MaxPendingBackoff (or PendingBackoff, if longer). Until then its
	// check run stays in progress; after the last retry it fails. Zero
	// values mean the defaults.
	PendingRetries int
	PendingBackoff time.Duration

	// AllowPrivateRegistries are the registry hosts (host or host:port)
	// that pull request checks may reach although they resolve to
	// loopback, private, link-local or unique-local addresses: an internal
	// mirror the operator trusts. Every other such host is refused.
	AllowPrivateRegistries []string
	// RegistryProxy is the forward proxy (http://host:port) pull request
	// checks reach registries through; empty means directly. A proxy the
	// environment names (HTTPS_PROXY) is not used for them: the proxy
	// resolves each target again, out of the egress rule's sight, so only
	// one the operator chose here is trusted with that.
	RegistryProxy string

	// RegistryHostConcurrency, RegistryHostWait and RegistryCoolDown
	// shape the process's bound on each registry host and its circuit
	// breaker (registry.Hosts; defaults above): a registry named by pull
	// requests that never answers holds at most one worker for one
	// deadline, then fails its references at once until the cool-down
	// ends, and at most Workers-1 checks are in contact with one host at
	// once, so one slow host never holds every worker.
	RegistryHostConcurrency int
	RegistryHostWait        time.Duration
	RegistryCoolDown        time.Duration

	Publish PublishConfig

	// ProposeInterval is how often the App polls the bundle repositories
	// the repositories' policies watch (propose:); negative turns the
	// App's proposals off. UnplacedAfter is when a release seen without
	// a catalog entry or an open proposal shows in the alarm metric.
	ProposeInterval time.Duration
	UnplacedAfter   time.Duration
	// RegistryHookSecret, from the environment only, is the shared
	// secret /hooks/registry asks registries' push notifications for;
	// "" turns the endpoint off.
	RegistryHookSecret string
}

// RegistryHosts returns the options of the process's registry.Hosts: at
// most Workers-1 checks in contact with one host (one with a single
// worker), so that a host that turns slow leaves a worker for the rest.
func (c *Config) RegistryHosts() registry.HostsOptions {
	return registry.HostsOptions{
		Contacts: c.RegistryHostConcurrency,
		Holders:  max(c.Workers-1, 1),
		Wait:     c.RegistryHostWait,
		CoolDown: c.RegistryCoolDown,
	}
}

// PublishConfig holds the credentials the publisher alone uses.
type PublishConfig struct {
	// AuthFile is an auth file ({"auths": ...}: a containers auth.json or
	// a docker config.json) read first, where $REGISTRY_AUTH_FILE would
	// be; the rest of the keychain (registry.Keychain) follows it.
	AuthFile string
	Insecure []string // registries reached over plain http
	// SignKey is the cosign private key file the App signs published
	// images with when a repository's policy says publish.sign: key, its
	// password in the App's $COSIGN_PASSWORD; or a KMS reference as
	// cosign names them (hashivault://KEY, awskms:///ARN through a
	// sigstore KMS plugin), whose private key stays in the service.
	SignKey string
	// FulcioURL is the Fulcio instance for publish.sign: keyless, which
	// needs an OIDC token the App does not have outside GitHub Actions;
	// "" means sigstore's public instance.
	FulcioURL string
	// TlogUpload says whether every signature and attestation is
	// uploaded to the Rekor transparency log at RekorURL, as cosign
	// does by default (true unless the file says false); "" means
	// sigstore's public log. An upload that fails fails the publish.
	TlogUpload bool
	RekorURL   string
	// Targets say which repositories may publish to which images
	// (publish.targets). A repository no grant names publishes only into
	// its own namespace, REGISTRY/OWNER/NAME[/…] (policy.CheckTarget):
	// the App's credentials reach every repository's images, so a
	// repository's policy alone never decides where they are used.
	Targets []policy.TargetGrant
}

// defaultConfig returns a Config with every default set and no identity or
// secret.
func defaultConfig() *Config {
	return &Config{
		Listen:         DefaultListen,
		MetricsAddr:    DefaultMetricsAddr,
		Workers:        DefaultWorkers,
		MaxPending:     DefaultMaxPending,
		ResyncInterval: DefaultResyncInterval,
		DedupeTTL:      DefaultDedupeTTL,
		ReplayWindow:   DefaultReplayWindow,
		GitHubURL:      DefaultGitHubURL,
		PendingRetries: DefaultPendingRetries,
		PendingBackoff: DefaultPendingBackoff,

		RegistryHostConcurrency: DefaultRegistryHostConcurrency,
		RegistryHostWait:        DefaultRegistryHostWait,
		RegistryCoolDown:        DefaultRegistryCoolDown,
		Publish:                 PublishConfig{TlogUpload: true},

		ProposeInterval: DefaultProposeInterval,
		UnplacedAfter:   DefaultUnplacedAfter,
	}
}

// Secrets returns the webhook secrets as ServerOptions takes them.
func (c *Config) Secrets() [][]byte {
	out := make([][]byte, len(c.WebhookSecrets))
	for i, s := range c.WebhookSecrets {
		out[i] = []byte(s)
	}
	return out
}

// LoadConfig reads the YAML file at path (none when path is ""), applies
// the environment overrides read through getenv (nil is os.Getenv) and
// validates the result. The file is read strictly: an unknown key, a key
// given twice or a value of the wrong type is an error naming the file and
// line. Relative paths in the file are relative to the file's directory.
// Error messages never quote a secret.
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := defaultConfig()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading config: %w", err)
		}
		p := newConfigParser(path)
		p.parse(data, c)
		if err := p.err(); err != nil {
			return nil, err
		}
		dir := filepath.Dir(path)
		for _, f := range []*string{&c.PrivateKeyFile, &c.CacheDir, &c.StateDir, &c.Publish.AuthFile, &c.Publish.SignKey} {
			// A KMS reference is no path, and stays as written.
			if *f != "" && !filepath.IsAbs(*f) && (f != &c.Publish.SignKey || !keyref.IsKMS(*f)) {
				*f = filepath.Join(dir, *f)
			}
		}
	}

	var errs []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if path != "" {
			msg = path + ": " + msg
		}
		errs = append(errs, msg)
	}

	if one, many := getenv(EnvWebhookSecret), getenv(EnvWebhookSecrets); one != "" || many != "" {
		// Trimmed: a secret read from a mounted file usually ends in a newline.
		var list []string
		for _, s := range append([]string{one}, strings.Split(many, ",")...) {
			if s = strings.TrimSpace(s); s != "" && !slices.Contains(list, s) {
				list = append(list, s)
			}
		}
		c.WebhookSecrets = list
	}
	if v := strings.TrimSpace(getenv(EnvAppID)); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			fail("%s %q is not a positive integer", EnvAppID, v)
		}
		c.AppID = id
	}
	if v := getenv(EnvPrivateKey); v != "" {
		// Some secret stores flatten newlines to a literal \n.
		if !strings.Contains(v, "\n") {
			v = strings.ReplaceAll(v, `\n`, "\n")
		}
		c.PrivateKey = []byte(v)
	}
	if v := getenv(EnvPrivateKeyFile); v != "" {
		c.PrivateKeyFile = v
	}
	if v := strings.TrimSpace(getenv(EnvDatabaseURL)); v != "" {
		if !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
			// The value is a credential: named, never quoted.
			fail("%s: want a postgres:// URL", EnvDatabaseURL)
		}
		c.DatabaseURL = v
	}
	if v := strings.TrimSpace(getenv(EnvMetricsToken)); v != "" {
		c.MetricsToken = v
		if len(v) < MinSecretLen {
			fail("%s is %d bytes; use a random string of at least %d", EnvMetricsToken, len(v), MinSecretLen)
		}
	}

	if v := strings.TrimSpace(getenv(EnvRegistryHookSecret)); v != "" {
		c.RegistryHookSecret = v
		if len(v) < MinSecretLen {
			fail("%s is %d bytes; use a random string of at least %d", EnvRegistryHookSecret, len(v), MinSecretLen)
		}
	}

	if len(c.WebhookSecrets) == 0 {
		fail("refusing to start without a webhook secret: set webhookSecrets, %s or %s", EnvWebhookSecret, EnvWebhookSecrets)
	}
	for i, s := range c.WebhookSecrets {
		if len(s) < MinSecretLen {
			fail("webhook secret %d of %d is %d bytes; use a random string of at least %d", i+1, len(c.WebhookSecrets), len(s), MinSecretLen)
		}
	}
	if c.AppID <= 0 && getenv(EnvAppID) == "" {
		fail("no GitHub App id: set appID or %s", EnvAppID)
	}
	switch {
	case len(c.PrivateKey) > 0:
		if block, _ := pem.Decode(c.PrivateKey); block == nil {
			fail("%s is not PEM text", EnvPrivateKey)
		}
	case c.PrivateKeyFile == "":
		fail("no GitHub App private key: set privateKeyFile, %s or %s", EnvPrivateKeyFile, EnvPrivateKey)
	default:
		if st, err := os.Stat(c.PrivateKeyFile); err != nil {
			fail("private key file: %v", err)
		} else if st.IsDir() {
			fail("private key file %s is a directory", c.PrivateKeyFile)
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return c, nil
}

// ReadPrivateKey returns the App's private key as PEM, from PrivateKey or
// else PrivateKeyFile, once it is known to be a key GitHub App tokens can
// be signed with: an RSA key, PKCS #1 or PKCS #8, not encrypted. Any other
// key is refused with what to do about it, where the JWT library would
// only say which Go function to call instead. The error never quotes the
// key.
func (c *Config) ReadPrivateKey() ([]byte, error) {
	data, source := c.PrivateKey, EnvPrivateKey
	if len(data) == 0 {
		source = "private key file " + c.PrivateKeyFile
		var err error
		if data, err = os.ReadFile(c.PrivateKeyFile); err != nil {
			return nil, fmt.Errorf("reading the GitHub App's private key: %w", err)
		}
	}
	const fix = "use the .pem file that the App's settings page gives (Private keys, Generate a private key)"
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s is not PEM text (-----BEGIN RSA PRIVATE KEY-----); %s", source, fix)
	}
	if block.Headers["Proc-Type"] != "" || block.Type == "ENCRYPTED PRIVATE KEY" {
		return nil, fmt.Errorf("%s is encrypted; GitHub's App keys are not: %s", source, fix)
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE":
		return nil, fmt.Errorf("%s holds a %s, not a private key; %s", source, strings.ToLower(block.Type), fix)
	default:
		return nil, fmt.Errorf("%s holds a PEM block of type %q, not a private key; %s", source, block.Type, fix)
	}
	if err != nil {
		// The parser's own text tells Go callers which function to use
		// instead; it means nothing to the person with the file.
		return nil, fmt.Errorf("%s: its %s block does not parse as one; %s", source, block.Type, fix)
	}
	switch key.(type) {
	case *rsa.PrivateKey:
		return data, nil
	case *ecdsa.PrivateKey:
		return nil, fmt.Errorf("%s holds an EC (ECDSA) key; GitHub App keys are RSA: %s", source, fix)
	case ed25519.PrivateKey:
		return nil, fmt.Errorf("%s holds an Ed25519 key; GitHub App keys are RSA: %s", source, fix)
	default:
		return nil, fmt.Errorf("%s holds a %T key; GitHub App keys are RSA: %s", source, key, fix)
	}
}

// configParser walks the YAML nodes, collecting "file:line: message" errors.
type configParser struct {
	*yamlnode.Reader
	name string
	errs []configError
}

// newConfigParser reads the config file name; the config's errors carry no
// rule ids, so what the shared reader finds is reported as it says it.
func newConfigParser(name string) *configParser {
	p := &configParser{name: name}
	p.Reader = &yamlnode.Reader{Report: func(line int, _ yamlnode.Problem, msg string) {
		p.errorf(line, "%s", msg)
	}}
	return p
}

type configError struct {
	line int
	msg  string
}

func (p *configParser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, configError{line, fmt.Sprintf(format, args...)})
}

// err returns the errors in line order, one "file:line: message" a line.
func (p *configParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(p.errs, func(a, b configError) int { return a.line - b.line })
	lines := make([]string, len(p.errs))
	for i, e := range p.errs {
		lines[i] = fmt.Sprintf("%s:%d: %s", p.name, e.line, e.msg)
	}
	return errors.New(strings.Join(lines, "\n"))
}

func (p *configParser) parse(data []byte, c *Config) {
	root := p.Document(data, "a config file")
	if root == nil {
		return
	}
	if yamlnode.IsNull(root) {
		return
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, "the top level is %s; want a mapping", yamlnode.Describe(root))
		return
	}
	var listenLine, metricsLine int
	defer func() {
		_, port, _ := net.SplitHostPort(c.Listen)
		switch {
		case c.MetricsAddr != c.Listen || port == "0":
		case metricsLine > 0:
			p.errorf(metricsLine, "metricsAddr %q is also the listen address; give /metrics a port of its own", c.MetricsAddr)
		default:
			p.errorf(listenLine, "listen %q is where /metrics is served by default; set metricsAddr to another port", c.Listen)
		}
	}()
	p.Mapping(root, "", map[string]func(*yaml.Node){
		"appID": func(v *yaml.Node) {
			if n, ok := p.integer(v, "appID", 1, 1<<53-1); ok {
				c.AppID = n
			}
		},
		"privateKeyFile": func(v *yaml.Node) { p.str(v, "privateKeyFile", &c.PrivateKeyFile) },
		"webhookSecrets": func(v *yaml.Node) {
			if list, ok := p.Secret().Strs(v, "webhookSecrets"); ok {
				c.WebhookSecrets = list
			}
		},
		"listen": func(v *yaml.Node) {
			listenLine = v.Line
			p.addr(v, "listen", ":8080", &c.Listen)
		},
		"metricsAddr": func(v *yaml.Node) {
			metricsLine = v.Line
			p.addr(v, "metricsAddr", DefaultMetricsAddr, &c.MetricsAddr)
		},
		"workers": func(v *yaml.Node) {
			if n, ok := p.integer(v, "workers", 1, 1024); ok {
				c.Workers = int(n)
			}
		},
		"maxPending": func(v *yaml.Node) {
			if n, ok := p.integer(v, "maxPending", 1, 10_000_000); ok {
				c.MaxPending = int(n)
			}
		},
		"resyncInterval": func(v *yaml.Node) {
			if d, ok := p.duration(v, "resyncInterval", MinResyncInterval); ok {
				c.ResyncInterval = d
			}
		},
		"proposeInterval": func(v *yaml.Node) {
			if yamlnode.Resolve(v).Value == "off" {
				c.ProposeInterval = -1
			} else if d, ok := p.duration(v, "proposeInterval", MinProposeInterval); ok {
				c.ProposeInterval = d
			}
		},
		"unplacedAfter": func(v *yaml.Node) {
			if d, ok := p.duration(v, "unplacedAfter", time.Minute); ok {
				c.UnplacedAfter = d
			}
		},
		"pendingRetries": func(v *yaml.Node) {
			if n, ok := p.integer(v, "pendingRetries", 1, 100); ok {
				c.PendingRetries = int(n)
			}
		},
		"pendingBackoff": func(v *yaml.Node) {
			if d, ok := p.duration(v, "pendingBackoff", MinPendingBackoff); ok {
				c.PendingBackoff = d
			}
		},
		"registryHostConcurrency": func(v *yaml.Node) {
			if n, ok := p.integer(v, "registryHostConcurrency", 1, 1024); ok {
				c.RegistryHostConcurrency = int(n)
			}
		},
		"registryHostWait": func(v *yaml.Node) {
			if d, ok := p.duration(v, "registryHostWait", 10*time.Millisecond); ok {
				c.RegistryHostWait = d
			}
		},
		"registryCoolDown": func(v *yaml.Node) {
			if d, ok := p.duration(v, "registryCoolDown", time.Second); ok {
				c.RegistryCoolDown = d
			}
		},
		"dedupeTTL": func(v *yaml.Node) {
			if d, ok := p.duration(v, "dedupeTTL", time.Second); ok {
				c.DedupeTTL = d
			}
		},
		"leaseTTL": func(v *yaml.Node) {
			if d, ok := p.duration(v, "leaseTTL", time.Second); ok {
				c.LeaseTTL = d
			}
		},
		"githubTimeout": func(v *yaml.Node) {
			if d, ok := p.duration(v, "githubTimeout", time.Second); ok {
				c.GitHubTimeout = d
			}
		},
		"replayWindow": func(v *yaml.Node) {
			if d, ok := p.duration(v, "replayWindow", time.Second); ok {
				c.ReplayWindow = d
			}
		},
		"githubURL": func(v *yaml.Node) {
			var s string
			if !p.str(v, "githubURL", &s) {
				return
			}
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
				p.errorf(v.Line, "githubURL %q: want an http or https URL, such as https://github.example.com/api/v3/", s)
				return
			}
			// go-github resolves paths against the base URL, which must end in /.
			if !strings.HasSuffix(s, "/") {
				s += "/"
			}
			c.GitHubURL = s
		},
		"cacheDir": func(v *yaml.Node) { p.str(v, "cacheDir", &c.CacheDir) },
		"stateDir": func(v *yaml.Node) {
			if p.str(v, "stateDir", &c.StateDir) && c.StateDir == "" {
				p.errorf(v.Line, "stateDir: want a directory (the state outlives restarts only on a volume that does)")
			}
		},
		"bots": func(v *yaml.Node) {
			if list, ok := p.Strs(v, "bots"); ok {
				c.Bots = list
			}
		},
		"allowPrivateRegistries": func(v *yaml.Node) {
			list, ok := p.Strs(v, "allowPrivateRegistries")
			for i, h := range list {
				if _, err := egress.New([]string{h}, nil); err != nil {
					p.errorf(yamlnode.Resolve(v).Content[i].Line, "allowPrivateRegistries[%d] %q: want a registry host or host:port, without scheme or path", i, h)
					ok = false
				}
			}
			if ok {
				c.AllowPrivateRegistries = list
			}
		},
		"registryProxy": func(v *yaml.Node) {
			var raw string
			p.str(v, "registryProxy", &raw)
			if raw == "" {
				return
			}
			if err := new(egress.Rule).UseProxy(raw); err != nil {
				p.errorf(yamlnode.Resolve(v).Line, "registryProxy %q: want http://HOST[:PORT] or https://HOST[:PORT]", raw)
				return
			}
			c.RegistryProxy = raw
		},
		"publish": func(v *yaml.Node) {
			p.Mapping(v, "publish.", map[string]func(*yaml.Node){
				"authFile":  func(v *yaml.Node) { p.str(v, "publish.authFile", &c.Publish.AuthFile) },
				"signKey":   func(v *yaml.Node) { p.str(v, "publish.signKey", &c.Publish.SignKey) },
				"fulcioURL": func(v *yaml.Node) { p.str(v, "publish.fulcioURL", &c.Publish.FulcioURL) },
				"rekorURL":  func(v *yaml.Node) { p.str(v, "publish.rekorURL", &c.Publish.RekorURL) },
				"tlogUpload": func(v *yaml.Node) {
					if b, ok := p.Bool(v, "publish.tlogUpload"); ok {
						c.Publish.TlogUpload = b
					}
				},
				"targets": func(v *yaml.Node) { p.targets(v, &c.Publish.Targets) },
				"insecure": func(v *yaml.Node) {
					list, ok := p.Strs(v, "publish.insecure")
					for i, h := range list {
						if h != "" && (strings.Contains(h, "/") || strings.ContainsAny(h, " \t")) {
							p.errorf(yamlnode.Resolve(v).Content[i].Line, "publish.insecure[%d] %q: want a registry host[:port], without scheme or path", i, h)
							ok = false
						}
					}
					if ok {
						c.Publish.Insecure = list
					}
				},
			})
		},
	})
}

// targets reads publish.targets: a list of {repositories, installations,
// allow}, the repositories as OWNER/NAME or OWNER/*, the installations by
// id, the targets they may publish to as prefixes (policy.CheckPrefix).
func (p *configParser) targets(v *yaml.Node, dst *[]policy.TargetGrant) {
	v = yamlnode.Resolve(v)
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, "publish.targets is %s; want a list of {repositories, installations, allow} mappings", p.Describe(v))
		return
	}
	var out []policy.TargetGrant
	good := true
	for i, item := range v.Content {
		at := fmt.Sprintf("publish.targets[%d]", i)
		item = yamlnode.Resolve(item)
		if item.Kind != yaml.MappingNode {
			p.errorf(item.Line, "%s is %s; want a mapping of repositories or installations, and allow", at, p.Describe(item))
			good = false
			continue
		}
		g := policy.TargetGrant{Line: item.Line}
		errs := len(p.errs)
		p.Mapping(item, at+".", map[string]func(*yaml.Node){
			"repositories": func(v *yaml.Node) {
				list, ok := p.Strs(v, at+".repositories")
				for j, r := range list {
					owner, name, cut := strings.Cut(r, "/")
					if !cut || owner == "" || name == "" || strings.Contains(name, "/") || strings.Contains(owner, "*") || strings.Contains(name, "*") && name != "*" {
						p.errorf(yamlnode.Resolve(v).Content[j].Line, "%s.repositories[%d] %q: want OWNER/NAME or OWNER/*", at, j, r)
						ok = false
					}
				}
				if ok {
					g.Repositories = list
				}
			},
			"installations": func(v *yaml.Node) {
				v = yamlnode.Resolve(v)
				if v.Kind != yaml.SequenceNode {
					p.errorf(v.Line, "%s.installations is %s; want a list of installation ids", at, p.Describe(v))
					return
				}
				for j, n := range v.Content {
					if id, ok := p.integer(n, fmt.Sprintf("%s.installations[%d]", at, j), 1, 1<<53-1); ok {
						g.Installations = append(g.Installations, id)
					}
				}
			},
			"allow": func(v *yaml.Node) {
				list, ok := p.Strs(v, at+".allow")
				for j, s := range list {
					if err := policy.CheckPrefix(s); err != nil {
						p.errorf(yamlnode.Resolve(v).Content[j].Line, "%s.allow[%d] %q: %v", at, j, s, err)
						ok = false
					}
				}
				if ok {
					g.Prefixes = list
				}
			},
		})
		if len(p.errs) > errs {
			good = false
			continue
		}
		if len(g.Repositories) == 0 && len(g.Installations) == 0 || len(g.Prefixes) == 0 {
			p.errorf(item.Line, "%s: want repositories or installations, and allow, each a list of at least one", at)
			good = false
			continue
		}
		out = append(out, g)
	}
	if good {
		*dst = out
	}
}

// str sets *dst to a string field's value (see yamlnode.Reader.Str).
func (p *configParser) str(v *yaml.Node, field string, dst *string) bool {
	s, ok := p.Str(v, field)
	if ok {
		*dst = s
	}
	return ok
}

// addr sets *dst to a listen address field's value, host:port or :port.
func (p *configParser) addr(v *yaml.Node, field, example string, dst *string) {
	var s string
	if !p.str(v, field, &s) {
		return
	}
	_, port, err := net.SplitHostPort(s)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		p.errorf(v.Line, "%s %q: want host:port or :port, such as %s", field, s, example)
		return
	}
	*dst = s
}

// integer returns the value of a whole-number field within [lo, hi].
func (p *configParser) integer(v *yaml.Node, field string, lo, hi int64) (int64, bool) {
	v = yamlnode.Resolve(v)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!int" {
		p.errorf(v.Line, "%s is %s; want a whole number", field, p.Describe(v))
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 0, 64)
	switch {
	case err != nil || n > hi:
		p.errorf(v.Line, "%s is %s; want at most %d", field, v.Value, hi)
	case n < lo:
		p.errorf(v.Line, "%s is %s; want at least %d", field, v.Value, lo)
	default:
		return n, true
	}
	return 0, false
}

// duration returns the value of a Go duration field ("90s", "10m", "1h"),
// at least min. A bare number is refused: seconds or nanoseconds would be a
// guess.
func (p *configParser) duration(v *yaml.Node, field string, min time.Duration) (time.Duration, bool) {
	v = yamlnode.Resolve(v)
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		p.errorf(v.Line, "%s is %s; want a duration such as 10m or 1h30m", field, p.Describe(v))
		return 0, false
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		p.errorf(v.Line, "%s %q is not a duration; write one such as 10m or 1h30m", field, v.Value)
		return 0, false
	}
	if d < min {
		p.errorf(v.Line, "%s is %s; want at least %s", field, v.Value, min)
		return 0, false
	}
	return d, true
}
