package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
)

// TestImagesCapIsOnePerPass: limits.images bounds the images one pull
// request check contacts, whichever checks contact them: images verified,
// reference list entries rendered and template bundles pulled all draw on
// one budget, an image contacted by two checks is counted once, and past
// the limit a check fails with LM1 at the first reference left out.
func TestImagesCapIsOnePerPass(t *testing.T) {
	reg := registrytest.New(t)
	ref := func(i int) string { return reg.Ref(fmt.Sprintf("r%d:v1", i)) }
	entries := func(from, n int) string {
		var e []string
		for i := from; i < from+n; i++ {
			e = append(e, fmt.Sprintf("e%d", i), ref(i))
		}
		return refList(e...)
	}
	bundles := func(from, n int) []string {
		var b []string
		for i := from; i < from+n; i++ {
			b = append(b, ref(i))
		}
		return b
	}
	tplBase, tplHead := templateChange(nil)
	_, tplHead2 := templateChange(bundles(10, 2))

	tests := []struct {
		name       string
		base, head map[string]string
		templates  bool // the policy maps tplPath to outDir
		verify     bool // the images check runs, on every image
		limit      int
		// wantLM1 is the number of LM1 findings across the checks, and
		// wantFile and wantLine, when set, the file and line of the first.
		wantLM1  int
		wantFile string
		wantLine int
		// wantRepos is how many repositories the registry is asked
		// about: never more than the limit.
		wantRepos int
	}{
		{
			name:  "entries rendered past the limit",
			base:  map[string]string{"catalog.yaml": refList()},
			head:  map[string]string{"catalog.yaml": entries(0, 3)},
			limit: 2, wantLM1: 1, wantFile: "catalog.yaml", wantLine: 10, wantRepos: 2,
		},
		{
			name:  "entries within the limit",
			base:  map[string]string{"catalog.yaml": refList()},
			head:  map[string]string{"catalog.yaml": entries(0, 2)},
			limit: 2, wantRepos: 2,
		},
		{
			// Verified and rendered, each image is one of the limit.
			name:   "entries verified and rendered count once",
			base:   map[string]string{"catalog.yaml": refList()},
			head:   map[string]string{"catalog.yaml": entries(0, 2)},
			verify: true, limit: 2, wantRepos: 2,
		},
		{
			// Two bundles and one entry: whichever check asks first,
			// the other is refused, and three images are never asked.
			name:      "template bundles and entries share the limit",
			base:      map[string]string{"catalog.yaml": refList(), tplPath: tplBase[tplPath], outFile: tplBase[outFile]},
			head:      map[string]string{"catalog.yaml": entries(0, 1), tplPath: tplHead2[tplPath], outFile: tplHead[outFile]},
			templates: true, limit: 2, wantLM1: 1, wantRepos: -2,
		},
		{
			name:      "template bundles past the limit",
			base:      tplBase,
			head:      map[string]string{tplPath: semverTemplate(bundles(10, 3), nil), outFile: tplHead[outFile]},
			templates: true, limit: 2, wantLM1: 1, wantFile: tplPath, wantLine: 6, wantRepos: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(reg.Requests())
			pol := policy.Default()
			if tt.templates {
				pol = templatesPolicy()
			}
			pol.Limits.Images = tt.limit
			in := &Input{Change: diff(tt.base, tt.head, nil), Base: tree(tt.base), Head: tree(tt.head), Policy: pol, Renderer: plainRenderer(t)}
			if tt.verify {
				in.ImageOptions = &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}
			}
			rep := Run(context.Background(), in)
			var lm1 []checks.Finding
			for _, r := range rep.Results {
				for _, f := range r.Findings {
					if f.Rule == RuleLimitImages {
						lm1 = append(lm1, f)
						if r.Conclusion != checks.Failure {
							t.Errorf("%s = %s with an LM1 finding, want failure", r.Name, r.Conclusion)
						}
					}
				}
			}
			if len(lm1) != tt.wantLM1 {
				t.Fatalf("LM1 findings = %+v, want %d", lm1, tt.wantLM1)
			}
			if tt.wantFile != "" && (lm1[0].File != tt.wantFile || lm1[0].Line != tt.wantLine) {
				t.Errorf("LM1 at %s:%d, want %s:%d (%s)", lm1[0].File, lm1[0].Line, tt.wantFile, tt.wantLine, lm1[0].Message)
			}
			for _, f := range lm1 {
				if !containsAll(f.Message, "limits.images", policy.FileName) {
					t.Errorf("LM1 message %q does not name limits.images and the policy file", f.Message)
				}
			}
			asked := map[string]bool{}
			for _, r := range reg.Requests()[before:] {
				if r.Repo != "" {
					asked[r.Repo] = true
				}
			}
			// A negative wantRepos is an upper bound: which check asks
			// first is up to the scheduler.
			if n := len(asked); (tt.wantRepos >= 0 && n != tt.wantRepos) || (tt.wantRepos < 0 && n > -tt.wantRepos) {
				t.Errorf("the registry was asked about %v, want %d repositories", asked, tt.wantRepos)
			}
		})
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
