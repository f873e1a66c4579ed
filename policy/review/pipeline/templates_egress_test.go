package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/egress/egresstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// templateChange is a change that edits the template to name bundles and
// leaves an output behind, so that the templates check renders them.
func templateChange(bundles []string) (base, head map[string]string) {
	base = map[string]string{tplPath: semverTemplate(nil, nil), outFile: "---\n"}
	head = map[string]string{tplPath: semverTemplate(bundles, nil), outFile: "---\n"}
	return base, head
}

func plainRenderer(t *testing.T) *render.Renderer {
	t.Helper()
	r, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTemplatesAllowlist: the policy's allowlist binds the bundle images a
// template names as it binds every other check: a bundle outside it is a
// policy finding, and its registry sees no connection.
func TestTemplatesAllowlist(t *testing.T) {
	reg := egresstest.Serve(t, http.NotFoundHandler())
	var bundles []string
	for i := range 3 {
		bundles = append(bundles, fmt.Sprintf("127.0.0.1:%s/widget-bundle:v1.%d.0", reg.Port, i))
	}
	base, head := templateChange(bundles)
	pol := templatesPolicy()
	pol.Images.AllowRegistries = []string{"quay.io"}
	in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol, Renderer: plainRenderer(t)}

	res := Templates{}.Run(context.Background(), in)
	if res.Conclusion != checks.Failure || len(res.Findings) != 3 {
		t.Fatalf("templates = %s with %+v, want failure with 3 findings\n%s", res.Conclusion, res.Findings, res.Summary)
	}
	for _, f := range res.Findings {
		if f.File != tplPath || f.Line < 2 || !strings.Contains(f.Message, "outside the allowed registries") {
			t.Errorf("finding %s:%d %s; want one at the bundle's line naming the allowlist", f.File, f.Line, f.Message)
		}
	}
	if n := reg.Conns(); n != 0 {
		t.Errorf("%d connections to a registry outside the allowlist, want 0", n)
	}
}

// TestTemplatesJudgeAnswers: a registry that answers (a refusal, a
// missing image) has judged the template's bundle: the check fails on it
// and does not end neutral, which GitHub counts as passing. The finding
// does not quote what the registry sent.
func TestTemplatesJudgeAnswers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		want   string
	}{
		{"unauthorized", http.StatusUnauthorized, "unauthorized"},
		{"forbidden", http.StatusForbidden, "unauthorized"},
		{"not found", http.StatusNotFound, "does not render"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := egresstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, `{"errors":[{"code":"DENIED","message":"INTERNAL-SECRET-9f2c"}]}`)
			}))
			base, head := templateChange([]string{"127.0.0.1:" + reg.Port + "/widget-bundle:v1.0.0"})
			in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: templatesPolicy(), Renderer: plainRenderer(t)}

			res := Templates{}.Run(context.Background(), in)
			if res.Conclusion != checks.Failure || len(res.Findings) != 1 {
				t.Fatalf("templates = %s with %+v, want failure with 1 finding\n%s", res.Conclusion, res.Findings, res.Summary)
			}
			text := res.Summary + res.Findings[0].Message
			if !strings.Contains(text, tt.want) || strings.Contains(text, "INTERNAL-SECRET") {
				t.Errorf("report does not say %q, or quotes the registry's body:\n%s", tt.want, text)
			}
		})
	}
}

// TestTemplatesDeadlineAndBreaker: bundle images on a registry that
// accepts connections and never answers cost the per-reference deadline
// (limits.referenceTimeout), not the transport's own; once one has run
// out, the registry is not asked again in the pass, and the check waits
// on it, naming it.
func TestTemplatesDeadlineAndBreaker(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	host := "127.0.0.1:" + tarpit.Port
	var bundles []string
	for i := range 24 {
		bundles = append(bundles, fmt.Sprintf("%s/widget-bundle:v1.%d.0", host, i))
	}
	base, head := templateChange(bundles)
	pol := templatesPolicy()
	pol.Limits.ReferenceTimeout = 300 * time.Millisecond
	in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol, Renderer: plainRenderer(t)}

	// Far more than the per-reference deadline, and far less than the
	// transport's own header timeout, which alone would end the pulls.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res := Templates{}.Run(ctx, in)
	if ctx.Err() != nil {
		t.Fatal("the check ran until the test's own deadline: no per-reference deadline")
	}
	if res.Conclusion != checks.Pending || len(res.Waits) != 1 || res.Waits[0].Registry != host {
		t.Fatalf("templates = %s waiting on %+v, want pending on %s\n%s", res.Conclusion, res.Waits, host, res.Summary)
	}
	// Only the pulls started before the first deadline (8 at once, the
	// template's default) met the tarpit; each may try https and then
	// http.
	if n := tarpit.Conns(); n == 0 || n > 2*8 {
		t.Errorf("%d connections to the tarpit, want 1 to %d", n, 2*8)
	}
}

// TestTemplatesShareTheBreaker: a registry another check of the pass has
// waited out is not asked again for a template's bundles.
func TestTemplatesShareTheBreaker(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	host := "127.0.0.1:" + tarpit.Port
	base, head := templateChange([]string{host + "/widget-bundle:v1.0.0"})
	breaker := &registry.Breaker{}
	breaker.Record(host, context.DeadlineExceeded)
	in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: templatesPolicy(),
		Renderer: plainRenderer(t), Breaker: breaker}

	res := Templates{}.Run(context.Background(), in)
	if res.Conclusion != checks.Pending || len(res.Waits) != 1 || res.Waits[0].Registry != host {
		t.Errorf("templates = %s waiting on %+v, want pending on %s\n%s", res.Conclusion, res.Waits, host, res.Summary)
	}
	if n := tarpit.Conns(); n != 0 {
		t.Errorf("%d connections to a registry that timed out earlier in the pass, want 0", n)
	}
}

// TestRenderBoundByCatalogBytes: an image a pull request names is written
// out no further than limits.catalogBytes; past it the bundle is a finding
// that names the limit, and nothing waits.
func TestRenderBoundByCatalogBytes(t *testing.T) {
	host := registrytest.New(t).Host
	refs := templatetest.Push(t, func(b templatetest.Bundle) string { return host + "/widget-bundle:v" + b.Version }, true,
		templatetest.Bundle{Package: "widget", Version: "1.0.0"})
	base, head := templateChange(refs)
	pol := templatesPolicy()
	pol.Limits.CatalogBytes = 1000
	in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol, Renderer: plainRenderer(t)}

	rep := Run(context.Background(), in)
	var res *checks.Result
	for i := range rep.Results {
		if rep.Results[i].Name == TemplatesName {
			res = &rep.Results[i]
		}
	}
	if res == nil || res.Conclusion != checks.Failure || len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Message, "limits.catalogBytes") {
		t.Fatalf("templates = %+v, want one finding naming limits.catalogBytes", res)
	}
}

// TestTemplatesOverLimit: a template past limits.fileBytes is a finding
// that names the limit; it does not leave the check undecided (neutral),
// which GitHub counts as passing.
func TestTemplatesOverLimit(t *testing.T) {
	base, head := templateChange([]string{"quay.io/acme/widget-bundle:v1.0.0"})
	pol := templatesPolicy()
	pol.Limits.FileBytes = 16
	in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol, Renderer: plainRenderer(t)}
	in.bind()

	res := Templates{}.Run(context.Background(), in)
	if res.Conclusion != checks.Failure || len(res.Findings) != 1 || res.Findings[0].Rule != RuleLimitFileBytes ||
		res.Findings[0].File != tplPath || !strings.Contains(res.Findings[0].Message, "limits.fileBytes") {
		t.Fatalf("templates = %s with %+v, want one %s finding on %s\n%s", res.Conclusion, res.Findings, RuleLimitFileBytes, tplPath, res.Summary)
	}
}
