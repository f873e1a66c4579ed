package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// runMainEnv makes the test binary run catalogbot's main instead of the
// tests, so that a test can start the real command as a process of its
// own: and kill it.
const runMainEnv = "CATALOGBOT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	// Started as the fake KMS plugin of a signing test, the binary
	// answers the plugin call instead.
	signtest.ServeKMSPlugin()
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(runMain())
	}
	// check and backtest keep a package index in the user's cache
	// directory by default: the tests' goes away with them.
	cache, err := os.MkdirTemp("", "catalogbot-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// serveProcess is catalogbot serve running as a child process.
type serveProcess struct {
	cmd     *exec.Cmd
	addr    chan string
	metrics chan string // the metrics listener's address
	done    chan error
	mu      sync.Mutex
	log     strings.Builder
}

// startServe starts catalogbot serve with the configuration file cfg and
// waits until it listens; env is added to its environment.
func startServe(t *testing.T, cfg, secret string, env ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{addr: make(chan string, 1), metrics: make(chan string, 1), done: make(chan error, 1)}
	p.cmd = exec.Command(os.Args[0], "serve", "--config", cfg)
	p.cmd.Env = append(append(os.Environ(), runMainEnv+"=1", "CATALOGBOT_WEBHOOK_SECRET="+secret), env...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			var rec struct {
				Msg     string `json:"msg"`
				Addr    string `json:"addr"`
				Metrics string `json:"metrics_addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				p.addr <- rec.Addr
				p.metrics <- rec.Metrics
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	select {
	case addr := <-p.addr:
		p.addr <- addr
	case err := <-p.done:
		t.Fatalf("serve exited before listening: %v\n%s", err, p.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not listen within 30s\n%s", p.logs())
	}
	return p
}

func (p *serveProcess) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// TestServeKilledAndRestarted runs the real command against the fake
// GitHub. The first process is killed with SIGKILL in the middle of
// checking a pull request; the second finds it on its startup resync and
// merges it, pinned to the checked head. A SIGTERM then stops the second
// one cleanly.
func TestServeKilledAndRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml":         "merge:\n  enabled: true\n  method: squash\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})
	repo.Commit("label", map[string]string{"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: stable\n"}, "label the bundle")
	pr := repo.OpenPR("alice", "label", "main")

	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(key, gh.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "serve.yaml")
	conf := fmt.Sprintf("appID: %d\nprivateKeyFile: %s\ngithubURL: %s/\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\nworkers: 2\nresyncInterval: 1h\ncacheDir: %s\nstateDir: %s\n",
		gh.AppID(), key, gh.URL, filepath.Join(dir, "cache"), filepath.Join(dir, "state"))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "0123456789abcdef0123456789abcdef"

	// The first process blocks on its check run: the check is under way
	// when it is killed.
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	gh.HookResponses(func(r *http.Request, _ *githubtest.Response) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/check-runs") {
			once.Do(func() { close(started) })
			<-release
		}
	})
	first := startServe(t, cfg, secret)
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatalf("the first process never reported a check run\n%s", first.logs())
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	gh.HookResponses(nil)
	close(release)
	if m := repo.Merges(); len(m) != 0 {
		t.Fatalf("merged before the check finished: %+v", m)
	}

	second := startServe(t, cfg, secret)
	deadline := time.Now().Add(60 * time.Second)
	for len(repo.Merges()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	merges := repo.Merges()
	if len(merges) != 1 || merges[0].HeadSHA != pr.HeadSHA() || merges[0].Number != pr.Number {
		t.Fatalf("merges = %+v, want one of #%d at %s\n%s", merges, pr.Number, pr.HeadSHA(), second.logs())
	}

	// The service still answers, and a delivery with a bad signature is
	// refused.
	addr := <-second.addr
	resp, err := http.Post("http://"+addr+"/webhook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unsigned delivery got %d, want 400 or 401", resp.StatusCode)
	}

	// /metrics is not on the public listener, only on its own.
	for _, tc := range []struct {
		addr string
		code int
	}{{addr, http.StatusNotFound}, {<-second.metrics, http.StatusOK}} {
		resp, err := http.Get("http://" + tc.addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || (tc.code == http.StatusOK) != strings.Contains(string(body), "catalogbot_webhook_deliveries_total") {
			t.Errorf("GET http://%s/metrics: %d, want %d\n%.300s", tc.addr, resp.StatusCode, tc.code, body)
		}
	}

	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-second.done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, second.logs())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30s of SIGTERM\n%s", second.logs())
	}
	if !strings.Contains(second.logs(), `"msg":"stopped"`) {
		t.Errorf("no clean stop in the log:\n%s", second.logs())
	}
}

// TestServeRefusesWithoutSecret: no webhook secret, no service.
func TestServeRefusesWithoutSecret(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfg, []byte("appID: 1\nprivateKeyFile: key.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CATALOGBOT_WEBHOOK_SECRET", "")
	t.Setenv("CATALOGBOT_WEBHOOK_SECRETS", "")
	res := ownersCLI(t, dir, "serve", "--config", cfg)
	if res.code == exitOK || !strings.Contains(res.stderr, "refusing to start without a webhook secret") {
		t.Errorf("exit %d, stderr %q; want a refusal naming the missing secret", res.code, res.stderr)
	}
}

// TestServeNamesAnECKey: given an EC private key, serve says that GitHub
// App keys are RSA and where to get one, not which Go function to call.
func TestServeNamesAnECKey(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfg, []byte("appID: 1\nprivateKeyFile: key.pem\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CATALOGBOT_WEBHOOK_SECRET", "0123456789abcdef0123456789abcdef")
	res := ownersCLI(t, dir, "serve", "--config", cfg)
	if res.code == exitOK || !strings.Contains(res.stderr, "holds an EC (ECDSA) key; GitHub App keys are RSA") ||
		!strings.Contains(res.stderr, "Generate a private key") || strings.Contains(res.stderr, "ParseECPrivateKey") {
		t.Errorf("exit %d, stderr %q; want a refusal saying the key is EC and GitHub's are RSA", res.code, res.stderr)
	}
}
