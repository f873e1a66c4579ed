package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// demo makes TestDemoApp tell its story on stdout: make demo-app runs it
// as a demonstration of the App, offline and with no GitHub App of one's
// own.
var demo = flag.Bool("demo", false, "TestDemoApp prints what the App does, for make demo-app")

// TestDemoApp runs the real catalogbot serve against the fake GitHub
// (webhook/githubtest) and a local registry, with signed deliveries: a
// contributor's pull request is checked and waits for its owner; the
// owner's /approve merges it, pinned to the checked head; the push the
// merge makes publishes the catalog image, which the registry then holds.
// It is the test of that whole path, and, with -demo, the demo of it.
func TestDemoApp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the service")
	}
	var out io.Writer = io.Discard
	if *demo {
		out = os.Stdout
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }

	gh := githubtest.New(t)
	reg := registrytest.New(t)
	image := reg.Ref("acme/catalog:latest")
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml":         "merge:\n  enabled: true\n  method: squash\npublish:\n  image: " + image + "\n  base: scratch\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})

	dir := t.TempDir()
	key := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(key, gh.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "serve.yaml")
	conf := fmt.Sprintf("appID: %d\nprivateKeyFile: %s\ngithubURL: %s/\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\n"+
		"workers: 2\nresyncInterval: 1h\ncacheDir: %s\npublish:\n  insecure:\n    - %s\n",
		gh.AppID(), key, gh.URL, filepath.Join(dir, "cache"), reg.Host)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "demo-webhook-secret-0123456789"
	t.Setenv("CATALOGBOT_WEBHOOK_SECRET", secret)

	say("== catalogbot serve, the real App, against a fake GitHub (%s) and a local registry (%s)", gh.URL, reg.Host)
	addr, stop := startServeInProcess(t, cfg)
	defer stop()
	waitFor(t, "/readyz to say ready", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	say("   listening on %s; /readyz: ready (GitHub gave it an installation token)", addr)

	deliver := func(event, action string, args githubtest.PayloadArgs) {
		t.Helper()
		args.Repo = repo
		resp := gh.Deliver(t, "http://"+addr+"/webhook", secret, event, gh.Payload(event, action, args))
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("delivery %s.%s: %d", event, action, resp.StatusCode)
		}
	}

	repo.Commit("label", map[string]string{"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: stable\n"}, "label the bundle")
	pr := repo.OpenPR("bob", "label", "main")
	head := pr.HeadSHA()
	say("\n== bob opens pull request #%d, which changes package foo (owned by alice), at %.12s", pr.Number, head)
	deliver("pull_request", "opened", githubtest.PayloadArgs{PR: pr.Number})
	run := waitForRun(t, repo, head, "catalogbot")
	say("   check run %q: %s: %s", run.Name, run.Conclusion, run.Title)
	comment := waitForComment(t, repo, pr.Number, "Waiting for approval")
	say("   status comment:\n%s", indentLines(comment, "   | "))
	if len(repo.Merges()) != 0 {
		t.Fatal("merged without the owner's approval")
	}

	say("\n== alice, the owner of package foo, comments /approve")
	// A comment counts for the head it was given on: GitHub's times are
	// in seconds, so it comes a moment after the push, as it would.
	gh.Advance(time.Minute)
	repo.Comment(pr.Number, "alice", "/approve")
	deliver("issue_comment", "created", githubtest.PayloadArgs{PR: pr.Number, Sender: "alice"})
	waitFor(t, "the merge", func() bool { return len(repo.Merges()) == 1 })
	m := repo.Merges()[0]
	if m.HeadSHA != head {
		t.Fatalf("merged at %s, not at the checked head %s", m.HeadSHA, head)
	}
	say("   merged #%d by %s, pinned to the checked head %.12s: main is now %.12s", m.Number, m.Method, m.HeadSHA, m.SHA)
	say("   status comment now begins: %s", firstLine(waitForComment(t, repo, pr.Number, "Approved")))

	say("\n== GitHub sends the push the merge made; the App publishes the catalog image")
	deliver("push", "", githubtest.PayloadArgs{})
	pub := waitForRun(t, repo, m.SHA, "catalogbot/publish")
	say("   check run %q: %s: %s", pub.Name, pub.Conclusion, pub.Title)
	if pub.Conclusion != "success" {
		t.Fatalf("publish run: %s: %s\n%s", pub.Conclusion, pub.Title, pub.Summary)
	}
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatalf("the registry does not hold %s: %v", image, err)
	}
	if !strings.Contains(pub.Summary, desc.Digest.String()) {
		t.Errorf("the publish run does not name the digest the registry holds, %s:\n%s", desc.Digest, pub.Summary)
	}
	say("   the registry holds %s at %s", image, desc.Digest)
	say("\n== done: checked, approved, merged at the checked head, published; offline")
}

// startServeInProcess runs catalogbot serve with the configuration cfg in
// this process and returns its address, and a stop that ends it as SIGTERM
// would and waits for it.
func startServeInProcess(t *testing.T, cfg string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, &app{stdout: io.Discard, stderr: pw, version: "dev", validate: fbc.Validate}, []string{"serve", "--config", cfg})
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rec struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "serving" {
				addr <- rec.Addr
			}
			if testing.Verbose() {
				t.Log(sc.Text())
			}
		}
	}()
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop within 30s")
		}
	}
	select {
	case a := <-addr:
		return a, stop
	case code := <-done:
		t.Fatalf("serve exited with %d before listening", code)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not listen within 30s")
	}
	return "", stop
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForRun waits for the completed check run named runName at sha.
func waitForRun(t *testing.T, repo *githubtest.Repo, sha, runName string) githubtest.CheckRun {
	t.Helper()
	var found githubtest.CheckRun
	waitFor(t, "the "+runName+" check run", func() bool {
		for _, r := range repo.CheckRuns(sha) {
			if r.Name == runName && r.Status == "completed" {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// waitForComment waits for the App's status comment to say want, and
// returns it without its hidden marker.
func waitForComment(t *testing.T, repo *githubtest.Repo, number int, want string) string {
	t.Helper()
	var body string
	waitFor(t, "a status comment saying "+want, func() bool {
		for _, c := range repo.IssueComments(number) {
			if strings.HasSuffix(c.User, "[bot]") && strings.Contains(c.Body, want) {
				body = c.Body
				return true
			}
		}
		return false
	})
	_, rest, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(rest)
}

func indentLines(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString(strings.TrimRight(prefix+line, " \n") + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
