package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// TestPublishersAgree publishes one commit of a catalog.yaml repository
// four ways: the App on the push to the default branch, and publish
// --config, publish --repo and rebuild on a checkout. Each pushes to its own
// tag; all four must
// give the same digest, so that the next scheduled rebuild of what the App
// published finds it unchanged.
func TestPublishersAgree(t *testing.T) {
	isolateCredentials(t)
	host := registrytest.New(t).Host
	for _, pkg := range []string{"cert-rotator", "kv-store-operator"} {
		registrytest.Push(t, host+"/"+pkg+":v1", fixtureCatalogImage(t, validDir, pkg, "1"))
	}
	list := fmt.Sprintf("name: demo\nreferences:\n- name: cert\n  image: %[1]s/cert-rotator:v1\n- name: kv\n  image: %[1]s/kv-store-operator:v1\n", host)
	policy := fmt.Sprintf("publish:\n  image: %s/acme/catalog:app\n  base: scratch\n", host)

	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", map[string]string{
		".catalogbot.yaml": policy,
		"OWNERS":           "approvers:\n  - root-admin\n",
		"catalog.yaml":     list,
	})
	app := newTestApp(t, gh)
	sha := repo.Branch("main")
	job := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), Kind: webhook.KindPush}, Event: "push",
		Delivery: "publish-1", Installation: gh.InstallationID(repo), Payload: gh.Payload("push", "", githubtest.PayloadArgs{Repo: repo})}
	if _, err := app.Process(context.Background(), job); err != nil {
		t.Fatalf("the App: %v", err)
	}
	var title, summary string
	for _, r := range repo.CheckRuns(sha) {
		if r.Name == reconcile.PublishCheckRunName {
			title, summary = r.Title, r.Summary
		}
	}
	byApp := regexp.MustCompile(`sha256:[0-9a-f]{64}`).FindString(title)
	if !strings.HasPrefix(title, "Published ") || byApp == "" || registryDigest(t, host+"/acme/catalog:app") != byApp {
		t.Fatalf("the App's publish run: %q\n%s", title, summary)
	}
	// Every publish names the base it resolved; scratch is none.
	if !strings.Contains(summary, "| base | `scratch` |") {
		t.Errorf("the App's summary does not name the base:\n%s", summary)
	}

	ws := filepath.Join(t.TempDir(), "ws")
	repo.Clone(t, ws)
	config := filepath.Join(ws, "catalog.yaml")
	byPublish := publishOutput(t, cli(t, nil, "publish", "--config", config, "--image", host+"/acme/catalog:publish", "--base", "scratch"), "published")
	byRebuild := rebuildOutput(t, cli(t, nil, "rebuild", config, "--image", host+"/acme/catalog:rebuild", "--base", "scratch"), "published")
	// publish --repo reads the policy as the App does: the list and the
	// scratch base are the policy's, not the flags' defaults.
	byRepo := publishOutput(t, cli(t, nil, "publish", "--repo", ws, "--image", host+"/acme/catalog:repo"), "published")
	if byApp != byPublish || byApp != byRebuild || byApp != byRepo {
		t.Errorf("digests differ: the App %s, publish %s, publish --repo %s, rebuild %s", byApp, byPublish, byRepo, byRebuild)
	}
	// The scheduled rebuild of what the App published has nothing to do.
	r := cli(t, nil, "rebuild", config, "--image", host+"/acme/catalog:app", "--base", "scratch")
	if got := rebuildOutput(t, r, "unchanged"); got != byApp || strings.Contains(r.stdout, "drift") {
		t.Errorf("rebuild of the App's image: %q; want unchanged %s without drift", r.stdout, byApp)
	}
}
