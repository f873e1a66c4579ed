package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
)

// releaseEntry is one entry of a channel in the release fixtures.
type releaseEntry struct{ name, replaces, skipRange string }

// releaseChannel writes an olm.channel of package foo.
func releaseChannel(name string, entries ...releaseEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nschema: olm.channel\npackage: foo\nname: %s\nentries:\n", name)
	for _, e := range entries {
		fmt.Fprintf(&b, "  - name: foo.v%s\n", e.name)
		if e.replaces != "" {
			fmt.Fprintf(&b, "    replaces: foo.v%s\n", e.replaces)
		}
		if e.skipRange != "" {
			fmt.Fprintf(&b, "    skipRange: '%s'\n", e.skipRange)
		}
	}
	return b.String()
}

// releaseBundles writes the olm.bundles of package foo at the versions.
func releaseBundles(versions ...string) string {
	var b strings.Builder
	for _, v := range versions {
		fmt.Fprintf(&b, "---\nschema: olm.bundle\npackage: foo\nname: foo.v%s\nimage: quay.io/example/foo-bundle:v%s\nproperties:\n  - type: olm.package\n    value:\n      packageName: foo\n      version: %s\n", v, v, v)
	}
	return b.String()
}

const releasePackage = "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n"

// The base of the release cases: stable is 1.0.0 -> 1.1.0 -> 1.2.0, and
// candidate-v1 (prunable by default) has 1.3.0-rc on top of 1.2.0.
var (
	releaseStable    = releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"})
	releaseCandidate = releaseChannel("candidate-v1", releaseEntry{name: "1.2.0"}, releaseEntry{name: "1.3.0-rc", replaces: "1.2.0"})
	releaseBase      = map[string]string{
		"OWNERS":                      "approvers:\n  - root-admin\n",
		"catalog/foo/OWNERS":          "approvers:\n  - alice\n",
		"catalog/foo/package.yaml":    releasePackage,
		"catalog/foo/channels.yaml":   releaseStable + releaseCandidate,
		"catalog/foo/bundles.yaml":    releaseBundles("1.0.0", "1.1.0", "1.2.0"),
		"catalog/foo/candidates.yaml": releaseBundles("1.3.0-rc"),
		"catalog/other/catalog.yaml":  strings.ReplaceAll(fooCatalog, "foo", "other"),
		"catalog/other/OWNERS":        "approvers:\n  - carol\n",
	}
)

func TestRelease(t *testing.T) {
	type want struct {
		rule, at string
		// says are parts of the message.
		says []string
	}
	tests := []struct {
		name     string
		edits    map[string]string
		approver string
		want     checks.Conclusion
		findings []want
		// summary is part of the result's summary.
		summary string
	}{
		{
			name: "a new bundle on top of the channel is fine",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}, releaseEntry{name: "1.3.0", replaces: "1.2.0", skipRange: "<1.2.0"}) + releaseCandidate,
				"catalog/foo/bundles.yaml":  releaseBundles("1.0.0", "1.1.0", "1.2.0", "1.3.0"),
			},
			want: checks.Success,
		},
		{
			name: "removing a released bundle is refused",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseCandidate,
				"catalog/foo/bundles.yaml":  releaseBundles("1.1.0", "1.2.0"),
			},
			want: checks.Failure,
			findings: []want{{rule: "RG1", at: "catalog/foo/bundles.yaml:2", says: []string{
				`bundle "foo.v1.0.0" (version 1.0.0) is released on the base branch in channel stable`,
				// 1.1.0 still replaces it, so installs of 1.0.0 upgrade.
				"no installed version loses its upgrade path",
				"olm.deprecations",
			}}},
		},
		{
			name: "removing an entry strands the versions below it",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseCandidate,
			},
			want: checks.Failure,
			findings: []want{{rule: "RG2", at: "catalog/foo/channels.yaml:7", says: []string{
				`entry "foo.v1.1.0" of channel "stable"`,
				"installed versions that would lose their upgrade path: 1.0.0 in stable",
				"olm.deprecations",
			}}},
		},
		{
			name: "removing a channel is refused",
			edits: map[string]string{
				"catalog/foo/package.yaml":  strings.Replace(releasePackage, "stable", "fast", 1),
				"catalog/foo/channels.yaml": releaseChannel("fast", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseCandidate,
			},
			want: checks.Failure,
			findings: []want{{rule: "RG3", at: "catalog/foo/channels.yaml:2", says: []string{
				`channel "stable" of package "foo"`,
				"1.0.0 in stable, 1.1.0 in stable, 1.2.0 in stable",
				"olm.deprecations",
			}}},
		},
		{
			name: "a broken edge names the stranded versions at the head's entry",
			edits: map[string]string{
				// 1.2.0 now replaces 1.0.0: 1.1.0 has nowhere to go.
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.0.0"}) + releaseCandidate,
			},
			want: checks.Failure,
			findings: []want{{rule: "RG4", at: "catalog/foo/channels.yaml:9", says: []string{
				`entry "foo.v1.2.0" of channel "stable" no longer upgrades from "foo.v1.1.0" (replaces)`,
				"installed versions that would lose their upgrade path: 1.1.0 in stable",
				"olm.deprecations",
			}}},
		},
		{
			name: "a skipRange keeps the edge",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.0.0"}, releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.0.0", skipRange: ">=1.1.0 <1.2.0"}) + releaseCandidate,
			},
			want: checks.Success,
		},
		{
			name: "a prunable channel may lose its release candidates",
			edits: map[string]string{
				"catalog/foo/channels.yaml":   releaseStable + releaseChannel("candidate-v1", releaseEntry{name: "1.2.0"}),
				"catalog/foo/candidates.yaml": changetest.Delete,
			},
			want: checks.Success,
		},
		{
			name: "a root approver's approval allows a removal",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseCandidate,
				"catalog/foo/bundles.yaml":  releaseBundles("1.1.0", "1.2.0"),
			},
			approver: "root-admin",
			want:     checks.Success,
			findings: []want{{rule: "RG1", at: "catalog/foo/bundles.yaml:2", says: []string{"allowed: approved by root approver root-admin"}}},
		},
		{
			name: "a package owner's approval does not",
			edits: map[string]string{
				"catalog/foo/channels.yaml": releaseChannel("stable", releaseEntry{name: "1.1.0", replaces: "1.0.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"}) + releaseCandidate,
				"catalog/foo/bundles.yaml":  releaseBundles("1.1.0", "1.2.0"),
			},
			approver: "alice",
			want:     checks.Failure,
			findings: []want{{rule: "RG1", at: "catalog/foo/bundles.yaml:2"}},
		},
		{
			name:     "a channel that does not load counts as removed",
			edits:    map[string]string{"catalog/foo/channels.yaml": strings.Replace(releaseStable, "entries:", "entries: [", 1) + releaseCandidate},
			want:     checks.Failure,
			findings: []want{{rule: "RG3", at: "catalog/foo/channels.yaml:2"}},
			summary:  "of the head did not load (the fbc check says why)",
		},
		{
			name:  "removing a whole package is refused channel by channel and bundle by bundle",
			edits: map[string]string{"catalog/foo/package.yaml": changetest.Delete, "catalog/foo/channels.yaml": changetest.Delete, "catalog/foo/bundles.yaml": changetest.Delete},
			want:  checks.Failure,
			findings: []want{
				{rule: "RG1", at: "catalog/foo/bundles.yaml:2", says: []string{"would lose their upgrade path: 1.0.0 in stable;"}},
				{rule: "RG1", at: "catalog/foo/bundles.yaml:12"},
				{rule: "RG1", at: "catalog/foo/bundles.yaml:22"},
				{rule: "RG3", at: "catalog/foo/channels.yaml:2"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", releaseBase)
			head := r.Commit("change", tt.edits)
			c, b, h, err := change.FromGit(r.Dir, base, head)
			if err != nil {
				t.Fatal(err)
			}
			c.Author = "bob"
			in := &Input{Change: c, Base: b, Head: h, Policy: policy.Default()}
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
				t.Fatalf("%d findings, want %d:\n%+v", len(res.Findings), len(tt.findings), res.Findings)
			}
			for i, w := range tt.findings {
				f := res.Findings[i]
				if at := fmt.Sprintf("%s:%d", f.File, f.Line); f.Rule != w.rule || at != w.at {
					t.Errorf("finding %d is %s at %s, want %s at %s: %s", i, f.Rule, at, w.rule, w.at, f.Message)
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

// TestReleaseGroupedAcrossCatalogs removes one bundle from thirteen
// catalogs: the summary says it once, with the catalogs listed, and the
// findings keep one per catalog with its file and line.
func TestReleaseGroupedAcrossCatalogs(t *testing.T) {
	base, head := map[string]string{}, map[string]string{}
	var names []string
	for v := 12; v <= 24; v++ {
		c := fmt.Sprintf("catalogs/v4.%d/foo/", v)
		names = append(names, fmt.Sprintf("v4.%d", v))
		base[c+"package.yaml"] = releasePackage
		base[c+"channels.yaml"] = releaseStable
		base[c+"bundles.yaml"] = releaseBundles("1.0.0", "1.1.0", "1.2.0")
		head[c+"package.yaml"] = releasePackage
		head[c+"channels.yaml"] = releaseChannel("stable", releaseEntry{name: "1.1.0"}, releaseEntry{name: "1.2.0", replaces: "1.1.0"})
		head[c+"bundles.yaml"] = releaseBundles("1.1.0", "1.2.0")
	}
	in := resolvedInput(t, "catalogs:\n  - each: catalogs/v4.*\n", diff(base, head, nil), tree(base), tree(head))
	res := Release{}.Run(context.Background(), in)
	if res.Conclusion != checks.Failure {
		t.Errorf("conclusion %s, want failure", res.Conclusion)
	}
	if n := len(res.Findings); n != len(names) {
		t.Errorf("%d findings, want %d: one per catalog", n, len(names))
	}
	for _, f := range res.Findings {
		if f.File == "" || f.Line == 0 {
			t.Errorf("finding without its place: %+v", f)
		}
	}
	if n := strings.Count(res.Summary, "\n- "); n != 1 {
		t.Errorf("%d grouped lines, want 1:\n%s", n, res.Summary)
	}
	if want := "in " + strings.Join(names, ", ") + " (13 catalogs)"; !strings.Contains(res.Summary, want) {
		t.Errorf("the summary does not say %q:\n%s", want, res.Summary)
	}
	checkstest.Golden(t, "testdata/release-grouped.golden", []byte(res.Summary+"\n"))
}
