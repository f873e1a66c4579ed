//go:build e2e

package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/images/imagestest"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestE2EPublishToDockerRegistry drives the service with signed webhooks
// from the fake GitHub: the owner's pull request merges, and the push the
// merge makes publishes the catalog image to Debian's docker-registry,
// where skopeo, a client that shares no code with catalogbot, finds it
// with the digest the publish check run reports and the catalog label.
func TestE2EPublishToDockerRegistry(t *testing.T) {
	skopeo := imagestest.NeedProgram(t, "skopeo", "skopeo")
	host := imagestest.StartDockerRegistry(t)
	image := host + "/acme/catalog:latest"

	e := newEnv(t, catalogRepo(publishPolicy(image)))
	url, d, q := e.serve(t)

	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	opened := e.gh.Payload("pull_request", "opened", githubtest.PayloadArgs{Repo: e.repo, PR: pr.Number})
	if resp := e.gh.Deliver(t, url, serveSecret, "pull_request", opened); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("opened: %d", resp.StatusCode)
	}
	d.wait(t)
	if e.mergesAt(pr.HeadSHA()) != 1 {
		t.Fatalf("the owner's pull request was not merged: %+v", e.repo.Merges())
	}
	push := e.gh.Payload("push", "", githubtest.PayloadArgs{Repo: e.repo})
	if resp := e.gh.Deliver(t, url, serveSecret, "push", push); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("push: %d", resp.StatusCode)
	}
	d.wait(t)
	run := e.run(e.repo.Branch("main"), PublishCheckRunName)
	if run.Conclusion != "success" {
		t.Fatalf("publish run: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
	}

	out, err := exec.Command(skopeo, "inspect", "--tls-verify=false", "docker://"+image).Output()
	if err != nil {
		t.Fatalf("skopeo inspect %s: %v", image, err)
	}
	var inspected struct {
		Digest string            `json:"Digest"`
		Labels map[string]string `json:"Labels"`
	}
	if err := json.Unmarshal(out, &inspected); err != nil {
		t.Fatalf("skopeo inspect output: %v\n%s", err, out)
	}
	if inspected.Digest == "" || !strings.Contains(run.Title, inspected.Digest) {
		t.Errorf("the registry has %s, the publish run says %q", inspected.Digest, run.Title)
	}
	if inspected.Labels[build.ConfigsLabel] != build.ConfigsDir {
		t.Errorf("labels = %v, want %s=%s", inspected.Labels, build.ConfigsLabel, build.ConfigsDir)
	}
	if err := q.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}
