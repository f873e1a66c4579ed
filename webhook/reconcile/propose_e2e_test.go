//go:build e2e

package reconcile

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook"
)

// TestE2EProposeOnDockerRegistryNotification: Debian's docker-registry,
// configured to notify /hooks/registry with the shared secret, gets a
// bundle image pushed by tag; its own notification (not one the test
// writes) makes the App, polling only every hour, open the proposal.
func TestE2EProposeOnDockerRegistryNotification(t *testing.T) {
	const secret = "a-registry-secret-of-some-length"
	var mu sync.Mutex
	var handler http.Handler = http.NotFoundHandler()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer front.Close()
	host := registrytest.StartDockerRegistryNotifying(t, front.URL+"/hooks/registry", secret)

	files := map[string]string{
		".catalogbot.yaml":         fmt.Sprintf("propose:\n  - package: foo\n    repository: %s/acme/foo-bundle\n    channels: [stable]\n    graph: replaces\n    soak: 0s\n", host),
		"OWNERS":                   "approvers: [maintainer]\n",
		"catalog/foo/catalog.yaml": proposetest.Package("foo", "stable", "foo.v1.0.0", "1.0.0"),
	}
	e := newEnvWith(t, files, func(o *AppOptions) {
		rule, err := egress.New([]string{host}, nil)
		if err != nil {
			t.Fatal(err)
		}
		anonymous := authn.NewMultiKeychain()
		r, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
		if err != nil {
			t.Fatal(err)
		}
		o.Renderer = r
		o.Propose = &ProposeOptions{Registry: propose.Registry{Keychain: anonymous, Egress: rule}, Interval: time.Hour}
	})
	srv, err := webhook.NewServer(webhook.ServerOptions{
		Secrets: [][]byte{[]byte(serveSecret)}, Queue: webhook.NewQueue(e.app, webhook.QueueOptions{}),
		RegistryHook: webhook.RegistryHookOptions{Secret: secret, Notify: e.app.NotifyRegistry},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	handler = srv.Handler()
	mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan webhook.Job, 4)
	go e.app.RunProposer(ctx, func(j webhook.Job) { jobs <- j })
	for deadline := time.Now().Add(30 * time.Second); e.counter(e.metrics.ProposeRounds, "unchanged") < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no first round within 30s")
		}
	}

	ref, err := name.ParseReference(host+"/acme/foo-bundle:1.1.0", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, proposetest.Bundle(t, "foo", "foo.v1.1.0", "1.1.0")); err != nil {
		t.Fatal(err)
	}
	select {
	case j := <-jobs:
		if err := processAll(ctx, e.app, j); err != nil {
			t.Fatal(err)
		}
		pr := e.repo.PR(j.Key.PR)
		if pr == nil || !strings.Contains(pr.Title(), "foo: propose 1.1.0") {
			t.Fatalf("the notification's round opened %v", pr)
		}
		if run := e.run(pr.HeadSHA(), CheckRunName); run.Status != "completed" {
			t.Errorf("the proposal's check run is %s", run.Status)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("docker-registry's notification made no proposal within 60s (the interval is an hour)")
	}
}
