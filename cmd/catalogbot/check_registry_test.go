package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// checkJSON runs check -o json in dir and decodes the result.
func checkJSON(t *testing.T, dir string, args ...string) (review.Document, result) {
	t.Helper()
	res := ownersCLI(t, dir, append([]string{"check", "-o", "json"}, args...)...)
	var doc review.Document
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("check -o json: %v\nstdout: %s\nstderr: %s", err, res.stdout, res.stderr)
	}
	return doc, res
}

func resultOf(doc review.Document, name string) checks.Result {
	for _, r := range doc.Results {
		if r.Name == name {
			return r
		}
	}
	return checks.Result{}
}

// TestCheckImagePolicy: a change that adds an unpinned bundle image, in a
// repository whose policy wants digests, gets a policy finding on the
// image's line; the base's own images are not asked about.
func TestCheckImagePolicy(t *testing.T) {
	noActions(t)
	reg := registrytest.New(t)
	registrytest.Push(t, reg.Ref("example/foo-bundle:v1.0.1"), registrytest.RandomImage(t))
	catalog := strings.ReplaceAll(checkCatalog, "quay.io/example", reg.Host+"/example")
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		".catalogbot.yaml":         "images:\n  pin:\n    bundle: true\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/catalog.yaml": catalog,
	})
	r.Branch("pr", base)
	r.Commit("new bundle", map[string]string{
		"catalog/foo/catalog.yaml": strings.Replace(catalog, "foo-bundle:v1.0.0", "foo-bundle:v1.0.1", 1),
	})
	// The test registry is on loopback, which the egress rule refuses
	// unless allowed.
	doc, res := checkJSON(t, r.Dir, "--base", "main", "--head", "pr", "--author", "alice", "--allow-private-registry", "127.0.0.1")
	if res.code != exitInvalid {
		t.Errorf("exit %d, want %d (not mergeable)", res.code, exitInvalid)
	}
	img := resultOf(doc, "images")
	if img.Conclusion != checks.Failure || len(img.Findings) != 1 {
		t.Fatalf("images = %+v, want one finding", img)
	}
	f := img.Findings[0]
	if f.Rule != "IM5" || f.File != "catalog/foo/catalog.yaml" || f.Line != 15 || !strings.Contains(f.Message, "@sha256:") || strings.Contains(f.Message, "could not be resolved") {
		t.Errorf("finding = %+v, want IM5 at catalog/foo/catalog.yaml:15 suggesting the digest", f)
	}
	for _, req := range reg.Requests() {
		if strings.Contains(req.Path, "v1.0.0") {
			t.Errorf("the base's image was asked about: %s %s", req.Method, req.Path)
		}
	}
}

// TestCheckReferenceList: a catalog.yaml entry changed by the owner of the
// entry is approved by them alone and rendered from the registry; the
// same change by someone else waits for that owner.
func TestCheckReferenceList(t *testing.T) {
	noActions(t)
	host := registrytest.New(t).Host
	for _, tag := range []string{"v1", "v2"} {
		registrytest.Push(t, host+"/example/foo-index:"+tag, rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
			rendertest.Layer(t, rendertest.Entry{Name: "configs/foo/catalog.yaml", Body: checkCatalog})))
	}
	// The unchanged entry is rendered too: the list is checked as it
	// assembles.
	bar := host + "/example/bar-index:v1"
	registrytest.Push(t, bar, rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
		rendertest.Layer(t, rendertest.Entry{Name: "configs/bar/catalog.yaml", Body: strings.ReplaceAll(checkCatalog, "foo", "bar")})))
	list := func(tag string) string {
		return "name: cool-catalog\nrepo: quay.io/example/cool-catalog\ntag: latest\nreferences:\n" +
			"  - name: foo\n    image: " + host + "/example/foo-index:" + tag + "\n" +
			"  - name: bar\n    image: " + bar + "\n"
	}
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                  "approvers:\n  - root-admin\n",
		"cool-catalog/foo/OWNERS": "approvers:\n  - alice\n",
		"catalog.yaml":            list("v1"),
	})
	r.Branch("pr", base)
	r.Commit("foo v2", map[string]string{"catalog.yaml": list("v2")})

	doc, res := checkJSON(t, r.Dir, "--base", "main", "--head", "pr", "--author", "alice", "--images=false", "--allow-private-registry", "127.0.0.1")
	if res.code != exitOK {
		t.Errorf("exit %d, want 0: %s", res.code, res.stdout)
	}
	refs := resultOf(doc, "references")
	if refs.Conclusion != checks.Success || !strings.Contains(refs.Summary, "1 rendered and validated.") ||
		!strings.Contains(refs.Summary, "owned as `cool-catalog/foo/index.yaml`") {
		t.Errorf("references = %+v, want success, the entry rendered and owned as cool-catalog/foo/index.yaml", refs)
	}
	if o := resultOf(doc, "owners"); o.Conclusion != checks.Success {
		t.Errorf("owners = %+v, want success for the entry's owner", o)
	}

	doc, _ = checkJSON(t, r.Dir, "--base", "main", "--head", "pr", "--author", "mallory", "--images=false", "--allow-private-registry", "127.0.0.1")
	if o := resultOf(doc, "owners"); o.Conclusion != checks.Failure || !strings.Contains(o.Summary, "alice") {
		t.Errorf("owners = %+v, want failure naming alice", o)
	}
}

// TestCheckOwnersCases: the approval rules of a pull request through the
// check command, on real commits.
func TestCheckOwnersCases(t *testing.T) {
	noActions(t)
	bar := strings.ReplaceAll(checkCatalog, "foo", "bar")
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers:\n  - root-admin\n",
		"catalog/.indexignore":     "OWNERS\n",
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
		"catalog/foo/catalog.yaml": checkCatalog,
		"catalog/foo/extra.yaml":   "schema: example.com/note\npackage: foo\nnote: moved later\n",
		"catalog/bar/OWNERS":       "approvers:\n  - bob\n",
		"catalog/bar/catalog.yaml": bar,
	})
	r.Branch("self-grant", base)
	r.Commit("add myself", map[string]string{
		"catalog/foo/OWNERS":       "approvers:\n  - alice\n  - mallory\n",
		"catalog/foo/catalog.yaml": checkCatalog + "  - type: example.com/label\n    value: x\n",
	})
	r.Branch("rename", base)
	r.Commit("move a file across packages", map[string]string{
		"catalog/foo/extra.yaml": changetest.Delete,
		"catalog/bar/extra.yaml": "schema: example.com/note\npackage: foo\nnote: moved later\n",
	})
	r.Checkout("main")

	tests := []struct {
		name    string
		args    []string
		owners  checks.Conclusion
		mention string
	}{
		{"an OWNERS edit grants nothing", []string{"--head", "self-grant", "--author", "mallory"}, checks.Failure, "alice"},
		{"a rename across packages needs the first owner", []string{"--head", "rename", "--author", "bob"}, checks.Failure, "alice"},
		{"and the second", []string{"--head", "rename", "--author", "alice"}, checks.Failure, "bob"},
		{"both owners approve", []string{"--head", "rename", "--author", "alice", "--approve", "bob"}, checks.Success, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, _ := checkJSON(t, r.Dir, append([]string{"--base", "main", "--images=false"}, tt.args...)...)
			o := resultOf(doc, "owners")
			if o.Conclusion != tt.owners || !strings.Contains(o.Summary, tt.mention) {
				t.Errorf("owners = %s (%s), want %s mentioning %q", o.Conclusion, o.Summary, tt.owners, tt.mention)
			}
		})
	}
}

// TestCheckGitHubCouldNotJudge: in the Action, a change whose image's
// registry rate limits or cannot be reached exits 1, leaves the valid
// output unset (a workflow testing it takes neither branch), and says in
// its output and job summary that it could not judge, and why.
func TestCheckGitHubCouldNotJudge(t *testing.T) {
	limited := registrytest.New(t)
	limited.Fail(registrytest.Fault{Status: 429})
	down := registrytest.NewHangup(t)
	for _, tt := range []struct{ name, host, why string }{
		{"rate limited", limited.Host, "rate limited the requests"},
		{"unreachable", down.Host, "did not answer in time or could not be reached"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			base := r.Commit("base", map[string]string{
				"catalog/foo/OWNERS":       "approvers:\n  - alice\n",
				"catalog/.indexignore":     "OWNERS\n",
				"catalog/foo/catalog.yaml": checkCatalog,
			})
			r.Branch("pr", base)
			r.Commit("new bundle", map[string]string{
				"catalog/foo/catalog.yaml": strings.Replace(checkCatalog, "quay.io/example/foo-bundle:v1.0.0", tt.host+"/example/foo-bundle:v1.0.1", 1),
			})
			f := inActions(t, r.Dir, writePREvent(t, r, "pr", "alice", nil))
			res := ownersCLI(t, t.TempDir(), "check", "--allow-private-registry", "127.0.0.1")
			if res.code != exitInvalid {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.code, exitInvalid, res.stdout, res.stderr)
			}
			says := "registry " + tt.host + " (1 reference) " + tt.why
			if want := "Could not judge yet: " + says + ". Run the check again later.\n"; !strings.Contains(res.stdout, want) {
				t.Errorf("stdout does not say %q:\n%s", want, res.stdout)
			}
			if want := "**Could not judge** `"; !strings.Contains(readStepFile(t, f.summary), want+branchSHA(t, r, "pr")[:12]+"`: "+says) {
				t.Errorf("the job summary does not say it could not judge:\n%s", readStepFile(t, f.summary))
			}
			if got, want := readStepFile(t, f.output), "earlier=1\napproved=true\nmergeable=false\n"+defaultMergeOutputs; got != want {
				t.Errorf("$GITHUB_OUTPUT =\n%s\nwant\n%s", got, want)
			}
		})
	}
}
