package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

const egressDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// hostile is a pull request's worth of hostile registries, all on
// loopback behind names the test resolver maps:
//   - registry.attacker.test, standing in for a registry on the internet
//     (allowlisted, as it lives on loopback here), whose challenge names
//     a token realm on internal.corp.test, an internal token service;
//   - metadata.test, mapped to the cloud metadata address;
//   - internal.test, an internal service;
//   - slow.test, a tarpit (allowlisted) that accepts and never answers,
//     holding 16 of the pull request's related images.
type hostile struct {
	resolver            egresstest.Resolver
	allow, insecure     []string
	tokens, internal    *egresstest.Server
	attacker            *egresstest.Server
	tarpit              *registrytest.Tarpit
	mu                  sync.Mutex
	authsSeenByAttacker []string
	// related is the relatedImages block of the pull request's bundle.
	related string
}

func newHostile(t *testing.T, slowImages int) *hostile {
	h := &hostile{}
	h.tokens = egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"token": "INTERNAL-SECRET"}`)
	}))
	h.internal = egresstest.Serve(t, http.NotFoundHandler())
	h.attacker = egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.authsSeenByAttacker = append(h.authsSeenByAttacker, r.Header.Get("Authorization"))
		h.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer realm="http://internal.corp.test:`+h.tokens.Port+`/token",service="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	h.tarpit = registrytest.NewTarpit(t)
	h.resolver = egresstest.Resolver{
		"registry.attacker.test": {"127.0.0.1"},
		"internal.corp.test":     {"127.0.0.1"},
		"metadata.test":          {"169.254.169.254"},
		"internal.test":          {"127.0.0.1"},
		"slow.test":              {"127.0.0.1"},
	}
	h.allow = []string{"registry.attacker.test", "slow.test"}
	attacker, internal, slow := "registry.attacker.test:"+h.attacker.Port, "internal.test:"+h.internal.Port, "slow.test:"+h.tarpit.Port
	h.insecure = []string{attacker, internal, slow}
	var b strings.Builder
	b.WriteString("relatedImages:\n")
	add := func(name, image string) {
		fmt.Fprintf(&b, "  - name: %s\n    image: %s@%s\n", name, image, egressDigest)
	}
	add("attacker", attacker+"/app")
	add("metadata", "metadata.test/latest")
	add("internal", internal+"/svc")
	for i := range slowImages {
		add(fmt.Sprintf("slow%d", i), fmt.Sprintf("%s/img%d", slow, i))
	}
	h.related = b.String()
	return h
}

// files are the pull request's base and head: the head adds the hostile
// related images to foo's bundle; the policy gives each reference 500ms.
func (h *hostile) files() (base, head map[string]string) {
	base = map[string]string{
		".catalogbot.yaml":         "limits:\n  referenceTimeout: 500ms\n",
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
	}
	head = map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + h.related}
	return base, head
}

// verify checks what the images check said about each hostile image, and
// what the stand-ins saw.
func (h *hostile) verify(t *testing.T, messages []string, slowImages int) {
	t.Helper()
	want := map[string]string{
		"registry.attacker.test": "host internal.corp.test resolves to a loopback address",
		"metadata.test":          "host metadata.test resolves to a link-local address",
		"internal.test":          "host internal.test resolves to a loopback address",
	}
	waited, failedFast := 0, 0
	for _, m := range messages {
		for image, says := range want {
			if strings.Contains(m, "image "+image) {
				if !strings.Contains(m, says) || !strings.Contains(m, "--allow-private-registry") {
					t.Errorf("finding %q does not say %q and how to allow it", m, says)
				}
				delete(want, image)
			}
		}
		switch {
		case !strings.Contains(m, "image slow.test"):
		case strings.Contains(m, "limits.referenceTimeout"):
			waited++
		case strings.Contains(m, "earlier in this check"):
			failedFast++
		}
		// The realm's port came from the attacker's challenge, not
		// from the pull request; the address from the resolver.
		for _, leak := range []string{h.tokens.Port, "INTERNAL-SECRET", "169.254"} {
			if strings.Contains(m, leak) {
				t.Errorf("finding %q quotes %q", m, leak)
			}
		}
	}
	for image := range want {
		t.Errorf("no finding about %s", image)
	}
	if waited == 0 || waited > 4 || waited+failedFast != slowImages {
		t.Errorf("tarpit: %d images waited out the deadline and %d failed at once, want at most 4 and the rest of %d", waited, failedFast, slowImages)
	}
	if n := h.tokens.Conns() + h.internal.Conns(); n != 0 {
		t.Errorf("%d connections to internal services, want 0", n)
	}
	if n := h.tarpit.Conns(); n > 8 {
		t.Errorf("%d connections to the tarpit, want at most 8", n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Contains(strings.Join(h.authsSeenByAttacker, " "), "INTERNAL-SECRET") {
		t.Error("the internal token reached the attacker's registry")
	}
}

// checkResolving runs the CLI in dir with the test resolver behind the
// egress rule.
func checkResolving(t *testing.T, dir string, res egress.Resolver, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, version: "dev", validate: fbc.Validate, resolver: res}
	code := execute(context.Background(), a, args)
	return result{code, stdout.String(), stderr.String()}
}

// TestCheckEgress: catalogbot check contacts none of the internal targets a
// pull request names, reports each as a policy finding that says how to
// allow it, and gives a tarpit one deadline.
func TestCheckEgress(t *testing.T) {
	noActions(t)
	const slowImages = 16
	h := newHostile(t, slowImages)
	base, head := h.files()
	r := changetest.NewRepo(t)
	r.Branch("pr", r.Commit("base", base))
	r.Commit("hostile images", head)

	args := []string{"check", "-o", "json", "--base", "main", "--head", "pr", "--author", "alice"}
	for _, a := range h.allow {
		args = append(args, "--allow-private-registry", a)
	}
	for _, i := range h.insecure {
		args = append(args, "--insecure-registry", i)
	}
	start := time.Now()
	res := checkResolving(t, r.Dir, h.resolver, args...)
	took := time.Since(start)
	var doc review.Document
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("check: exit %d: %v\n%s%s", res.code, err, res.stdout, res.stderr)
	}
	if res.code != exitInvalid {
		t.Errorf("exit %d, want %d", res.code, exitInvalid)
	}
	var messages []string
	for _, f := range resultOf(doc, "images").Findings {
		messages = append(messages, f.Message)
	}
	h.verify(t, messages, slowImages)
	// Generous: one deadline and overhead, not one per tarpit image.
	if took > 10*time.Second {
		t.Errorf("check took %s", took)
	}

	bad := checkResolving(t, r.Dir, h.resolver, "check", "--base", "main", "--head", "pr", "--allow-private-registry", "https://mirror/")
	if bad.code != exitError || !strings.Contains(bad.stderr, "--allow-private-registry") {
		t.Errorf("a bad allowlist entry: exit %d, %s", bad.code, bad.stderr)
	}
}

// TestAppEgress: the App, as serve builds it, holds the same line on the
// same pull request, and reports it on its check run.
func TestAppEgress(t *testing.T) {
	const slowImages = 16
	h := newHostile(t, slowImages)
	base, head := h.files()
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", base)
	repo.Commit("change", head, "hostile images")
	pr := repo.OpenPR("alice", "change", "main")

	rule, err := egress.New(h.allow, h.resolver)
	if err != nil {
		t.Fatal(err)
	}
	anonymous := authn.NewMultiKeychain()
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: anonymous, Egress: rule})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir()}
	opts := reconcile.AppOptions{
		HTTPClient: &http.Client{}, Config: cfg,
		Metrics: webhook.NewMetrics(prometheus.NewRegistry()), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Images:   &images.Options{Keychain: anonymous, Insecure: h.insecure, Egress: rule},
		Renderer: renderer,
	}
	// The App refuses to check pull requests without the rule.
	unruled := opts
	unruled.Images = &images.Options{Keychain: anonymous}
	if _, err := reconcile.NewApp(unruled); err == nil {
		t.Error("the App was made with image checks and no egress rule")
	}
	app, err := reconcile.NewApp(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	job := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: pr.Number, Kind: webhook.KindPR},
		Event: "pull_request", Delivery: "egress-1", Installation: gh.InstallationID(repo)}
	if _, err := app.Process(context.Background(), job); err != nil {
		t.Fatalf("the App: %v", err)
	}
	var run *githubtest.CheckRun
	for _, r := range repo.CheckRuns(pr.HeadSHA()) {
		if r.Name == reconcile.CheckRunName && (run == nil || r.ID > run.ID) {
			run = &r
		}
	}
	if run == nil {
		t.Fatal("the App wrote no check run")
	}
	var messages []string
	for _, a := range run.Annotations {
		messages = append(messages, a.Message)
	}
	h.verify(t, messages, slowImages)
}
