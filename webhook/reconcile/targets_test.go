package reconcile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// TestPublishTargetOfAnotherRepository: a second repository the App serves
// whose policy names the first one's image gets neither the App's push nor
// its signature there. The refusal is the publish check run's, and the
// registry is as it was, not even asked. A target the service's operator
// grants the repository is published to.
func TestPublishTargetOfAnotherRepository(t *testing.T) {
	reg := registrytest.New(t)
	victim := reg.Ref("acme/catalog:latest")

	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "pw")

	for _, tc := range []struct {
		name, target string
		grants       []policy.TargetGrant
		published    bool
		// byInstallation grants reg.Host/shared/ to the installation
		// of the second repository.
		byInstallation bool
	}{
		{name: "another repository's image", target: victim},
		{name: "another repository's, under it", target: reg.Ref("acme/catalog/v4.20:latest")},
		{name: "its own owner's other repository", target: reg.Ref("mallory/other:latest")},
		{name: "granted elsewhere, not there", target: victim,
			grants: []policy.TargetGrant{{Repositories: []string{"mallory/*"}, Prefixes: []string{reg.Host + "/shared/mallory"}}}},
		{name: "its own namespace", target: reg.Ref("mallory/catalog:latest"), published: true},
		{name: "granted by the operator", target: reg.Ref("shared/mallory:latest"), published: true,
			grants: []policy.TargetGrant{{Repositories: []string{"mallory/*"}, Prefixes: []string{reg.Host + "/shared/mallory"}}}},
		{name: "granted to the installation", target: reg.Ref("shared/by-installation:latest"), published: true, byInstallation: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// acme/catalog publishes its catalog, signed, to its own
			// namespace; then mallory/catalog, which the App serves too,
			// pushes.
			e := newEnv(t, catalogRepo(publishPolicy(victim)+"  sign: key\n"))
			e.app.cfg.Publish.SignKey = keyFile
			e.app.cfg.Publish.Targets = tc.grants
			if err := processAll(context.Background(), e.app, e.pushJob("main", "", e.repo.Branch("main"))); err != nil {
				t.Fatalf("acme/catalog's publish: %v", err)
			}
			want := headOf(t, victim)
			// mallory's catalog is its own: over acme's image it would
			// be a new digest, pushed, tagged and signed.
			files := catalogRepo(publishPolicy(tc.target) + "  sign: key\n")
			files["catalog/foo/catalog.yaml"] = bumpedCatalog("v6.6.6")
			e.repo = e.gh.AddRepo("mallory", "catalog", files)
			if tc.byInstallation {
				e.app.cfg.Publish.Targets = []policy.TargetGrant{{Installations: []int64{e.gh.InstallationID(e.repo)}, Prefixes: []string{reg.Host + "/shared/"}}}
			}
			sha := e.repo.Branch("main")
			reg.Reset()

			err := processAll(context.Background(), e.app, e.pushJob("main", "", sha))
			run := e.run(sha, PublishCheckRunName)
			if tc.published {
				if err != nil || run.Conclusion != "success" {
					t.Fatalf("publish: %v; run %s: %s\n%s", err, run.Conclusion, run.Title, run.Summary)
				}
				return
			}
			if err == nil || run.Conclusion != "failure" || run.Title != "The publish target is not this repository's" ||
				!strings.Contains(run.Summary, "Nothing was built, pushed or signed") || !strings.Contains(run.Summary, "mallory/catalog") {
				t.Fatalf("publish: %v; run %s: %s\n%s", err, run.Conclusion, run.Title, run.Summary)
			}
			if n := len(reg.Requests()); n != 0 {
				t.Errorf("the registry was asked %d times: %+v", n, reg.Requests())
			}
			if got := headOf(t, victim); got != want {
				t.Errorf("%s moved to %s", victim, got)
			}
		})
	}
}
