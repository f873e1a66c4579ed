package review

import (
	"encoding/json"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/publisher/sign"
)

func TestMerged(t *testing.T) {
	state := func() *owners.State {
		return &owners.State{
			Approvers: []owners.Approver{{Login: "alice"}, {Login: "bob"}},
			Required:  []owners.Requirement{{File: "catalog/foo/OWNERS"}, {File: "OWNERS"}},
			Files: []owners.Coverage{
				{Path: "catalog/foo/", OwnersFile: "catalog/foo/OWNERS", Package: "foo"},
				{Path: "catalog/foo/x.yaml", OwnersFile: "catalog/foo/OWNERS", Package: "foo"},
				{Path: "catalog/bar/", OwnersFile: "OWNERS", Package: "bar"},
				{Path: "README.md", OwnersFile: "OWNERS"},
			},
			Packages: []owners.PackageState{
				{PackageTouch: owners.PackageTouch{Name: "foo"}, ApprovedBy: []string{"alice"}},
				{PackageTouch: owners.PackageTouch{Name: "bar"}, ApprovedBy: []string{"bob"},
					CIYAML: &owners.CIYAMLGrant{File: "catalog/bar/ci.yaml", Reviewers: []string{"bob"}}},
			},
		}
	}
	report := checks.Report{Results: []checks.Result{
		{Name: "owners", Conclusion: checks.Success},
		{Name: "images", Conclusion: checks.Neutral},
		{Name: "fbc", Conclusion: checks.Success},
	}}
	for _, tc := range []struct {
		name   string
		owners func() *owners.State
		want   string
	}{
		{"two packages", state,
			`[{"name":"foo","pullRequests":[{"number":7,"head":"head1","merge":"merge1","author":"carol","approvers":["alice"],"owners":[{"path":"catalog/foo/OWNERS","commit":"base1"}],"checks":[{"name":"owners","conclusion":"success"},{"name":"fbc","conclusion":"success"}]}]},` +
				`{"name":"bar","pullRequests":[{"number":7,"head":"head1","merge":"merge1","author":"carol","approvers":["bob"],"owners":[{"path":"OWNERS","commit":"base1"},{"path":"catalog/bar/ci.yaml","commit":"base1"}],"checks":[{"name":"owners","conclusion":"success"},{"name":"fbc","conclusion":"success"}]}]}]` +
				` {"number":7,"head":"head1","merge":"merge1","author":"carol","approvers":["alice","bob"],"owners":[{"path":"catalog/foo/OWNERS","commit":"base1"},{"path":"OWNERS","commit":"base1"}],"checks":[{"name":"owners","conclusion":"success"},{"name":"fbc","conclusion":"success"}]}`},
		{"no package", func() *owners.State { s := state(); s.Packages = nil; return s },
			`null {"number":7,"head":"head1","merge":"merge1","author":"carol","approvers":["alice","bob"],"owners":[{"path":"catalog/foo/OWNERS","commit":"base1"},{"path":"OWNERS","commit":"base1"}],"checks":[{"name":"owners","conclusion":"success"},{"name":"fbc","conclusion":"success"}]}`},
		{"OWNERS unreadable", func() *owners.State { return nil },
			`null {"number":7,"head":"head1","merge":"merge1","author":"carol","approvers":[],"owners":[],"checks":[{"name":"owners","conclusion":"success"},{"name":"fbc","conclusion":"success"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &Outcome{BaseSHA: "base1", HeadSHA: "head1", Report: report, Owners: tc.owners()}
			pkgs, pr := o.Merged(7, "carol", "merge1")
			a, _ := json.Marshal(pkgs)
			b, _ := json.Marshal(pr)
			if got := string(a) + " " + string(b); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRecordApprovals(t *testing.T) {
	pr := func(n int, merge string) sign.PullRequest { return sign.PullRequest{Number: n, Merge: merge} }
	records := map[string]MergeRecord{
		"m1": {Packages: []sign.Package{{Name: "foo", PullRequests: []sign.PullRequest{pr(1, "m1")}}}, PullRequest: pr(1, "m1")},
		"m2": {Packages: []sign.Package{
			{Name: "foo", PullRequests: []sign.PullRequest{pr(2, "m2")}},
			{Name: "bar", PullRequests: []sign.PullRequest{pr(2, "m2")}},
		}, PullRequest: pr(2, "m2")},
		"m3": {PullRequest: pr(3, "m3")},
		// A rebase merge of two commits, r1 then r2, onto m1.
		"r2": {Packages: []sign.Package{{Name: "baz", PullRequests: []sign.PullRequest{pr(4, "r2")}}}, PullRequest: pr(4, "r2"), Onto: "m1"},
	}
	lookup := func(sha string) (MergeRecord, bool) { r, ok := records[sha]; return r, ok }
	for _, tc := range []struct {
		name     string
		commits  []string
		complete bool
		want     string
	}{
		{"every commit a recorded merge", []string{"m3", "m2", "m1"}, true,
			`{"policy":{"path":""},"approvalsRecorded":true,"packages":[{"name":"bar","pullRequests":[{"number":2,"head":"","merge":"m2","approvers":null,"owners":null,"checks":null}]},` +
				`{"name":"foo","pullRequests":[{"number":1,"head":"","merge":"m1","approvers":null,"owners":null,"checks":null},{"number":2,"head":"","merge":"m2","approvers":null,"owners":null,"checks":null}]}],` +
				`"unpackaged":[{"number":3,"head":"","merge":"m3","approvers":null,"owners":null,"checks":null}],"checks":null}`},
		{"a direct push", []string{"d1", "m1"}, true,
			`{"policy":{"path":""},"approvalsRecorded":false,"note":"1 commit(s) since the previous publication are not merges this publisher recorded (a direct push, or a merge before a restart): d1",` +
				`"packages":[{"name":"foo","pullRequests":[{"number":1,"head":"","merge":"m1","approvers":null,"owners":null,"checks":null}]}],"checks":null}`},
		{"a rebase merge", []string{"r2", "r1", "m1"}, true,
			`{"policy":{"path":""},"approvalsRecorded":true,"packages":[{"name":"baz","pullRequests":[{"number":4,"head":"","merge":"r2","approvers":null,"owners":null,"checks":null}]},` +
				`{"name":"foo","pullRequests":[{"number":1,"head":"","merge":"m1","approvers":null,"owners":null,"checks":null}]}],"checks":null}`},
		{"a direct push after a rebase merge", []string{"d1", "r2", "r1", "m1"}, true,
			`{"policy":{"path":""},"approvalsRecorded":false,"note":"1 commit(s) since the previous publication are not merges this publisher recorded (a direct push, or a merge before a restart): d1",` +
				`"packages":[{"name":"baz","pullRequests":[{"number":4,"head":"","merge":"r2","approvers":null,"owners":null,"checks":null}]},` +
				`{"name":"foo","pullRequests":[{"number":1,"head":"","merge":"m1","approvers":null,"owners":null,"checks":null}]}],"checks":null}`},
		{"previous publication unknown", []string{"m1"}, false,
			`{"policy":{"path":""},"approvalsRecorded":false,"note":"the previous publication is not known to this publisher: only the merges it recorded since are listed",` +
				`"packages":[{"name":"foo","pullRequests":[{"number":1,"head":"","merge":"m1","approvers":null,"owners":null,"checks":null}]}],"checks":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var appr sign.Approval
			RecordApprovals(&appr, tc.commits, tc.complete, lookup)
			got, _ := json.Marshal(appr)
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
