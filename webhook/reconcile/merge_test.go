package reconcile

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/webhook/githubtest"
)

// TestPushDuringCheckIsNotMergedAtOldSHA pushes to the pull request while
// the bot works on it, at the moments that matter: after the check, before
// the merge decision reads the pull request again, and after that read,
// just before the merge call. The old head is never merged; the new one is
// checked and merged.
func TestPushDuringCheckIsNotMergedAtOldSHA(t *testing.T) {
	tests := []struct {
		name string
		// when says whether the response to r is the moment to push.
		when func(r *http.Request, resp *githubtest.Response) bool
		// conflict: the merge call itself must have been refused (409).
		conflict bool
	}{
		{
			name: "when the check run completes",
			when: func(r *http.Request, resp *githubtest.Response) bool {
				return r.Method == "PATCH" && strings.Contains(r.URL.Path, "/check-runs/")
			},
		},
		{
			name: "between the re-read and the merge call",
			when: func() func(*http.Request, *githubtest.Response) bool {
				gets := 0
				return func(r *http.Request, resp *githubtest.Response) bool {
					if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/pulls/1") {
						gets++
						// The first read starts the check, the
						// second is the merge decision's.
						return gets == 2
					}
					return false
				}
			}(),
			conflict: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, catalogRepo(mergePolicy))
			pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
			old := pr.HeadSHA()
			var once sync.Once
			var pushed string
			e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
				if tc.when(r, resp) {
					once.Do(func() {
						pushed = pr.Push(map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.2")}, "another bump")
					})
				}
			})

			e.process(pr, "pull_request")

			if pushed == "" {
				t.Fatal("the hook never pushed")
			}
			if n := e.mergesAt(old); n != 0 {
				t.Fatalf("merged at the old head %s", old)
			}
			if n := e.mergesAt(pushed); n != 1 {
				t.Fatalf("merges = %+v, want one at the new head %s", e.repo.Merges(), pushed)
			}
			if run := e.run(pushed, CheckRunName); run.Conclusion != "success" {
				t.Errorf("the new head's check run concluded %q", run.Conclusion)
			}
			conflicts := e.counter(e.metrics.Merges, MergeConflict)
			if tc.conflict && conflicts != 1 {
				t.Errorf("conflict counter = %v, want the 409 counted", conflicts)
			}
			if !tc.conflict && conflicts != 0 {
				t.Errorf("conflict counter = %v, want no refused merge call", conflicts)
			}
		})
	}
}

// TestBaseMovedOnTheSamePackageRechecks moves the base branch between the
// check and the merge, changing the package the pull request changes: the
// pull request is checked again before it is merged.
func TestBaseMovedOnTheSamePackageRechecks(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	var once sync.Once
	e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if r.Method == "PATCH" && strings.Contains(r.URL.Path, "/check-runs/") {
			once.Do(func() {
				e.repo.Commit("main", map[string]string{"catalog/foo/NOTES.md": "base moved\n"}, "notes")
			})
		}
	})
	e.process(pr, "pull_request")

	if e.mergesAt(pr.HeadSHA()) != 1 {
		t.Fatalf("merges = %+v", e.repo.Merges())
	}
	// Each check lists the pull request's files once.
	checks := 0
	for _, r := range e.requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/pulls/1/files") {
			checks++
		}
	}
	if checks != 2 {
		t.Errorf("the pull request was checked %d times, want twice: again after the base moved", checks)
	}
	got, _ := e.repo.ReadFile("main", "catalog/foo/NOTES.md")
	if got != "base moved\n" {
		t.Errorf("the base's change was lost in the merge: %q", got)
	}
}

// TestOwnRunMustSaySuccess: the check passes, but when the merge decision
// reads the check runs GitHub shows catalogbot's run at the checked head
// as failed (rewritten since, say). The decision refuses, and says why.
func TestOwnRunMustSaySuccess(t *testing.T) {
	e := newEnv(t, catalogRepo(mergePolicy))
	pr := e.openPR("alice", "bump", map[string]string{"catalog/foo/catalog.yaml": bumpedCatalog("v1.0.1")})
	e.gh.HookResponses(func(r *http.Request, resp *githubtest.Response) {
		if r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/commits/"+pr.HeadSHA()+"/check-runs") {
			resp.Body = bytes.ReplaceAll(resp.Body, []byte(`"conclusion":"success"`), []byte(`"conclusion":"failure"`))
		}
	})
	e.process(pr, "pull_request")

	if n := e.mergesAt(pr.HeadSHA()); n != 0 {
		t.Fatalf("merged %d times past a failed catalogbot run", n)
	}
	if got := e.counter(e.metrics.Merges, MergeRefused); got != 1 {
		t.Errorf("refused merges = %v, want 1", got)
	}
}
