package reconcile

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/webhook"
)

// pushJob is the job of a push of sha to branch of the env's repository.
func (e *env) pushJob(branch, before, sha string) webhook.Job {
	e.t.Helper()
	payload := map[string]any{
		"ref": "refs/heads/" + branch, "before": before, "after": sha, "deleted": false,
		"repository": map[string]any{
			"name": e.repo.Name, "full_name": e.repo.FullName(), "default_branch": e.repo.DefaultBranch(),
			"clone_url": e.repo.CloneURL(), "owner": map[string]any{"login": e.repo.Owner},
		},
		"installation": map[string]any{"id": e.gh.InstallationID(e.repo)},
	}
	body, err := json.Marshal(payload)
	if err != nil {
		e.t.Fatal(err)
	}
	return webhook.Job{
		Key: webhook.Key{Repo: strings.ToLower(e.repo.FullName()), Kind: webhook.KindPush}, Event: "push",
		Delivery: "push-" + sha, Installation: e.gh.InstallationID(e.repo), Payload: body,
	}
}

// registryRef starts an in-process registry and returns a tag in it.
func registryRef(t *testing.T) string {
	t.Helper()
	return registrytest.New(t).Ref("acme/catalog:latest")
}

func publishPolicy(image string) string {
	return mergePolicy + "publish:\n  image: " + image + "\n  base: scratch\n"
}

// TestMergeIsPublished merges a pull request and publishes the push the
// merge makes into an in-process registry: the catalog image's digest is in
// the registry under the policy's tag and in the publish check run.
func TestMergeIsPublished(t *testing.T) {
	image := registryRef(t)
	e := newEnv(t, catalogRepo(publishPolicy(image)))
	before := e.repo.Branch("main")
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if !pr.Merged() {
		t.Fatal("not merged")
	}
	merged := e.repo.Branch("main")

	if err := processAll(context.Background(), e.app, e.pushJob("main", before, merged)); err != nil {
		t.Fatal(err)
	}
	run := e.run(merged, PublishCheckRunName)
	if run.Conclusion != "success" {
		t.Fatalf("publish run %s: %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil {
		t.Fatalf("the image is not in the registry: %v", err)
	}
	if !strings.Contains(run.Title, desc.Digest.String()) || !strings.Contains(run.Summary, desc.Digest.String()) {
		t.Errorf("publish run %q does not hold the pushed digest %s", run.Title, desc.Digest)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.Labels[build.ConfigsLabel] != build.ConfigsDir {
		t.Errorf("labels = %v", cfg.Config.Labels)
	}
	if n := e.counter(e.metrics.Publishes, PublishPushed); n != 1 {
		t.Errorf("pushed counter = %v", n)
	}

	// The same commit again: the registry already has it.
	if err := processAll(context.Background(), e.app, e.pushJob("main", before, merged)); err != nil {
		t.Fatal(err)
	}
	if n := e.counter(e.metrics.Publishes, PublishUnchanged); n != 1 {
		t.Errorf("unchanged counter = %v", n)
	}
}

func TestPushesThatPublishNothing(t *testing.T) {
	image := registryRef(t)
	tests := []struct {
		name   string
		policy string
		job    func(e *env) (webhook.Job, string)
	}{
		{"not the default branch", publishPolicy(image), func(e *env) (webhook.Job, string) {
			sha := e.repo.Commit("feature", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v2")}, "feature")
			return e.pushJob("feature", "", sha), sha
		}},
		{"no image in the policy", mergePolicy, func(e *env) (webhook.Job, string) {
			sha := e.repo.Branch("main")
			return e.pushJob("main", "", sha), sha
		}},
		{"superseded by a newer push", publishPolicy(image), func(e *env) (webhook.Job, string) {
			old := e.repo.Branch("main")
			e.repo.Commit("main", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v3")}, "newer")
			return e.pushJob("main", "", old), old
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(tc.policy))
			job, sha := tc.job(e)
			if err := processAll(context.Background(), e.app, job); err != nil {
				t.Fatal(err)
			}
			if runs := e.repo.CheckRuns(sha); len(runs) != 0 {
				t.Errorf("check runs at %s: %+v, want none", sha, runs)
			}
			if n := e.counter(e.metrics.Publishes, PublishPushed); n != 0 {
				t.Errorf("pushed %v times", n)
			}
		})
	}
}

func TestInvalidCatalogIsNotPublished(t *testing.T) {
	image := registryRef(t)
	files := catalogRepo(publishPolicy(image))
	files["catalog/foo/catalog.yaml"] = strings.Replace(fooCatalog, "defaultChannel: stable", "defaultChannel: beta", 1)
	e := newEnv(t, files)
	sha := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", "", sha)); err == nil {
		t.Fatal("publishing an invalid catalog succeeded")
	}
	run := e.run(sha, PublishCheckRunName)
	if run.Conclusion != "failure" || run.Title != "The catalog is invalid" || len(run.Annotations) == 0 {
		t.Fatalf("publish run %s %q with %d annotations", run.Conclusion, run.Title, len(run.Annotations))
	}
	ref, _ := name.ParseReference(image)
	if _, err := remote.Head(ref); err == nil {
		t.Error("an invalid catalog reached the registry")
	}
}

// TestPublishOnPinnedOPMImage: publish.opmImage is the image base opm
// stands for; the App builds on it with opm's entrypoint and names the
// pinned base in the publish check run.
func TestPublishOnPinnedOPMImage(t *testing.T) {
	image := registryRef(t)
	host, _, _ := strings.Cut(image, "/")
	opm, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	opmRef, err := name.ParseReference(host + "/operator-framework/opm:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(opmRef, opm); err != nil {
		t.Fatal(err)
	}
	digest, err := opm.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pinned := host + "/operator-framework/opm@" + digest.String()
	e := newEnv(t, catalogRepo(mergePolicy+"publish:\n  image: "+image+"\n  base: opm\n  opmImage: "+pinned+"\n"))
	sha := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", "", sha)); err != nil {
		t.Fatal(err)
	}
	run := e.run(sha, PublishCheckRunName)
	if run.Conclusion != "success" || !strings.Contains(run.Summary, "| base | `"+pinned+"` |") {
		t.Fatalf("publish run %s %q; want success naming the base %s:\n%s", run.Conclusion, run.Title, pinned, run.Summary)
	}
	// The base has no opm: the run says the image starts without a
	// pre-built serve cache.
	if !strings.Contains(run.Summary, "Build notes:") || !strings.Contains(run.Summary, "--cache-enforce-integrity=false") {
		t.Errorf("publish run summary does not carry the build's notes:\n%s", run.Summary)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/bin/opm" {
		t.Errorf("entrypoint %q, want opm's", cfg.Config.Entrypoint)
	}
}

// TestPushRefusedReadsAsActionable: a registry that refuses the push with
// its error details says so in the publish run as the class, the registry
// and what to do, not as the library's dump of the details.
func TestPushRefusedReadsAsActionable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied","detail":[{"Type":"repository","Name":"acme/catalog","Action":"push"}]}]}`)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	e := newEnv(t, catalogRepo(publishPolicy(host+"/acme/catalog:latest")))
	sha := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", "", sha)); err == nil {
		t.Fatal("a refused push succeeded")
	}
	run := e.run(sha, PublishCheckRunName)
	if run.Conclusion != "failure" {
		t.Fatalf("publish run %s %q", run.Conclusion, run.Title)
	}
	want := "unauthorized: registry " + host + ": the registry refused access (403 Forbidden); check the credentials for it"
	if !strings.Contains(run.Summary, want) {
		t.Errorf("the publish run does not say %q:\n%s", want, run.Summary)
	}
	for _, dump := range []string{"map[", "[map", "DENIED: requested"} {
		if strings.Contains(run.Summary, dump) {
			t.Errorf("the publish run quotes %q:\n%s", dump, run.Summary)
		}
	}
}
