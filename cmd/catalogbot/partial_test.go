package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/fbc/fbctest"
)

// TestCheckPartialClone: `catalogbot check` in a clone made with
// --filter=blob:none, whose catalog blobs are all left with the promisor
// remote, fetches the ones it reads through git and judges the change as
// in a complete clone. With --fetch-missing=false, or a remote on a
// loopback address that the egress rule refuses, it judges nothing: the
// change is not mergeable, and the output names the file, its object,
// the remote and why nothing was fetched.
func TestCheckPartialClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the test clones with the git CLI, which is not installed: " + err.Error())
	}
	t.Cleanup(func() { change.SetFetch(change.FetchOptions{}) })
	r := changetest.NewRepo(t)
	base := r.Commit("base", map[string]string{
		"OWNERS":                   "approvers: [alice]\n",
		"catalog/foo/catalog.yaml": fbctest.Foo,
	})
	head := r.Commit("head", map[string]string{"catalog/foo/catalog.yaml": fbctest.Foo + "\n"})
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(r.Dir, "config", "uploadpack.allowFilter", "true")
	git(r.Dir, "config", "uploadpack.allowAnySHA1InWant", "true")
	blobs := []string{git(r.Dir, "rev-parse", base+":catalog/foo/catalog.yaml"), git(r.Dir, "rev-parse", head+":catalog/foo/catalog.yaml")}

	for _, tc := range []struct {
		name  string
		url   string // the promisor remote's URL, when not the origin's
		flags []string
		code  int
		want  []string
	}{
		{name: "fetched", code: exitOK},
		{name: "fetch off", flags: []string{"--fetch-missing=false"}, code: exitInvalid,
			want: []string{"fetching is turned off"}},
		{name: "loopback refused", url: "https://127.0.0.1:9/catalog.git", code: exitInvalid,
			want: []string{"fetching it failed", "127.0.0.1"}},
		{name: "loopback allowed, nothing listening", url: "https://127.0.0.1:9/catalog.git", flags: []string{"--allow-private-registry", "127.0.0.1"},
			code: exitInvalid, want: []string{"fetching it failed", "remote 127.0.0.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "partial.git")
			git(filepath.Dir(dir), "clone", "-q", "--bare", "--filter=blob:none", "file://"+r.Dir, dir)
			if tc.url != "" {
				git(dir, "config", "remote.origin.url", tc.url)
			}
			args := append([]string{"check", "--repo", dir, "--base", base, "--head", head, "--author", "alice", "--images=false"}, tc.flags...)
			res := cli(t, nil, args...)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, tc.code, res.stdout, res.stderr)
			}
			if strings.Contains(res.stdout, "not in the repository") != (tc.want != nil) {
				t.Errorf("the output says a file was not read, or does not:\n%s", res.stdout)
			}
			if tc.want == nil {
				return
			}
			if !strings.Contains(res.stdout, blobs[0]) && !strings.Contains(res.stdout, blobs[1]) {
				t.Errorf("the output names neither side's object of catalog/foo/catalog.yaml:\n%s", res.stdout)
			}
			for _, want := range append([]string{"catalog/foo/catalog.yaml", `partial clone from remote "origin"`}, tc.want...) {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("the output does not say %q:\n%s", want, res.stdout)
				}
			}
		})
	}
}
