package webhook

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/config")

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestLoadConfigGolden loads every testdata/config/*.yaml with an empty
// environment. A file with a .err beside it must fail with exactly that
// text; one without must load.
func TestLoadConfigGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "config", "*.yaml"))
	if len(files) < 10 {
		t.Fatalf("only %d config cases", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			golden := strings.TrimSuffix(path, ".yaml") + ".err"
			_, err := LoadConfig(path, envOf(nil))
			got := ""
			if err != nil {
				got = err.Error() + "\n"
			}
			if *update {
				if got == "" {
					os.Remove(golden)
					return
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, rerr := os.ReadFile(golden)
			if rerr != nil {
				want = nil
			}
			if got != string(want) {
				t.Fatalf("LoadConfig(%s):\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

func TestLoadConfigFull(t *testing.T) {
	c, err := LoadConfig(filepath.Join("testdata", "config", "full.yaml"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		AppID:                  123456,
		PrivateKeyFile:         filepath.Join("testdata", "config", "app.key"),
		WebhookSecrets:         []string{"first-secret-0123456789", "second-secret-0123456789"},
		Listen:                 "127.0.0.1:9090",
		MetricsAddr:            "10.0.0.1:9191",
		Workers:                8,
		MaxPending:             500,
		ResyncInterval:         5 * time.Minute,
		DedupeTTL:              30 * time.Minute,
		ReplayWindow:           5 * time.Minute,
		PendingRetries:         3,
		PendingBackoff:         2 * time.Minute,
		GitHubURL:              "https://github.example.com/api/v3/",
		GitHubTimeout:          45 * time.Second,
		CacheDir:               "/var/cache/catalogbot",
		StateDir:               filepath.Join("testdata", "config", "state"),
		Bots:                   []string{"renovate[bot]", "dependabot[bot]"},
		AllowPrivateRegistries: []string{"mirror.internal", "10.0.0.5:5000"},
		RegistryProxy:          "http://proxy.internal:3128",

		RegistryHostConcurrency: 2,
		RegistryHostWait:        2 * time.Second,
		RegistryCoolDown:        time.Minute,
		ProposeInterval:         2 * time.Minute,
		UnplacedAfter:           30 * time.Minute,
		Publish: PublishConfig{
			AuthFile:  filepath.Join("testdata", "config", "docker", "config.json"),
			Insecure:  []string{"localhost:5000"},
			SignKey:   filepath.Join("testdata", "config", "keys", "cosign.key"),
			FulcioURL: "https://fulcio.example.com",
			RekorURL:  "https://rekor.example.com",
			Targets: []policy.TargetGrant{{
				Repositories: []string{"acme/catalog", "partners/*"},
				Prefixes:     []string{"quay.io/acme/index", "oci:/srv/catalogs/"},
				Line:         35,
			}, {
				Installations: []int64{1234},
				Prefixes:      []string{"ghcr.io/acme-installation/"},
				Line:          39,
			}},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got  %+v\nwant %+v", c, want)
	}
	if s := c.Secrets(); len(s) != 2 || string(s[1]) != "second-secret-0123456789" {
		t.Fatalf("Secrets() = %q", s)
	}
}

const testPEM = "-----BEGIN RSA PRIVATE KEY-----\nTm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n"

func TestLoadConfigEnvironment(t *testing.T) {
	minimal := filepath.Join("testdata", "config", "minimal.yaml")
	full := filepath.Join("testdata", "config", "full.yaml")
	tests := []struct {
		name  string
		path  string
		env   map[string]string
		check func(t *testing.T, c *Config)
		err   string
	}{
		{name: "one secret from the environment, defaults kept", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789\n"},
			check: func(t *testing.T, c *Config) {
				want := defaultConfig()
				want.AppID, want.PrivateKeyFile = 42, filepath.Join("testdata", "config", "app.key")
				want.WebhookSecrets = []string{"env-secret-0123456789"}
				if !reflect.DeepEqual(c, want) {
					t.Fatalf("got %+v\nwant %+v", c, want)
				}
			}},
		{name: "rotation list replaces the file's secrets", path: full,
			env: map[string]string{EnvWebhookSecrets: " new-secret-0123456789 , old-secret-0123456789,", EnvWebhookSecret: "new-secret-0123456789"},
			check: func(t *testing.T, c *Config) {
				if !reflect.DeepEqual(c.WebhookSecrets, []string{"new-secret-0123456789", "old-secret-0123456789"}) {
					t.Fatalf("secrets %q", c.WebhookSecrets)
				}
			}},
		{name: "everything from the environment", path: "",
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvAppID: "7", EnvPrivateKey: testPEM},
			check: func(t *testing.T, c *Config) {
				if c.AppID != 7 || string(c.PrivateKey) != testPEM || c.Listen != DefaultListen || c.GitHubURL != DefaultGitHubURL {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "the shared database from the environment", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvDatabaseURL: "postgres://bot:pw@db:5432/catalogbot"},
			check: func(t *testing.T, c *Config) {
				if c.DatabaseURL != "postgres://bot:pw@db:5432/catalogbot" {
					t.Fatalf("database %q", c.DatabaseURL)
				}
			}},
		{name: "a database URL of another scheme, not quoted", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvDatabaseURL: "mysql://bot:s3cret@db/catalogbot"},
			err: "testdata/config/minimal.yaml: " + EnvDatabaseURL + ": want a postgres:// URL"},
		{name: "PEM with escaped newlines", path: "",
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvAppID: "7", EnvPrivateKey: strings.ReplaceAll(testPEM, "\n", `\n`)},
			check: func(t *testing.T, c *Config) {
				if string(c.PrivateKey) != testPEM {
					t.Fatalf("key %q", c.PrivateKey)
				}
			}},
		{name: "key file from the environment overrides the file's", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvPrivateKeyFile: filepath.Join("testdata", "config", "minimal.yaml")},
			check: func(t *testing.T, c *Config) {
				if c.PrivateKeyFile != filepath.Join("testdata", "config", "minimal.yaml") || c.AppID != 42 {
					t.Fatalf("got %+v", c)
				}
			}},
		{name: "app id from the environment overrides the file's", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvAppID: "99"},
			check: func(t *testing.T, c *Config) {
				if c.AppID != 99 {
					t.Fatalf("AppID %d", c.AppID)
				}
			}},
		{name: "bad app id", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvAppID: "seven"},
			err: `testdata/config/minimal.yaml: CATALOGBOT_APP_ID "seven" is not a positive integer`},
		{name: "key that is not PEM, never quoted", path: "",
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvAppID: "7", EnvPrivateKey: "hunter2-not-pem"},
			err: "CATALOGBOT_PRIVATE_KEY is not PEM text"},
		{name: "short secret from the environment, never quoted", path: minimal,
			env: map[string]string{EnvWebhookSecrets: "long-enough-secret-0123,tiny"},
			err: "testdata/config/minimal.yaml: webhook secret 2 of 2 is 4 bytes; use a random string of at least 16"},
		{name: "metrics token from the environment", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvMetricsToken: " metrics-token-0123456789\n"},
			check: func(t *testing.T, c *Config) {
				if c.MetricsToken != "metrics-token-0123456789" || c.MetricsAddr != DefaultMetricsAddr {
					t.Fatalf("token %q, metricsAddr %q", c.MetricsToken, c.MetricsAddr)
				}
			}},
		{name: "short metrics token, never quoted", path: minimal,
			env: map[string]string{EnvWebhookSecret: "env-secret-0123456789", EnvMetricsToken: "short"},
			err: "testdata/config/minimal.yaml: CATALOGBOT_METRICS_TOKEN is 5 bytes; use a random string of at least 16"},
		{name: "nothing at all", path: "", env: nil,
			err: "refusing to start without a webhook secret: set webhookSecrets, CATALOGBOT_WEBHOOK_SECRET or CATALOGBOT_WEBHOOK_SECRETS\n" +
				"no GitHub App id: set appID or CATALOGBOT_APP_ID\n" +
				"no GitHub App private key: set privateKeyFile, CATALOGBOT_PRIVATE_KEY_FILE or CATALOGBOT_PRIVATE_KEY"},
		{name: "missing file", path: filepath.Join("testdata", "config", "absent.yaml"), env: nil,
			err: "reading config: open testdata/config/absent.yaml: no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(tc.path, envOf(tc.env))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v\nwant  %s", err, tc.err)
				}
				for _, v := range tc.env {
					if len(v) > 4 && v != "seven" && strings.Contains(err.Error(), v) {
						t.Fatalf("error quotes a secret value: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestExampleServeConfig keeps examples/serve.yaml loadable.
func TestExampleServeConfig(t *testing.T) {
	path := filepath.Join("..", "examples", "serve.yaml")
	env := map[string]string{EnvWebhookSecret: "example-secret-0123456789", EnvPrivateKey: testPEM}
	c, err := LoadConfig(path, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.AppID == 0 || c.Workers != DefaultWorkers || c.ResyncInterval != DefaultResyncInterval {
		t.Fatalf("example config: %+v", c)
	}
}

// TestLoadConfigSignKey: a key file is found beside the configuration, a
// KMS reference is left as written.
func TestLoadConfigSignKey(t *testing.T) {
	appKey, err := filepath.Abs(filepath.Join("testdata", "config", "app.key"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct{ signKey, want string }{
		{"keys/cosign.key", filepath.Join(dir, "keys", "cosign.key")},
		{"/etc/catalogbot/cosign.key", "/etc/catalogbot/cosign.key"},
		{"hashivault://catalog", "hashivault://catalog"},
		{"awskms:///arn:aws:kms:us-east-1:123456789012:key/abc", "awskms:///arn:aws:kms:us-east-1:123456789012:key/abc"},
	} {
		cfg := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(cfg, []byte("appID: 1\nprivateKeyFile: "+appKey+"\npublish:\n  signKey: "+tc.signKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := LoadConfig(cfg, envOf(map[string]string{EnvWebhookSecret: "env-secret-0123456789"}))
		if err != nil {
			t.Fatal(err)
		}
		if c.Publish.SignKey != tc.want {
			t.Errorf("signKey %s: got %s, want %s", tc.signKey, c.Publish.SignKey, tc.want)
		}
	}
}

// The App uploads to the transparency log unless its file says not to, as
// cosign does.
func TestLoadConfigTlogDefault(t *testing.T) {
	c, err := LoadConfig(filepath.Join("testdata", "config", "minimal.yaml"), envOf(map[string]string{EnvWebhookSecret: "env-secret-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Publish.TlogUpload || c.Publish.RekorURL != "" {
		t.Fatalf("publish = %+v, want tlogUpload on and the default log", c.Publish)
	}
}

// TestRegistryHostsLeaveAWorker: the jobs in contact with one registry
// host are at most the workers but one, so that a host that turns slow
// leaves a worker for the others; a single worker is not left with none.
func TestRegistryHostsLeaveAWorker(t *testing.T) {
	for _, tt := range []struct{ workers, holders int }{{1, 1}, {2, 1}, {4, 3}} {
		c := defaultConfig()
		c.Workers = tt.workers
		o := c.RegistryHosts()
		if o.Holders != tt.holders || o.Contacts != DefaultRegistryHostConcurrency || o.Wait != DefaultRegistryHostWait || o.CoolDown != DefaultRegistryCoolDown {
			t.Errorf("%d workers: %+v, want %d holders and the defaults", tt.workers, o, tt.holders)
		}
	}
}
