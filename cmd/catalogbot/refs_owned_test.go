package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/egress"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
	"github.com/catalogbot/catalogbot/webhook/reconcile"
)

// smuggling is a repository that assembles cool-catalog from catalog.yaml,
// whose entries foo and bar alice and bob own, and a change by alice that
// points foo at an image that holds bob's package bar besides foo.
func smuggling(t *testing.T) (base, head map[string]string) {
	t.Helper()
	host := registrytest.New(t).Host
	foo, bar := checkCatalog, strings.ReplaceAll(checkCatalog, "foo", "bar")
	push := func(ref string, pkgs ...string) string {
		var entries []rendertest.Entry
		for i := 0; i+1 < len(pkgs); i += 2 {
			entries = append(entries, rendertest.Entry{Name: "configs/" + pkgs[i] + "/catalog.yaml", Body: pkgs[i+1]})
		}
		registrytest.Push(t, ref, rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"}, rendertest.Layer(t, entries...)))
		return ref
	}
	list := func(fooImage string) string {
		return "name: cool-catalog\nrepo: quay.io/example/cool-catalog\ntag: latest\nreferences:\n" +
			"  - name: foo\n    image: " + fooImage + "\n" +
			"  - name: bar\n    image: " + push(host+"/example/bar-index:v1", "bar", bar) + "\n"
	}
	base = map[string]string{
		"OWNERS":                  "approvers:\n  - root-admin\n",
		"cool-catalog/foo/OWNERS": "approvers:\n  - alice\n",
		"cool-catalog/bar/OWNERS": "approvers:\n  - bob\n",
		"catalog.yaml":            list(push(host+"/example/foo-index:v1", "foo", foo)),
	}
	head = map[string]string{"catalog.yaml": list(push(host+"/example/foo-index:v2", "foo", foo, "bar", bar))}
	return base, head
}

// refusesSmuggling checks that a report refuses alice's change naming
// bob's package and its owner.
func refusesSmuggling(t *testing.T, said string) {
	t.Helper()
	for _, want := range []string{"package bar (home cool-catalog/bar/", `rendered by entry "foo" at catalog.yaml:6`, "needs bob", `duplicate package "bar"`} {
		if !strings.Contains(said, want) {
			t.Errorf("the report does not say %q:\n%s", want, said)
		}
	}
}

// TestCheckReferenceSmuggling: catalogbot check refuses a catalog.yaml
// entry whose image brings another owner's package, naming the package
// and its owner, and reports the duplicate package it makes.
func TestCheckReferenceSmuggling(t *testing.T) {
	noActions(t)
	base, head := smuggling(t)
	r := changetest.NewRepo(t)
	r.Branch("pr", r.Commit("base", base))
	r.Commit("foo v2", head)

	doc, res := checkJSON(t, r.Dir, "--base", "main", "--head", "pr", "--author", "alice", "--images=false", "--allow-private-registry", "127.0.0.1")
	if res.code != exitInvalid {
		t.Errorf("exit %d, want %d", res.code, exitInvalid)
	}
	own, refs := resultOf(doc, "owners"), resultOf(doc, "references")
	if own.Conclusion != checks.Failure || refs.Conclusion != checks.Failure {
		t.Errorf("owners = %s, references = %s; want both failures", own.Conclusion, refs.Conclusion)
	}
	said := own.Summary
	for _, f := range refs.Findings {
		said += "\n" + f.Message
	}
	refusesSmuggling(t, said)
}

// TestAppReferenceSmuggling: the App, as serve builds it, refuses the same
// change on its check run and does not merge it.
func TestAppReferenceSmuggling(t *testing.T) {
	base, head := smuggling(t)
	gh := githubtest.New(t)
	repo := gh.AddRepo("acme", "catalog", base)
	repo.Commit("change", head, "foo v2")
	pr := repo.OpenPR("alice", "change", "main")

	// The stand-in registry listens on loopback, which the operator
	// allows here as it would an internal mirror.
	rule, err := egress.New([]string{"127.0.0.1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), Egress: rule, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	app, err := reconcile.NewApp(reconcile.AppOptions{
		HTTPClient: &http.Client{},
		Config:     &webhook.Config{AppID: gh.AppID(), PrivateKey: gh.PrivateKeyPEM(), GitHubURL: gh.URL + "/", CacheDir: t.TempDir()},
		Metrics:    webhook.NewMetrics(prometheus.NewRegistry()), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Renderer: renderer,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	job := webhook.Job{Key: webhook.Key{Repo: repo.FullName(), PR: pr.Number, Kind: webhook.KindPR},
		Event: "pull_request", Delivery: "smuggle-1", Installation: gh.InstallationID(repo)}
	if _, err := app.Process(context.Background(), job); err != nil {
		t.Fatalf("the App: %v", err)
	}
	runs := repo.CheckRuns(pr.HeadSHA())
	i := slices.IndexFunc(runs, func(r githubtest.CheckRun) bool { return r.Name == reconcile.CheckRunName })
	if i < 0 {
		t.Fatal("the App wrote no check run")
	}
	run := runs[i]
	if run.Conclusion != "failure" {
		t.Errorf("check run concluded %q, want failure", run.Conclusion)
	}
	said := run.Summary + run.Text
	for _, a := range run.Annotations {
		said += "\n" + a.Message
	}
	refusesSmuggling(t, said)
	if pr.Merged() {
		t.Error("the App merged alice's change to bob's package")
	}
}
