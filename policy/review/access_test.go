package review

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/owners"
)

// TestRequireAccess: under owners.requireAccess: write an approval counts
// only from someone the forge says may write to the repository, the
// author's own included; a front end that cannot ask counts nobody's.
func TestRequireAccess(t *testing.T) {
	base := communityOperators(t)
	base[".catalogbot.yaml"] = strings.Replace(ciyamlPolicy, "  sources: [ci.yaml]\n", "  sources: [ci.yaml]\n  requireAccess: write\n", 1)
	const wol = "catalogs/v4.19/kubevirt-wol/catalog.yaml"
	head := map[string]string{wol: describe(base[wol], "maintained")}
	perms := func(m map[string]string) func(context.Context, string) (string, error) {
		return func(_ context.Context, login string) (string, error) {
			if p, ok := m[login]; ok {
				return p, nil
			}
			return "none", nil
		}
	}
	cases := []struct {
		name       string
		author     string
		approve    []string
		permission func(context.Context, string) (string, error)
		approved   bool
		err        bool
		// says is a reason an approval did not count.
		says string
	}{
		{name: "the reviewer may write", author: "gpillon", permission: perms(map[string]string{"gpillon": "write"}), approved: true},
		{name: "the reviewer maintains", author: "mallory", approve: []string{"GPillon"}, permission: perms(map[string]string{"gpillon": "maintain"}), approved: true},
		{name: "the reviewer may only read", author: "gpillon", permission: perms(map[string]string{"gpillon": "read"}),
			says: "has no write access to the repository"},
		{name: "an approving reviewer who may only triage", author: "mallory", approve: []string{"gpillon"}, permission: perms(map[string]string{"gpillon": "triage", "mallory": "admin"}),
			says: "has no write access to the repository"},
		{name: "a front end that cannot ask", author: "gpillon",
			says: "cannot be checked for write access here"},
		{name: "the forge does not answer", author: "gpillon", err: true,
			permission: func(context.Context, string) (string, error) { return "", errors.New("rate limited") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			baseSHA := r.Commit("base", base)
			r.Branch("pr", baseSHA)
			r.Commit("change", head)
			c, baseFS, headFS, err := change.FromGit(r.Dir, baseSHA, "pr")
			if err != nil {
				t.Fatal(err)
			}
			c.Number, c.Author = 7, tc.author
			var events []owners.Event
			for i, login := range tc.approve {
				ev := comment(login, "/approve", i+1)
				ev.CommitSHA = c.HeadSHA
				events = append(events, ev)
			}
			o, err := EvaluateOwners(context.Background(), &PR{Change: c, Base: baseFS, Head: headFS, EventsRead: true, Events: events, Permission: tc.permission})
			if tc.err {
				if err == nil {
					t.Fatal("no error from a forge that does not answer")
				}
				return
			}
			if err != nil || !o.Valid() {
				t.Fatalf("%v %+v", err, o.PolicyFindings)
			}
			if o.Owners.Approved != tc.approved {
				t.Errorf("approved = %v, want %v: %s", o.Owners.Approved, tc.approved, o.Owners.Reason)
			}
			if tc.says != "" && !strings.Contains(o.Owners.Explain(), tc.says) {
				t.Errorf("the explanation does not say %q:\n%s", tc.says, o.Owners.Explain())
			}
		})
	}
}
