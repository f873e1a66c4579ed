package owners_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/owners"
)

func TestLoadDenylist(t *testing.T) {
	fsys := fstest.MapFS{
		"OWNERS":                      {Data: []byte("approvers: [root-admin]\n")},
		".git/OWNERS":                 {Data: []byte("approvers: [git]\n")},
		"sub/.git/OWNERS":             {Data: []byte("approvers: [git]\n")},
		"_output/OWNERS":              {Data: []byte("approvers: [out]\n")},
		"vendor/OWNERS":               {Data: []byte("approvers: [vendor-root]\n")},
		"vendor/example.com/OWNERS":   {Data: []byte("approvers: [vendor-host]\n")},
		"vendor/example.com/x/OWNERS": {Data: []byte("approvers: [vendored]\n")},
		"pkg/OWNERS/keep":             {Data: []byte("a directory named OWNERS is not a file\n")},
	}
	tests := []struct {
		name string
		opts owners.LoadOptions
		want []string
	}{
		{"preconfigured defaults", owners.LoadOptions{},
			[]string{"OWNERS", "vendor/OWNERS", "vendor/example.com/OWNERS"}},
		{"defaults ignored", owners.LoadOptions{IgnorePreconfiguredDefaults: true},
			[]string{".git/OWNERS", "OWNERS", "_output/OWNERS", "sub/.git/OWNERS", "vendor/OWNERS", "vendor/example.com/OWNERS", "vendor/example.com/x/OWNERS"}},
		{"configured denylist", owners.LoadOptions{DirDenylist: []string{"^vendor$"}},
			[]string{"OWNERS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := owners.Load(fsys, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Files(); !slices.Equal(got, tt.want) {
				t.Errorf("files %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := owners.Load(fstest.MapFS{}, owners.LoadOptions{DirDenylist: []string{"("}}); err == nil {
		t.Error("an invalid denylist regexp loaded")
	}
	boom := errors.New("disk on fire")
	if _, err := owners.Load(failingFS{fstest.MapFS{"a/OWNERS": {Data: []byte("approvers: [x]\n")}}, "a/OWNERS", boom}, owners.LoadOptions{}); !errors.Is(err, boom) {
		t.Errorf("error = %v, want the read error: a tree that cannot be read cannot be judged", err)
	}
	if _, err := owners.Load(failingFS{fstest.MapFS{}, "OWNERS_ALIASES", boom}, owners.LoadOptions{}); !errors.Is(err, boom) {
		t.Errorf("error = %v, want the aliases read error", err)
	}
}

// failingFS fails to read one file.
type failingFS struct {
	fstest.MapFS
	name string
	err  error
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.name {
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.err}
	}
	return f.MapFS.Open(name)
}

func (f failingFS) ReadFile(name string) ([]byte, error) {
	if name == f.name {
		return nil, &fs.PathError{Op: "read", Path: name, Err: f.err}
	}
	return f.MapFS.ReadFile(name)
}

func TestLoadAccessors(t *testing.T) {
	r := load(t, prowTree())
	if got := r.Aliases()["foo-team"]; !slices.Equal(got, []string{"alice", "bob"}) {
		t.Errorf("aliases = %v", r.Aliases())
	}
	if got := r.Findings(); len(got) != 0 {
		t.Errorf("findings = %v", got)
	}
	broken := load(t, fstest.MapFS{"OWNERS": {Data: []byte("approvers: x\n")}})
	if f := broken.Findings(); len(f) != 1 || !strings.Contains(f[0].Message, "must be a list") {
		t.Errorf("findings = %v", f)
	}
	if res := broken.Resolve("a/b"); res.Blocked == "" || res.BlockedBy != "OWNERS" {
		t.Errorf("resolution = %+v, want blocked by the root OWNERS", res)
	}
}

// TestLoadWithoutOwners: a tree with no OWNERS file at all, such as
// cool-catalog after it dropped them, leaves every path without approvers.
func TestLoadWithoutOwners(t *testing.T) {
	r := load(t, fstest.MapFS{"catalog/etcd/operator.json": {Data: []byte("{}")}})
	res := r.Resolve("catalog/etcd/operator.json")
	if len(res.Approvers) != 0 || res.ApproverOwnersFile != "OWNERS" || !strings.Contains(res.Why(), "nobody can approve") {
		t.Errorf("resolution = %+v (%s)", res, res.Why())
	}
}
