package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/webhook/durable/durabletest"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// TestServeReplicasOnPostgres runs two serve processes on one PostgreSQL
// database against the fake GitHub. The first is killed (SIGKILL) in the
// middle of checking a pull request; the second takes the check over once
// the first's lease lapses and merges it, once. Deliveries sent to either
// replica, before and after the kill, are all handled: every pull request
// they name is merged exactly once, and the pushes of the merges publish
// the catalog once.
func TestServeReplicasOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and a database")
	}
	dbURL := durabletest.Postgres(t)
	image := registrytest.New(t).Ref("acme/catalog:latest")
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml":         "merge:\n  enabled: true\n  method: squash\npublish:\n  image: " + image + "\n  base: scratch\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n*.txt\n",
		"catalog/foo/catalog.yaml": checkCatalog,
	})
	repo.Commit("label", map[string]string{"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: stable\n"}, "label the bundle")
	first := repo.OpenPR("alice", "label", "main")

	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(key, gh.PrivateKeyPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	config := func(name string) string {
		cfg := filepath.Join(dir, name+".yaml")
		conf := fmt.Sprintf("appID: %d\nprivateKeyFile: %s\ngithubURL: %s/\nlisten: 127.0.0.1:0\nmetricsAddr: 127.0.0.1:0\nworkers: 2\nresyncInterval: 1h\ncacheDir: %s\nleaseTTL: 3s\n",
			gh.AppID(), key, gh.URL, filepath.Join(dir, name+"-cache"))
		if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	const secret = "0123456789abcdef0123456789abcdef"
	t.Setenv("CATALOGBOT_DATABASE_URL", dbURL)

	// The first replica blocks on its first check run: the check is under
	// way when it is killed.
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	gh.HookResponses(func(r *http.Request, _ *githubtest.Response) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/check-runs") {
			blocked := false
			once.Do(func() { close(started); blocked = true })
			if blocked {
				<-release
			}
		}
	})
	a := startServe(t, config("a"), secret)
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatalf("the first replica never reported a check run\n%s", a.logs())
	}
	b := startServe(t, config("b"), secret)

	// Deliveries to both replicas while the first is stuck.
	open := func(n int) *githubtest.PR {
		branch := fmt.Sprintf("bump-%d", n)
		// A file of its own, so that the pull requests merge one after
		// another without conflicts.
		repo.Commit(branch, map[string]string{fmt.Sprintf("catalog/foo/notes-%d.txt", n): "notes\n"}, "notes")
		return repo.OpenPR("alice", branch, "main")
	}
	deliver := func(p *serveProcess, pr *githubtest.PR) {
		addr := <-p.addr
		p.addr <- addr
		resp := gh.Deliver(t, "http://"+addr+"/webhook", secret, "pull_request",
			gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: repo, PR: pr.Number}))
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("delivery to a replica: %d", resp.StatusCode)
		}
	}
	prs := []*githubtest.PR{first}
	for i, p := range []*serveProcess{a, b} {
		pr := open(i + 1)
		deliver(p, pr)
		prs = append(prs, pr)
	}

	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	close(release)
	pr := open(3)
	deliver(b, pr)
	prs = append(prs, pr)

	merged := func(pr *githubtest.PR) int {
		n := 0
		for _, m := range repo.Merges() {
			if m.Number == pr.Number {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		done := 0
		for _, pr := range prs {
			if merged(pr) > 0 {
				done++
			}
		}
		if done == len(prs) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("all merged %s after the kill", time.Since(killed).Round(100*time.Millisecond))
	// Some more time for a second merge to show, if there were one.
	time.Sleep(2 * time.Second)
	for _, pr := range prs {
		if n := merged(pr); n != 1 {
			t.Errorf("#%d merged %d times, want once\nfirst replica:\n%s\nsecond replica:\n%s", pr.Number, n, a.logs(), b.logs())
		}
	}

	// The pushes the merges made, in order: each publish runs once, and
	// only the tip's is built (an older push is no longer the tip); the
	// same push delivered again under a new id is a replay, dropped.
	merges := repo.Merges()
	for _, m := range merges {
		body := gh.Payload("push", "", githubtest.PayloadArgs{Repo: repo, After: m.SHA})
		addr := <-b.addr
		b.addr <- addr
		gh.Deliver(t, "http://"+addr+"/webhook", secret, "push", body)
		if m.SHA == merges[len(merges)-1].SHA {
			if resp := gh.Deliver(t, "http://"+addr+"/webhook", secret, "push", body); resp.StatusCode != http.StatusAccepted {
				t.Errorf("the tip's push again: %d", resp.StatusCode)
			}
		}
	}
	tip := merges[len(merges)-1].SHA
	publishes := func(sha string) int {
		n := 0
		for _, r := range repo.CheckRuns(sha) {
			if r.Name == reconcile.PublishCheckRunName {
				n++
			}
		}
		return n
	}
	deadline = time.Now().Add(60 * time.Second)
	for publishes(tip) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	for _, m := range merges {
		want := 0
		if m.SHA == tip {
			want = 1
		}
		if n := publishes(m.SHA); n != want {
			t.Errorf("merge of #%d (%.7s): %d publish runs, want %d\n%s", m.Number, m.SHA, n, want, b.logs())
		}
	}

	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30s of SIGTERM\n%s", b.logs())
	}
}
