package reconcile

import (
	"context"
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/publisher/sign/signtest"
)

// TestMergesArePublishedSigned merges two pull requests, one push each,
// with a policy that asks for a signed image: each publication is signed,
// and its approval attestation lists the merge it ships, with who
// approved it under which OWNERS file. The first publication since the
// App started cannot know what was published before, and says so.
func TestMergesArePublishedSigned(t *testing.T) {
	image := registryRef(t)
	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "pw")
	signer, err := sign.LoadKeyFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, catalogRepo(publishPolicy(image)+"  sign: key\n"))
	e.app.cfg.Publish.SignKey = keyFile
	// The App logs what it signs, in the log its configuration names.
	rekor := signtest.NewRekor(t)
	e.app.cfg.Publish.TlogUpload, e.app.cfg.Publish.RekorURL = true, rekor.URL
	logKey, err := (&sign.Rekor{URL: rekor.URL}).PublicKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}

	approval := func(tag string) (sign.Approval, string) {
		t.Helper()
		before := e.repo.Branch("main")
		pr := e.openPR("alice", "bump-"+tag, map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog(tag)})
		e.process(pr, "pull_request")
		if !pr.Merged() {
			t.Fatal("not merged")
		}
		merged := e.repo.Branch("main")
		if err := processAll(context.Background(), e.app, e.pushJob("main", before, merged)); err != nil {
			t.Fatal(err)
		}
		if run := e.run(merged, PublishCheckRunName); run.Conclusion != "success" || !strings.Contains(run.Summary, "| signature | signed,") {
			t.Fatalf("publish run %s: %s\n%s", run.Conclusion, run.Title, run.Summary)
		}
		v, err := sign.Verify(context.Background(), ref, sign.VerifyOptions{LogKeys: []crypto.PublicKey{logKey}, Key: signer.PublicKey(), PredicateTypes: []string{sign.ApprovalPredicateType}})
		if err != nil {
			t.Fatal(err)
		}
		var appr sign.Approval
		if err := json.Unmarshal(v.Attestations[sign.ApprovalPredicateType].Predicate, &appr); err != nil {
			t.Fatal(err)
		}
		if appr.Commit != merged || appr.Policy.Path != ".catalogbot.yaml" || appr.Policy.Blob == "" {
			t.Errorf("approval of %s: commit %s, policy %+v", merged, appr.Commit, appr.Policy)
		}
		// Whose publication of which target: what verify checks.
		// What catalogd will serve: in the attestation and in the run.
		if appr.Catalogd == nil || appr.Catalogd.Objects == 0 || !strings.Contains(e.run(merged, PublishCheckRunName).Summary, "| catalogd view | ") ||
			!strings.Contains(e.run(merged, PublishCheckRunName).Summary, appr.Catalogd.Digest) {
			t.Errorf("approval of %s: catalogd %+v; publish run:\n%s", merged, appr.Catalogd, e.run(merged, PublishCheckRunName).Summary)
		}
		if appr.Repository != "acme/catalog" || appr.Image != image || appr.Catalog != "" || appr.Published == "" {
			t.Errorf("approval of %s: repository %q, image %q, catalog %q, published %q", merged, appr.Repository, appr.Image, appr.Catalog, appr.Published)
		}
		if len(appr.Packages) != 1 || appr.Packages[0].Name != "foo" || len(appr.Packages[0].PullRequests) != 1 {
			t.Fatalf("approval packages = %+v", appr.Packages)
		}
		got := appr.Packages[0].PullRequests[0]
		if got.Number != pr.Number || got.Head != pr.HeadSHA() || got.Merge != merged || got.Author != "alice" ||
			strings.Join(got.Approvers, ",") != "alice" || len(got.Owners) != 1 || got.Owners[0].Path != "catalog/foo/OWNERS" || got.Owners[0].Commit != before {
			t.Errorf("pull request record = %+v", got)
		}
		return appr, before
	}

	first, _ := approval("v1.0.1")
	if first.ApprovalsRecorded || !strings.Contains(first.Note, "previous publication is not known") {
		t.Errorf("first publication: recorded %v, note %q", first.ApprovalsRecorded, first.Note)
	}
	if n := len(rekor.Entries()); n != 3 {
		t.Errorf("%d log entries after the first publication, want 3", n)
	}
	second, before := approval("v1.0.2")
	if !second.ApprovalsRecorded || second.Note != "" || second.Previous == nil || second.Previous.Commit != before || second.Previous.Digest == "" {
		t.Errorf("second publication: recorded %v, note %q, previous %+v", second.ApprovalsRecorded, second.Note, second.Previous)
	}
}

// TestPublishLogDown: a transparency log that refuses the upload fails
// the publish, naming the log, and the tag is not moved.
func TestPublishLogDown(t *testing.T) {
	image := registryRef(t)
	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(keyFile, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COSIGN_PASSWORD", "pw")
	rekor := signtest.NewRekor(t)
	rekor.Fail = true
	e := newEnv(t, catalogRepo(publishPolicy(image)+"  sign: key\n"))
	e.app.cfg.Publish.SignKey = keyFile
	e.app.cfg.Publish.TlogUpload, e.app.cfg.Publish.RekorURL = true, rekor.URL
	sha := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", strings.Repeat("0", 40), sha)); err == nil {
		t.Fatal("a publish whose log upload failed succeeded")
	}
	run := e.run(sha, PublishCheckRunName)
	if run.Conclusion != "failure" || !strings.Contains(run.Summary, "transparency log "+rekor.URL+": 500 Internal Server Error") {
		t.Fatalf("publish run %s: %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Head(ref); err == nil {
		t.Fatal("the tag was pushed though the log refused the signature")
	}
}

// TestPublishCannotSign: a policy that asks for a signature the App has no
// key for fails the publish, and nothing is pushed.
func TestPublishCannotSign(t *testing.T) {
	image := registryRef(t)
	e := newEnv(t, catalogRepo(publishPolicy(image)+"  sign: key\n"))
	sha := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", strings.Repeat("0", 40), sha)); err == nil {
		t.Fatal("a publish that cannot sign succeeded")
	}
	run := e.run(sha, PublishCheckRunName)
	if run.Conclusion != "failure" || run.Title != "Could not sign the catalog image" || !strings.Contains(run.Summary, "publisher has no signing key") {
		t.Fatalf("publish run %s: %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
}
