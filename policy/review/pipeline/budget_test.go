package pipeline

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
)

// spyFS records the files read from it (opened or read whole).
type spyFS struct {
	fs.FS
	mu   sync.Mutex
	read []string
}

func (s *spyFS) Open(name string) (fs.File, error) {
	if info, err := fs.Stat(s.FS, name); err == nil && info.Mode().IsRegular() {
		s.mu.Lock()
		s.read = append(s.read, name)
		s.mu.Unlock()
	}
	return s.FS.Open(name)
}

func (s *spyFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(s.FS, name) }

func (s *spyFS) wasRead(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.read, name)
}

// bigBlob is an olm.package blob of about n bytes.
func bigBlob(n int) string {
	return `{"schema":"olm.package","name":"foo-extra","description":"` + strings.Repeat("x", n) + "\"}\n"
}

// TestLimits: past a limit of the policy a check fails with a finding that
// names the limit and its key, where the content is, and what a limit
// keeps out is never read.
func TestLimits(t *testing.T) {
	reg := registrytest.New(t)
	registrytest.Push(t, reg.Ref("a:v1"), registrytest.RandomImage(t))
	registrytest.Push(t, reg.Ref("b:v1"), registrytest.RandomImage(t))
	twoImages := strings.ReplaceAll(withBundle(reg.Ref("a:v1")), "quay.io/example/foo-bundle:v1.0.0", reg.Ref("b:v1"))

	tests := []struct {
		name        string
		base, head  map[string]string
		limits      func(*policy.Limits)
		check       string
		wantRule    string
		wantFile    string
		wantKey     string
		notRead     string // a head file no check may read
		wantRepos   int    // repositories the registry is asked about
		imageChecks bool
	}{
		{
			name:   "a file over limits.fileBytes",
			base:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/foo/big.json": bigBlob(2000)},
			limits: func(l *policy.Limits) { l.FileBytes = 1000 },
			check:  FBCName, wantRule: RuleLimitFileBytes, wantFile: "catalog/foo/big.json", wantKey: "limits.fileBytes",
			notRead: "catalog/foo/big.json",
		},
		{
			// The base had the file already: it is still not read, and
			// an unread file is never excused as pre-existing.
			name:   "a file over limits.fileBytes on both sides",
			base:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/foo/big.json": bigBlob(2000)},
			head:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog + "\n", "catalog/foo/big.json": bigBlob(2000)},
			limits: func(l *policy.Limits) { l.FileBytes = 1000 },
			check:  FBCName, wantRule: RuleLimitFileBytes, wantFile: "catalog/foo/big.json", wantKey: "limits.fileBytes",
			notRead: "catalog/foo/big.json",
		},
		{
			name:   "more catalog than limits.catalogBytes",
			base:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog, "catalog/foo/a.json": bigBlob(3000), "catalog/foo/b.json": bigBlob(3000)},
			limits: func(l *policy.Limits) { l.CatalogBytes = 5000 },
			check:  FBCName, wantRule: RuleLimitCatalogBytes, wantKey: "limits.catalogBytes",
		},
		{
			name:   "more images than limits.images",
			base:   map[string]string{"catalog/foo/catalog.yaml": fooCatalog},
			head:   map[string]string{"catalog/foo/catalog.yaml": twoImages},
			limits: func(l *policy.Limits) { l.Images = 1 },
			check:  ImagesName, wantRule: RuleLimitImages, wantFile: "catalog/foo/catalog.yaml", wantKey: "limits.images",
			wantRepos: 1, imageChecks: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(reg.Requests())
			pol := policy.Default()
			tt.limits(&pol.Limits)
			head := &spyFS{FS: tree(tt.head)}
			in := &Input{Change: diff(tt.base, tt.head, nil), Base: tree(tt.base), Head: head, Policy: pol}
			if tt.imageChecks {
				in.ImageOptions = &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}
				in.AllImages = true
			}
			rep := Run(context.Background(), in)
			var res checks.Result
			for _, r := range rep.Results {
				if r.Name == tt.check {
					res = r
				}
			}
			if res.Conclusion != checks.Failure {
				t.Errorf("%s = %s, want failure (%s)", tt.check, res.Conclusion, res.Summary)
			}
			var found *checks.Finding
			for i, f := range res.Findings {
				if f.Rule == tt.wantRule {
					found = &res.Findings[i]
				}
			}
			switch {
			case found == nil:
				t.Errorf("no %s finding in %+v", tt.wantRule, res.Findings)
			case found.Severity != checks.SeverityError || (tt.wantFile != "" && found.File != tt.wantFile) ||
				!strings.Contains(found.Message, tt.wantKey) || !strings.Contains(found.Message, policy.FileName):
				t.Errorf("finding %+v, want an error at %q naming %s and the policy file", *found, tt.wantFile, tt.wantKey)
			}
			if tt.notRead != "" && head.wasRead(tt.notRead) {
				t.Errorf("%s was read", tt.notRead)
			}
			if _, onBase := tt.base[tt.notRead]; tt.notRead != "" && !onBase {
				// Whose package the blobs of an unread file the change
				// adds belong to is not known, so no approval can be
				// judged either.
				for _, r := range rep.Results {
					if r.Name == OwnersName && (r.Conclusion != checks.Failure || !strings.Contains(r.Summary, tt.wantKey)) {
						t.Errorf("owners = %s, %q; want failure naming %s", r.Conclusion, r.Summary, tt.wantKey)
					}
				}
			}
			asked := map[string]bool{}
			for _, r := range reg.Requests()[before:] {
				if r.Repo != "" {
					asked[r.Repo] = true
				}
			}
			if len(asked) != tt.wantRepos {
				t.Errorf("the registry was asked about %v, want %d repositories", asked, tt.wantRepos)
			}
		})
	}
}
