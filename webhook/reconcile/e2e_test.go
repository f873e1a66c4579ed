//go:build e2e

package reconcile

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/build"
	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestE2EPublishToDockerRegistry drives the service with signed webhooks
// from the fake GitHub: the owner's pull request merges, and the push the
// merge makes publishes the catalog image to Debian's docker-registry,
// where skopeo, a client that shares no code with catalogbot, finds it
// with the digest the publish check run reports and the catalog label.
func TestE2EPublishToDockerRegistry(t *testing.T) {
	skopeo := registrytest.NeedProgram(t, "skopeo", "skopeo")
	host := registrytest.StartDockerRegistry(t)
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

// TestE2EPublishWithAuthFile publishes to docker-registry with htpasswd
// basic authentication: with the App's publish.authFile the push logs in,
// as skopeo with the same credentials confirms; without it the publish
// check run fails as unauthorized and shows no secret.
func TestE2EPublishWithAuthFile(t *testing.T) {
	const user, password = "publisher", "app-Pa55w0rd-not-to-be-printed"
	skopeo := registrytest.NeedProgram(t, "skopeo", "skopeo")
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "DOCKER_CONFIG": filepath.Join(home, ".docker"), "REGISTRY_AUTH_FILE": "",
		"XDG_RUNTIME_DIR": filepath.Join(home, "run"), "XDG_CONFIG_HOME": filepath.Join(home, ".config")} {
		t.Setenv(k, v)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	htpasswd := filepath.Join(home, "htpasswd")
	if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := registrytest.StartDockerRegistryAuth(t, htpasswd)
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	authFile := filepath.Join(home, "registry", "config.json")
	if err := os.MkdirAll(filepath.Dir(authFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(authFile, []byte(`{"auths":{"`+host+`":{"auth":"`+basic+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name       string
		authFile   string
		conclusion string
	}{
		{"with the auth file", authFile, "success"},
		{"without credentials", "", "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			image := host + "/acme/catalog:" + strings.ReplaceAll(tc.name, " ", "-")
			e := newEnv(t, catalogRepo(publishPolicy(image)))
			e.app.cfg.Publish.AuthFile = tc.authFile
			sha := e.repo.Branch("main")
			processAll(context.Background(), e.app, e.pushJob("main", "", sha))
			run := e.run(sha, PublishCheckRunName)
			if run.Conclusion != tc.conclusion {
				t.Fatalf("publish run: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
			}
			for _, leak := range []string{password, basic} {
				if strings.Contains(run.Title+run.Summary, leak) {
					t.Errorf("the publish run shows the secret:\n%s", run.Summary)
				}
			}
			if tc.conclusion == "failure" {
				if !strings.Contains(run.Summary, "unauthorized: registry "+host+": the registry refused access") || !strings.Contains(run.Summary, host) {
					t.Errorf("the failed publish does not say the registry refused access:\n%s", run.Summary)
				}
				return
			}
			out, err := exec.Command(skopeo, "inspect", "--tls-verify=false", "--creds", user+":"+password, "docker://"+image).Output()
			if err != nil {
				t.Fatalf("skopeo inspect %s: %v", image, err)
			}
			var inspected struct{ Digest string }
			if err := json.Unmarshal(out, &inspected); err != nil {
				t.Fatal(err)
			}
			if inspected.Digest == "" || !strings.Contains(run.Title, inspected.Digest) {
				t.Errorf("the registry has %s, the publish run says %q", inspected.Digest, run.Title)
			}
		})
	}
}
