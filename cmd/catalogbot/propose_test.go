package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/checks/change/changetest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/checks/registry/timeout"
	"github.com/catalogbot/catalogbot/policy/propose"
	"github.com/catalogbot/catalogbot/policy/propose/proposetest"
)

// TestPropose runs the command on a repository watching one bundle
// repository: a dry run writes nothing, a run writes the branch and
// reports it in JSON, with the image pinned by digest. Without
// --allow-private-registry the test registry on loopback is refused by
// the egress rule, as for check.
func TestPropose(t *testing.T) {
	reg := registrytest.New(t)
	digest := proposetest.PushBundle(t, reg, "acme/foo-bundle", "v1.1.0", "foo", "foo.v1.1.0", "1.1.0")
	proposetest.PushBundle(t, reg, "acme/foo-bundle", "nightly", "foo", "foo.v9.9.9", "9.9.9")
	r := changetest.NewRepo(t)
	r.Commit("catalog", map[string]string{
		".catalogbot.yaml":         fmt.Sprintf("propose:\n  - package: foo\n    repository: %s/acme/foo-bundle\n    channels: [stable]\n    graph: replaces\n    soak: 0s\n", reg.Host),
		"catalog/foo/catalog.yaml": proposetest.Package("foo", "stable", "foo.v1.0.0", "1.0.0"),
	})
	allow := []string{"--allow-private-registry", "127.0.0.1"}

	show := ownersCLI(t, r.Dir, "policy", "show")
	if want := "{package: foo, repository: " + reg.Host + "/acme/foo-bundle, channels: [stable], graph: replaces, soak: 0s}"; show.code != exitOK || !strings.Contains(show.stdout, want) {
		t.Errorf("policy show: exit %d, want the propose entry %s\n%s%s", show.code, want, show.stdout, show.stderr)
	}

	res := ownersCLI(t, r.Dir, append([]string{"propose", "--dry-run"}, allow...)...)
	if res.code != exitOK || !strings.Contains(res.stdout, "foo: propose 1.1.0 from") || !strings.Contains(res.stdout, "Dry run: not written") {
		t.Errorf("dry run: exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	if _, err := r.Git.Reference("refs/heads/releases", false); err == nil {
		t.Error("the dry run wrote a branch")
	}

	res = ownersCLI(t, r.Dir, "propose", "--branch", "releases", "-o", "json")
	if res.code != exitInvalid || !strings.Contains(res.stderr, "127.0.0.1") || res.stdout != "[]\n" {
		t.Errorf("without --allow-private-registry: exit %d\nstdout: %s\nstderr: %s\nwant %d, no rows and the refused host", res.code, res.stdout, res.stderr, exitInvalid)
	}

	res = ownersCLI(t, r.Dir, append([]string{"propose", "--branch", "releases", "-o", "json"}, allow...)...)
	if res.code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
	}
	var rows []propose.Added
	if err := json.Unmarshal([]byte(res.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	tip, err := r.Git.Reference("refs/heads/releases", true)
	if err != nil {
		t.Fatal(err)
	}
	want := propose.Added{Package: "foo", Version: "1.1.0", Image: reg.Host + "/acme/foo-bundle@" + digest, Digest: digest, Tag: "v1.1.0",
		Catalogs: []string{"catalog"}, Channels: []string{"stable"}, Branch: "releases", Commit: tip.Hash().String()}
	if len(rows) != 1 {
		t.Fatalf("rows %+v; want one", rows)
	}
	got := rows[0]
	got.Message, got.Body = "", ""
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("row\n%+v\nwant\n%+v", got, want)
	}

	res = ownersCLI(t, r.Dir, append([]string{"propose", "--branch", "releases"}, allow...)...)
	if res.code != exitError || !strings.Contains(res.stderr, "branch releases exists") {
		t.Errorf("again: exit %d, stderr %s; want %d and the branch that exists", res.code, res.stderr, exitError)
	}
	res = ownersCLI(t, r.Dir, "propose")
	if res.code != exitError || !strings.Contains(res.stderr, "--branch") {
		t.Errorf("no branch: exit %d, stderr %s", res.code, res.stderr)
	}
}

// TestProposeSilentRegistry: a watched repository whose registry never
// answers is given up within the registry timeout, reported as a
// transport failure naming the registry, and nothing is written.
func TestProposeSilentRegistry(t *testing.T) {
	isolateCredentials(t)
	t.Setenv(timeout.EnvTimeout, "200ms")
	host, accepted := silentRegistry(t)
	r := changetest.NewRepo(t)
	r.Commit("catalog", map[string]string{
		".catalogbot.yaml":         fmt.Sprintf("propose:\n  - package: foo\n    repository: %s/acme/foo-bundle\n    channels: [stable]\n", host),
		"catalog/foo/catalog.yaml": proposetest.Package("foo", "stable", "foo.v1.0.0", "1.0.0"),
	})
	res := ownersCLI(t, r.Dir, "propose", "--branch", "releases", "--allow-private-registry", "127.0.0.1")
	if res.code != exitInvalid || !strings.Contains(res.stderr, "transport") || !strings.Contains(res.stderr, host) {
		t.Errorf("exit %d, want %d and a transport failure naming %s\nstdout: %s\nstderr: %s", res.code, exitInvalid, host, res.stdout, res.stderr)
	}
	if n := accepted(); n == 0 || n > 2 {
		t.Errorf("%d connections to the silent registry, want 1 or 2", n)
	}
	if _, err := r.Git.Reference("refs/heads/releases", false); err == nil {
		t.Error("a branch was written")
	}
}
