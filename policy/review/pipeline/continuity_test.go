package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// The catalogs of the continuity cases: v4.17, v4.18 and v4.19 each hold
// foo's stable channel 1.0.0 -> 1.1.0 -> 1.2.0.
var (
	continuityFoo  = releasePackage + releaseStable + releaseBundles("1.0.0", "1.1.0", "1.2.0")
	continuityNext = releasePackage + releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"},
		releaseEntry{name: "1.2.0", replaces: "1.1.0"}, releaseEntry{name: "1.3.0", replaces: "1.2.0"}) + releaseBundles("1.0.0", "1.1.0", "1.2.0", "1.3.0")
	continuityBase = map[string]string{
		"OWNERS":                          "approvers:\n  - root-admin\n",
		"catalogs/v4.17/foo/catalog.yaml": continuityFoo,
		"catalogs/v4.18/foo/catalog.yaml": continuityFoo,
		"catalogs/v4.19/foo/catalog.yaml": continuityFoo,
		"catalogs/v4.19/bar/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "bar"),
	}
)

func TestReleaseContinuity(t *testing.T) {
	const series = "catalogs:\n  - each: catalogs/v4.*\n"
	const strict = series + "release:\n  continuity: error\n"
	type want struct {
		rule, at string
		sev      checks.Severity
		says     []string
	}
	// 1.3.0 added to v4.18 alone: clusters that install it on 4.18 find
	// nothing in v4.19 when they upgrade.
	onlyInV418 := map[string]string{"catalogs/v4.18/foo/catalog.yaml": continuityNext}
	tests := []struct {
		name   string
		policy string
		// base edits continuityBase; "" deletes a file.
		base     map[string]string
		edits    map[string]string
		approver string
		want     checks.Conclusion
		findings []want
		summary  string
	}{
		{
			name:   "a release added to every catalog",
			policy: series,
			edits: map[string]string{
				"catalogs/v4.17/foo/catalog.yaml": continuityNext,
				"catalogs/v4.18/foo/catalog.yaml": continuityNext,
				"catalogs/v4.19/foo/catalog.yaml": continuityNext,
			},
			want: checks.Success,
		},
		{
			name:   "a release added to one catalog but not the next is a warning",
			policy: series,
			edits:  onlyInV418,
			want:   checks.Success,
			findings: []want{{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:48", sev: checks.SeverityWarning, says: []string{
				"a cluster upgraded from OpenShift 4.18 to 4.19 with foo.v1.3.0 (version 1.3.0) installed from channel stable finds no upgrade in catalog v4.19",
			}}},
			summary: "1 bundle of a catalog would find no upgrade in the next catalog after an OpenShift upgrade (RG5)",
		},
		{
			name:     "release.continuity: error fails it",
			policy:   strict,
			edits:    onlyInV418,
			want:     checks.Failure,
			findings: []want{{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:48", sev: checks.SeverityError}},
			summary:  "The change strands 1 bundle between consecutive catalogs (RG5). Keep each stranded bundle, or an upgrade from it, in the next catalog",
		},
		{
			name:     "a root approver allows it",
			policy:   strict,
			edits:    onlyInV418,
			approver: "root-admin",
			want:     checks.Success,
			findings: []want{{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:48", sev: checks.SeverityWarning, says: []string{"allowed: approved by root approver root-admin"}}},
		},
		{
			name:   "release.continuity: ignore",
			policy: series + "release:\n  continuity: ignore\n",
			edits:  onlyInV418,
			want:   checks.Success,
		},
		{
			name:   "catalogs not named by version are no series",
			policy: "catalogs:\n  - each: catalogs/*\n",
			edits:  map[string]string{"catalogs/latest/foo/catalog.yaml": continuityFoo, "catalogs/v4.18/foo/catalog.yaml": continuityNext},
			want:   checks.Success,
		},
		{
			name:   "the upgrade path taken out of the next catalog",
			policy: strict,
			edits: map[string]string{"catalogs/v4.18/foo/catalog.yaml": releasePackage +
				releaseChannel("stable", releaseEntry{name: "1.1.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseBundles("1.0.0", "1.1.0", "1.2.0")},
			want: checks.Failure,
			findings: []want{
				// The guard: v4.18 loses an entry.
				{rule: "RG2", at: "catalogs/v4.18/foo/catalog.yaml:10", sev: checks.SeverityError},
				// v4.17's 1.0.0 no longer has an upgrade in v4.18.
				{rule: "RG5", at: "catalogs/v4.17/foo/catalog.yaml:16", sev: checks.SeverityError, says: []string{"from OpenShift 4.17 to 4.18 with foo.v1.0.0"}},
			},
			summary: "The change takes away 1 release or upgrade path and strands 1 bundle between consecutive catalogs (RG5). Deprecate",
		},
		{
			name:   "a break the base has already is pre-existing",
			policy: strict,
			base:   map[string]string{"catalogs/v4.19/foo/catalog.yaml": releasePackage + releaseChannel("stable", releaseEntry{name: "1.2.0"}) + releaseBundles("1.2.0")},
			edits:  map[string]string{"catalogs/v4.18/foo/catalog.yaml": continuityNext, "catalogs/v4.19/foo/catalog.yaml": releasePackage + releaseChannel("stable", releaseEntry{name: "1.2.0"}, releaseEntry{name: "1.3.0", replaces: "1.2.0"}) + releaseBundles("1.2.0", "1.3.0")},
			want:   checks.Success,
			findings: []want{
				{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:18", sev: checks.SeverityWarning, says: []string{"foo.v1.0.0", "(pre-existing: also on the base branch)"}},
				{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:28", sev: checks.SeverityWarning, says: []string{"foo.v1.1.0", "(pre-existing: also on the base branch)"}},
			},
		},
		{
			name:   "a package the next catalog dropped before is not judged",
			policy: strict,
			base:   map[string]string{"catalogs/v4.19/foo/catalog.yaml": ""},
			edits:  onlyInV418,
			want:   checks.Success,
		},
		{
			name:   "a change that drops the package from the next catalog",
			policy: strict,
			edits:  map[string]string{"catalogs/v4.19/foo/catalog.yaml": changetest.Delete},
			want:   checks.Failure,
			findings: []want{
				{rule: "RG3", at: "catalogs/v4.19/foo/catalog.yaml:6"},
				{rule: "RG1", at: "catalogs/v4.19/foo/catalog.yaml:16"},
				{rule: "RG1", at: "catalogs/v4.19/foo/catalog.yaml:26"},
				{rule: "RG1", at: "catalogs/v4.19/foo/catalog.yaml:36"},
				{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:16", says: []string{"package foo is in catalog v4.19 on the base branch and this change takes it out", "root approver"}},
				{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:26"},
				{rule: "RG5", at: "catalogs/v4.18/foo/catalog.yaml:36"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			files := map[string]string{policy.FileName: tt.policy}
			for k, v := range continuityBase {
				files[k] = v
			}
			for k, v := range tt.base {
				files[k] = v
				if v == "" {
					delete(files, k)
				}
			}
			base := r.Commit("base", files)
			head := r.Commit("change", tt.edits)
			c, b, h, err := change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "bob"
			in := resolvedInput(t, tt.policy, c, b, h)
			if tt.approver != "" {
				in.Approvals = []owners.Approval{{User: tt.approver, SHA: head, Time: time.Unix(1, 0), Via: owners.ViaReview}}
			}
			res := Release{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion %s, want %s\n%s", res.Conclusion, tt.want, res.Summary)
			}
			if !strings.Contains(res.Summary, tt.summary) {
				t.Errorf("the summary does not say %q:\n%s", tt.summary, res.Summary)
			}
			if len(res.Findings) != len(tt.findings) {
				t.Fatalf("%d findings, want %d:\n%s", len(res.Findings), len(tt.findings), describe(res.Findings))
			}
			for i, w := range tt.findings {
				f := res.Findings[i]
				if at := fmt.Sprintf("%s:%d", f.File, f.Line); f.Rule != w.rule || at != w.at {
					t.Errorf("finding %d is %s at %s, want %s at %s: %s", i, f.Rule, at, w.rule, w.at, f.Message)
				}
				if w.sev != "" && f.Severity != w.sev {
					t.Errorf("finding %d is a %s, want a %s", i, f.Severity, w.sev)
				}
				for _, s := range w.says {
					if !strings.Contains(f.Message, s) {
						t.Errorf("finding %d does not say %q:\n%s", i, s, f.Message)
					}
				}
			}
		})
	}
}

func describe(fs []checks.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s %s:%d %s\n", f.Rule, f.Severity, f.File, f.Line, f.Message)
	}
	return b.String()
}

// TestReleaseContinuityReal runs pull requests on the real series of
// community-operators-prod catalogs v4.15 to v4.22 (testdata): a change
// to nfs-provisioner-operator in v4.19 and v4.20 that keeps what they
// mean passes; one that takes v4.20's upgrade path from v0.0.8 away
// strands the clusters that run v0.0.8 on OpenShift 4.19; and
// kubevirt-wol, which the real series drops after v4.20, is not judged
// against v4.21.
func TestReleaseContinuityReal(t *testing.T) {
	files, err := changetest.ReadFiles(filepath.Join("..", "..", "..", "testdata", "community-operators-prod", "catalogs"))
	if err != nil {
		t.Fatal(err)
	}
	const pol = "catalogs:\n  - each: catalogs/v4.*\nrelease:\n  continuity: error\n"
	repo := map[string]string{policy.FileName: pol}
	for k, v := range files {
		repo["catalogs/"+k] = v
	}
	const (
		v419     = "catalogs/v4.19/nfs-provisioner-operator/catalog.yaml"
		v420     = "catalogs/v4.20/nfs-provisioner-operator/catalog.yaml"
		kubevirt = "catalogs/v4.20/kubevirt-wol/catalog.yaml"
	)
	older, newer := repo[v419], repo[v420]
	cut := strings.Replace(newer, "  replaces: nfs-provisioner-operator.v0.0.8\n", "", 1)
	cut = strings.Replace(cut, "- name: nfs-provisioner-operator.v0.0.8\n", "", 1)
	if older == "" || cut == newer || repo[kubevirt] == "" {
		t.Fatal("the fixture changed: a catalog is missing or has no upgrade path to cut")
	}
	tests := []struct {
		name  string
		edits map[string]string
		// stranded are the RG5 findings, as file:line bundle.
		stranded []string
	}{
		// A change to a catalog file that keeps its meaning touches the
		// package in both catalogs.
		{name: "the real pair", edits: map[string]string{v419: older + "\n", v420: newer + "\n"}},
		{name: "the upgrade path cut in the newer catalog", edits: map[string]string{v420: cut},
			stranded: []string{v419 + ":14 nfs-provisioner-operator.v0.0.8"}},
		{name: "a package the next catalog never had", edits: map[string]string{kubevirt: repo[kubevirt] + "\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", repo)
			head := r.Commit("change", tt.edits)
			c, b, h, err := change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := policy.Parse(policy.FileName, []byte(pol))
			p, targets, err := p.Resolved(b, h)
			if err != nil {
				t.Fatal(err)
			}
			res := Release{}.Run(context.Background(), &Input{Change: c, Base: b, Head: h, Policy: p, Targets: targets})
			var got []string
			for _, f := range res.Findings {
				if f.Rule == "RG5" {
					got = append(got, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Bundle))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.stranded, "\n") {
				t.Errorf("stranded:\n%s\nwant:\n%s\n%s", strings.Join(got, "\n"), strings.Join(tt.stranded, "\n"), describe(res.Findings))
			}
		})
	}
}

// BenchmarkReleaseSeries is the release check on the real series of
// community-operators-prod catalogs v4.15 to v4.22 (testdata), for a
// change to one package in one catalog (libredb-studio-operator in
// v4.18): with continuity the package is also read in v4.17 and v4.19
// and both steps judged; with ignore, only the guard runs.
func BenchmarkReleaseSeries(b *testing.B) {
	files, err := changetest.ReadFiles(filepath.Join("..", "..", "..", "testdata", "community-operators-prod", "catalogs"))
	if err != nil {
		b.Fatal(err)
	}
	base := map[string]string{}
	for k, v := range files {
		base["catalogs/"+k] = v
	}
	const touched = "catalogs/v4.18/libredb-studio-operator/catalog.yaml"
	for _, mode := range []string{policy.ContinuityWarning, policy.ContinuityIgnore} {
		b.Run(mode, func(b *testing.B) {
			pol := "catalogs:\n  - each: catalogs/v4.*\nrelease:\n  continuity: " + mode + "\n"
			r := changetest.NewRepo(b)
			base[policy.FileName] = pol
			bc := r.Commit("base", base)
			hc := r.Commit("change", map[string]string{touched: base[touched] + "\n"})
			c, bt, ht, err := change.FromGit(r.Dir, bc, hc)
			if err != nil {
				b.Fatal(err)
			}
			p, _ := policy.Parse(policy.FileName, []byte(pol))
			p, targets, err := p.Resolved(bt, ht)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				// A new Input each time: the loader caches per Input.
				res := Release{}.Run(context.Background(), &Input{Change: c, Base: bt, Head: ht, Policy: p, Targets: targets})
				if res.Conclusion != checks.Success {
					b.Fatal(res.Summary)
				}
			}
		})
	}
}
