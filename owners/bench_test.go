package owners_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/owners"
)

// benchTree generates, deterministically, a catalog repository with
// 1 + groups + groups*perGroup OWNERS files: a root, one per group of
// packages and one per package, with aliases, filters and no_parent_owners
// mixed in as real trees have them.
func benchTree(groups, perGroup int) fstest.MapFS {
	fsys := fstest.MapFS{
		"OWNERS": {Data: []byte("approvers: [root-admins]\nreviewers: [root-reviewers]\n")},
	}
	aliases := "aliases:\n  root-admins: [admin-a, admin-b, admin-c]\n  root-reviewers: [rev-a, rev-b]\n"
	for g := range groups {
		aliases += fmt.Sprintf("  group-%02d-leads: [lead-%02d-a, lead-%02d-b]\n", g, g, g)
		fsys[fmt.Sprintf("catalogs/g%02d/OWNERS", g)] = &fstest.MapFile{Data: fmt.Appendf(nil,
			"filters:\n  \".*\":\n    approvers: [group-%02d-leads]\n  \"\\\\.md$\":\n    reviewers: [docs-%02d]\n", g, g)}
		for p := range perGroup {
			body := fmt.Sprintf("approvers:\n  - owner-%02d-%03d\n  - Co-Owner-%02d-%03d\nreviewers:\n  - '@reviewer-%03d'\nlabels:\n  - package/p%03d\n", g, p, g, p, p, p)
			if p%3 == 0 {
				body += "options:\n  no_parent_owners: true\n"
			}
			fsys[fmt.Sprintf("catalogs/g%02d/p%03d/OWNERS", g, p)] = &fstest.MapFile{Data: []byte(body)}
		}
	}
	fsys["OWNERS_ALIASES"] = &fstest.MapFile{Data: []byte(aliases)}
	return fsys
}

// benchPaths spreads n changed files over the generated packages, a few
// directories deep, as bundle manifests are.
func benchPaths(n, groups, perGroup int) []string {
	out := make([]string, n)
	for i := range out {
		g, p := i%groups, (i/groups)%perGroup
		out[i] = fmt.Sprintf("catalogs/g%02d/p%03d/1.%d.0/manifests/csv.yaml", g, p, i)
	}
	return out
}

const benchGroups, benchPerGroup = 50, 100 // 5,051 OWNERS files

func loadBench(b *testing.B) *owners.Repo {
	b.Helper()
	r, err := owners.Load(benchTree(benchGroups, benchPerGroup), owners.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if n := len(r.Files()); n < 5000 {
		b.Fatalf("%d OWNERS files, want at least 5000", n)
	}
	return r
}

// BenchmarkResolve3000 resolves the approvers of 3,000 changed files in a
// tree of 5,000 OWNERS files, after the load. Budget: 50 ms per op.
func BenchmarkResolve3000(b *testing.B) {
	r := loadBench(b)
	paths := benchPaths(3000, benchGroups, benchPerGroup)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			if res := r.Resolve(p); len(res.Approvers) == 0 {
				b.Fatalf("%s: no approvers", p)
			}
		}
	}
}

// BenchmarkEvaluate3000 computes the whole approval state of a change of
// 3,000 files in the same tree: resolution, the required set, and the
// suggestions for everything still waiting.
func BenchmarkEvaluate3000(b *testing.B) {
	r := loadBench(b)
	paths := benchPaths(3000, benchGroups, benchPerGroup)
	files := make([]change.File, len(paths))
	for i, p := range paths {
		files[i] = change.File{Path: p, Status: change.Modified}
	}
	in := owners.Input{
		Change:    &change.Change{Number: 42, Author: "owner-00-000", HeadSHA: "h", Files: files},
		Approvals: []owners.Approval{{User: "lead-01-a", SHA: "h"}, {User: "owner-02-000", SHA: "h"}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if st := r.Evaluate(in); len(st.Suggested) == 0 {
			b.Fatal("nothing suggested")
		}
	}
}

// BenchmarkLoad5000 loads the generated tree of 5,000 OWNERS files from
// disk. (fstest.MapFS is not used here: it lists a directory by scanning
// every file of the map, which would dominate the measurement.)
func BenchmarkLoad5000(b *testing.B) {
	dir := b.TempDir()
	for name, f := range benchTree(benchGroups, benchPerGroup) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fsys := os.DirFS(dir)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := owners.Load(fsys, owners.LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadKubernetesCommunity loads the kubernetes/community tree from
// disk (114 OWNERS files and a 229-line OWNERS_ALIASES). Budget: 100 ms.
func BenchmarkLoadKubernetesCommunity(b *testing.B) {
	dir := filepath.Join(sharedCorpus(b), "owners", "kubernetes-community")
	fsys := os.DirFS(dir)
	b.ReportAllocs()
	for b.Loop() {
		r, err := owners.Load(fsys, owners.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Files()) < 100 {
			b.Fatalf("%d OWNERS files", len(r.Files()))
		}
	}
}
