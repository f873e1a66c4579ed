package review

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// TestAccountOpensEveryRendering runs changes on the slice of
// community-operators-prod: the check run's summary, the status comment,
// the text and the job summary open with the catalogs the change deletes
// whole, then its files as its diff lists them, then what is derived from
// them; and the release check says a package taken out of many catalogs
// once, with the catalogs listed.
func TestAccountOpensEveryRendering(t *testing.T) {
	const libredb = "libredb-studio-operator" // v4.15-v4.22, alone in v4.15 and v4.16
	base := communityOperators(t)
	cases := []struct {
		name string
		head map[string]string
		// first is the first line of the account; deletes says the
		// renderings open with the catalogs deleted.
		first   string
		deletes bool
	}{
		{
			name: "package-removed-everywhere",
			head: func() map[string]string {
				out := map[string]string{}
				for p := range base {
					if strings.HasPrefix(p, "catalogs/") && strings.Contains(p, "/"+libredb+"/") {
						out[p] = changetest.Delete
					}
				}
				return out
			}(),
			first:   "This change deletes the catalogs v4.15, v4.16: it removes 2 files of them, and their published images go with them. Only the root approvers may approve it.",
			deletes: true,
		},
		{
			name: "files-by-status",
			head: map[string]string{
				"catalogs/v4.22/" + libredb + "/catalog.yaml": describe(base["catalogs/v4.22/"+libredb+"/catalog.yaml"], "described"),
				"catalogs/v4.21/" + libredb + "/catalog.yaml": changetest.Delete,
				"catalogs/v4.21/" + libredb + "/index.yaml":   base["catalogs/v4.21/"+libredb+"/catalog.yaml"],
				"operators/" + libredb + "/README.md":         "notes\n",
			},
			first: "Changed files, as the pull request's diff lists them: 1 added, 1 modified, 1 renamed (3 files).",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := changetest.NewRepo(t)
			baseSHA := r.Commit("base", base)
			r.Branch("pr", baseSHA)
			r.Commit("change", tc.head)
			c, baseFS, headFS, err := change.FromGit(r.Dir, baseSHA, "pr")
			if err != nil {
				t.Fatal(err)
			}
			c.Number, c.Author = 7, "cevheri"
			o, err := Evaluate(context.Background(), &PR{Change: c, Base: baseFS, Head: headFS, EventsRead: true})
			if err != nil {
				t.Fatal(err)
			}
			if !o.Valid() {
				t.Fatalf("policy findings: %+v", o.PolicyFindings)
			}
			d := o.Decide(Forge{Local: true})
			var text, job bytes.Buffer
			if err := o.WriteText(&text, d, false); err != nil {
				t.Fatal(err)
			}
			if err := o.JobSummary(&job, d, ""); err != nil {
				t.Fatal(err)
			}
			summary, comment := o.Summary(), o.StatusComment(d)
			first := func(s string) string {
				line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
				return line
			}
			if got := first(text.String()); got != tc.first {
				t.Errorf("the text opens with\n%s\nwant\n%s", got, tc.first)
			}
			_, body, _ := strings.Cut(comment, "\n\n") // after the heading
			_, intro, _ := strings.Cut(job.String(), "\n\n")
			for what, s := range map[string]string{"summary": summary, "status comment": body, "job summary": intro} {
				if got := first(s); strings.HasPrefix(got, "⚠️ **This change deletes") != tc.deletes {
					t.Errorf("the %s opens with %q; deletes %v", what, got, tc.deletes)
				}
			}
			var all strings.Builder
			for _, part := range []struct{ name, text string }{
				{"check run summary", summary}, {"status comment", comment}, {"text", text.String()}, {"job summary", job.String()},
			} {
				all.WriteString("=== " + part.name + " ===\n" + strings.TrimRight(part.text, "\n") + "\n\n")
			}
			checkstest.Golden(t, filepath.Join("testdata", "account", tc.name+".golden"), []byte(all.String()))
		})
	}
}

// TestAccountDeletedRoot: a change that removes every file of one root of
// a catalog of two roots says so first, though the catalog stays.
func TestAccountDeletedRoot(t *testing.T) {
	base, head := repo(), repo()
	pol := &fstest.MapFile{Data: []byte("catalog:\n  roots: [catalog, incubator]\n")}
	base[".catalogbot.yaml"], head[".catalogbot.yaml"] = pol, pol
	base["incubator/baz/catalog.yaml"] = &fstest.MapFile{Data: []byte(strings.ReplaceAll(fbctest.Foo, "foo", "baz"))}
	c := &change.Change{Number: 7, Author: "root-owner", BaseSHA: baseSHA, HeadSHA: headSHA,
		Files: []change.File{{Path: "incubator/baz/catalog.yaml", Status: change.Removed}}}
	o, err := Evaluate(context.Background(), &PR{Change: c, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Valid() {
		t.Fatalf("policy findings: %+v", o.PolicyFindings)
	}
	d := o.Decide(Forge{Local: true})
	var text strings.Builder
	if err := o.WriteText(&text, d, false); err != nil {
		t.Fatal(err)
	}
	want := "This change deletes the catalog root incubator: every file under it is removed, and the catalog is published without it."
	if got, _, _ := strings.Cut(text.String(), "\n"); got != want {
		t.Errorf("the text opens with\n%s\nwant\n%s", got, want)
	}
	if want := "⚠️ **This change deletes the catalog root incubator**"; !strings.HasPrefix(o.Summary(), want) {
		t.Errorf("the summary does not open with %q:\n%s", want, o.Summary())
	}
	if _, body, _ := strings.Cut(o.StatusComment(d), "\n\n"); !strings.HasPrefix(body, "⚠️ **This change deletes the catalog root incubator**") {
		t.Errorf("the status comment does not open with the root:\n%s", body)
	}
}
