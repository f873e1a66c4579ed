package reconcile

import (
	"archive/tar"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// twoRootRepo is a repository whose one catalog has two roots: bob owns
// package bar in catalog/, carol owns incubator/, where any unowned
// subdirectory is approved by itself.
func twoRootRepo(image string) map[string]string {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	return map[string]string{
		".catalogbot.yaml":           mergePolicy + "catalog:\n  roots: [catalog, incubator]\npublish:\n  image: " + image + "\n  base: scratch\n",
		"OWNERS":                     "approvers:\n  - root-admin\n",
		"catalog/.indexignore":       "OWNERS\n",
		"catalog/bar/OWNERS":         "approvers:\n  - bob\n",
		"catalog/bar/catalog.yaml":   bar,
		"incubator/.indexignore":     "OWNERS\n",
		"incubator/OWNERS":           "approvers:\n  - carol\noptions:\n  auto_approve_unowned_subfolders: true\n",
		"incubator/foo/catalog.yaml": fooCatalog,
	}
}

// publishedFile reads one file of /configs in the image at ref, "" when the
// image has no such file.
func publishedFile(t *testing.T, ref, file string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatalf("the image is not in the registry: %v", err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimPrefix(h.Name, "/") == "configs/"+file {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return string(data)
		}
	}
}

// TestRootsCannotOverlay: the attacks on a catalog of two roots, through the
// App from pull request to published image. Another root's owner, or any
// user where that root approves unowned directories by itself, must not be
// able to replace or hide bob's package bar.
func TestRootsCannotOverlay(t *testing.T) {
	bar := strings.ReplaceAll(fooCatalog, "foo", "bar")
	theirs := strings.ReplaceAll(bar, "bar-bundle:v1.0.0", "bar-bundle:v9.9.9")
	tests := []struct {
		name   string
		author string
		files  map[string]string
		merged bool
	}{
		{"the other root's owner defines bob's package again", "carol", map[string]string{"incubator/bar/catalog.yaml": theirs}, false},
		{"a stranger defines it in an unowned directory", "mallory", map[string]string{"incubator/bar/catalog.yaml": theirs}, false},
		{"a stranger ignores everything in a directory of bob's package's name", "mallory", map[string]string{"incubator/bar/.indexignore": "*\n"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			image := registryRef(t)
			e := newEnv(t, twoRootRepo(image))
			before := e.repo.Branch("main")
			pr := e.openPR(tt.author, "attack", tt.files)
			e.process(pr, "pull_request")
			if pr.Merged() != tt.merged {
				run := e.run(pr.HeadSHA(), CheckRunName)
				t.Fatalf("merged = %v, want %v; check run %s: %s\n%s", pr.Merged(), tt.merged, run.Conclusion, run.Title, run.Summary)
			}
			if !tt.merged {
				run := e.run(pr.HeadSHA(), CheckRunName)
				if run.Conclusion != "failure" || !strings.Contains(run.Summary+run.Text, "incubator/bar/catalog.yaml") {
					t.Errorf("check run %s does not name the second definition:\n%s\n%s", run.Conclusion, run.Summary, run.Text)
				}
				return
			}
			after := e.repo.Branch("main")
			if err := processAll(context.Background(), e.app, e.pushJob("main", before, after)); err != nil {
				t.Fatal(err)
			}
			if run := e.run(after, PublishCheckRunName); run.Conclusion != "success" {
				t.Fatalf("publish %s: %s\n%s", run.Conclusion, run.Title, run.Summary)
			}
			if got := publishedFile(t, image, "catalog/bar/catalog.yaml"); got != bar {
				t.Errorf("bob's package is not in the published image as he approved it:\n%s", got)
			}
		})
	}
}

// TestPublishEachCatalog: a repository of one catalog per version publishes
// each to its own image, named by the catalog, and reports each in a check
// run of its own; a pull request to one version changes that image alone.
func TestPublishEachCatalog(t *testing.T) {
	image := registryRef(t)
	repo := strings.TrimSuffix(image, ":latest")
	files := map[string]string{
		".catalogbot.yaml":                mergePolicy + "catalogs:\n  - each: catalogs/v4.*\npublish:\n  image: \"" + repo + ":{catalog}\"\n  base: scratch\n",
		"OWNERS":                          "approvers:\n  - root-admin\n",
		"catalogs/v4.17/.indexignore":     "OWNERS\n",
		"catalogs/v4.18/.indexignore":     "OWNERS\n",
		"catalogs/v4.17/foo/catalog.yaml": fooCatalog,
		"catalogs/v4.18/foo/catalog.yaml": fooCatalog,
		"catalogs/v4.18/foo/OWNERS":       "approvers:\n  - alice\n",
	}
	e := newEnv(t, files)
	before := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", "", before)); err != nil {
		t.Fatal(err)
	}
	digests := map[string]string{}
	for _, c := range []string{"v4.17", "v4.18"} {
		run := e.run(before, PublishRunName(c))
		if run.Conclusion != "success" {
			t.Fatalf("publish of %s: %s %s\n%s", c, run.Conclusion, run.Title, run.Summary)
		}
		if got := publishedFile(t, repo+":"+c, "foo/catalog.yaml"); got != fooCatalog {
			t.Errorf("%s:%s /configs/foo/catalog.yaml = %q", repo, c, got)
		}
		digests[c] = headOf(t, repo+":"+c)
	}

	pr := e.openPR("alice", "bump", map[string]string{"catalogs/v4.18/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.process(pr, "pull_request")
	if !pr.Merged() {
		run := e.run(pr.HeadSHA(), CheckRunName)
		t.Fatalf("not merged: %s %s\n%s", run.Conclusion, run.Title, run.Summary)
	}
	after := e.repo.Branch("main")
	if err := processAll(context.Background(), e.app, e.pushJob("main", before, after)); err != nil {
		t.Fatal(err)
	}
	if got := headOf(t, repo+":v4.17"); got != digests["v4.17"] {
		t.Errorf("v4.17 moved from %s to %s on a change to v4.18 alone", digests["v4.17"], got)
	}
	if got := headOf(t, repo+":v4.18"); got == digests["v4.18"] {
		t.Errorf("v4.18 did not move on a change to it")
	}
	if got := publishedFile(t, repo+":v4.18", "foo/catalog.yaml"); got != bumpedCatalog("v1.0.1") {
		t.Errorf("v4.18 does not hold the merged change")
	}
}

// headOf is the digest the tag ref names.
func headOf(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, err := remote.Head(r)
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return d.Digest.String()
}
