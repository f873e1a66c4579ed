package publish_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/publish"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

// TestPublishSigned publishes a catalog directory signed, publishes it
// again unchanged (no new signature), then a changed catalog (signed
// again), and verifies what each run recorded.
func TestPublishSigned(t *testing.T) {
	ctx := context.Background()
	priv, _, err := sign.GenerateKeyPair([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := sign.LoadKey("cosign.key", priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	target := reg.Host + "/catalog:latest"
	o := options(target)
	o.Signer = signer
	o.Source = sign.Source{Repository: "example/catalog", Commit: "0123456789abcdef0123456789abcdef01234567", Path: "catalog"}
	o.Builder = sign.Builder{ID: "https://github.com/catalogbot/catalogbot", Version: map[string]string{"catalogbot": "test"}}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o.Now = func() time.Time { return now }
	o.Catalog = "v4.20"
	dir := filepath.Join("..", "..", "testdata", "catalogs", "valid")

	first, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != publish.Published || first.Signature != publish.Signed {
		t.Fatalf("first: %s, signature %q", first.Status, first.Signature)
	}
	ref, _ := name.ParseReference(target)
	v, err := sign.Verify(ctx, ref, sign.VerifyOptions{IgnoreLog: true, Key: signer.PublicKey(),
		PredicateTypes: []string{sign.ApprovalPredicateType, sign.ProvenancePredicateType}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Digest.DigestStr() != first.Digest {
		t.Fatalf("verified %s, published %s", v.Digest, first.Digest)
	}
	var prov sign.Provenance
	if err := json.Unmarshal(v.Attestations[sign.ProvenancePredicateType].Predicate, &prov); err != nil {
		t.Fatal(err)
	}
	p := prov.BuildDefinition.ExternalParameters
	if p.Source != o.Source || p.Base != "scratch" || p.BaseName != "" || p.Image != target || prov.RunDetails.Builder.ID != o.Builder.ID ||
		prov.BuildDefinition.BuildType != sign.BuildType || prov.RunDetails.Metadata.FinishedOn != "2026-01-02T03:04:05Z" {
		t.Errorf("provenance = %+v", prov)
	}
	if len(prov.BuildDefinition.ResolvedDependencies) != 1 ||
		prov.BuildDefinition.ResolvedDependencies[0].URI != "git+https://github.com/example/catalog" {
		t.Errorf("resolved dependencies = %+v", prov.BuildDefinition.ResolvedDependencies)
	}
	var appr sign.Approval
	if err := json.Unmarshal(v.Attestations[sign.ApprovalPredicateType].Predicate, &appr); err != nil {
		t.Fatal(err)
	}
	if appr.ApprovalsRecorded || appr.Commit != o.Source.Commit || !strings.Contains(appr.Note, "approvals are not known") || appr.Packages == nil {
		t.Errorf("approval = %+v", appr)
	}
	// What catalogd will serve, recorded in both predicates.
	if appr.Catalogd == nil || *appr.Catalogd != *first.Catalogd || p.Catalogd == nil || *p.Catalogd != *first.Catalogd || first.Catalogd.Objects == 0 {
		t.Errorf("approval catalogd %+v, provenance catalogd %+v; want the publish's %+v", appr.Catalogd, p.Catalogd, first.Catalogd)
	}
	// What the tag is for, and when: what verify compares.
	if appr.Catalog != "v4.20" || appr.Image != target || appr.Published != "2026-01-02T03:04:05Z" || p.Catalog != "v4.20" {
		t.Errorf("approval catalog %q, image %q, published %q; provenance catalog %q", appr.Catalog, appr.Image, appr.Published, p.Catalog)
	}

	// The same catalog: the digest is unchanged and signed already.
	second, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if second.Status != publish.Unchanged || second.Signature != publish.AlreadySigned {
		t.Fatalf("second: %s, signature %q", second.Status, second.Signature)
	}
	if n := layers(t, sign.Tag(v.Digest, "sig")); n != 1 {
		t.Errorf("after an unchanged publish the digest has %d signatures, want 1", n)
	}

	// Another catalog: a new digest, signed, with the previous recorded.
	third, err := publish.Publish(ctx, publish.Source{Dir: filepath.Join(dir, "cert-rotator")}, o)
	if err != nil {
		t.Fatal(err)
	}
	if third.Status != publish.Published || third.Signature != publish.Signed || third.Digest == first.Digest {
		t.Fatalf("third: %s %s, signature %q", third.Status, third.Digest, third.Signature)
	}
	v3, err := sign.Verify(ctx, ref, sign.VerifyOptions{IgnoreLog: true, Key: signer.PublicKey(), PredicateTypes: []string{sign.ApprovalPredicateType}})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v3.Attestations[sign.ApprovalPredicateType].Predicate, &appr); err != nil {
		t.Fatal(err)
	}
	if appr.Previous == nil || appr.Previous.Digest != first.Digest {
		t.Errorf("approval of the third run records previous %+v, want %s", appr.Previous, first.Digest)
	}

	// The change reverted: the tag moves back to the first image, which
	// keeps its one signature and gets the approval of this publication,
	// the newest of the target.
	now = now.Add(time.Hour)
	fourth, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if fourth.Status != publish.Published || fourth.Signature != publish.AlreadySigned || fourth.Digest != first.Digest {
		t.Fatalf("fourth: %s %s, signature %q", fourth.Status, fourth.Digest, fourth.Signature)
	}
	if n := layers(t, sign.Tag(v.Digest, "sig")); n != 1 {
		t.Errorf("after a revert the digest has %d signatures, want 1", n)
	}
	v4, err := sign.Verify(ctx, ref, sign.VerifyOptions{IgnoreLog: true, Key: signer.PublicKey(), PredicateTypes: []string{sign.ApprovalPredicateType}})
	if err != nil {
		t.Fatal(err)
	}
	appr = sign.Approval{}
	if err := json.Unmarshal(v4.Attestations[sign.ApprovalPredicateType].Predicate, &appr); err != nil {
		t.Fatal(err)
	}
	if appr.Published != "2026-01-02T04:04:05Z" || appr.Previous == nil || appr.Previous.Digest != third.Digest {
		t.Errorf("approval after the revert: published %q, previous %+v; want a new one after %s", appr.Published, appr.Previous, third.Digest)
	}
}

// TestBuildOnly rebuilds a published catalog without touching the target:
// the same digest, nothing written.
func TestBuildOnly(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	target := reg.Host + "/catalog:latest"
	dir := filepath.Join("..", "..", "testdata", "catalogs", "valid")
	pub, err := publish.Publish(ctx, publish.Source{Dir: dir}, options(target))
	if err != nil {
		t.Fatal(err)
	}
	reg.Reset()
	o := options("")
	o.BuildOnly = true
	built, err := publish.Publish(ctx, publish.Source{Dir: dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	if built.Status != publish.Built || built.Digest != pub.Digest {
		t.Fatalf("build only: %s %s, want built %s", built.Status, built.Digest, pub.Digest)
	}
	if n := len(reg.Requests()); n != 0 {
		t.Errorf("a build-only publish sent %d requests to the registry", n)
	}
}

func TestPublishSignedLayout(t *testing.T) {
	priv, _, _ := sign.GenerateKeyPair(nil)
	signer, err := sign.LoadKey("k", priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := options("oci:" + t.TempDir())
	o.Signer = signer
	_, err = publish.Publish(context.Background(), publish.Source{Dir: filepath.Join("..", "..", "testdata", "catalogs", "valid")}, o)
	if err == nil || !strings.Contains(err.Error(), "signing needs a registry target") {
		t.Fatalf("err = %v", err)
	}
}

func layers(t *testing.T, tag name.Tag) int {
	t.Helper()
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	return len(m.Layers)
}
