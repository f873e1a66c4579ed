package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

func refList(entries ...string) string {
	s := "name: cool-catalog\nrepo: quay.io/example/cool-catalog\ntag: latest\nreferences:\n"
	for i := 0; i+1 < len(entries); i += 2 {
		s += "  - name: " + entries[i] + "\n    image: " + entries[i+1] + "\n"
	}
	return s
}

func TestReferences(t *testing.T) {
	host := registrytest.New(t).Host
	push := func(tag, catalog string) string {
		ref := host + "/foo-index:" + tag
		registrytest.Push(t, ref, rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
			rendertest.Layer(t, rendertest.Entry{Name: "configs/foo/catalog.yaml", Body: catalog})))
		return ref
	}
	v1 := push("v1", fooCatalog)
	v2 := push("v2", strings.Replace(fooCatalog, ":v1.0.0", ":v1.0.0-1", 1))
	broken := push("broken", badDefault(fooCatalog))
	bar := pushCatalog(t, host+"/bar-index:v1", map[string]string{"bar": pkgCatalog("bar", "1.0.0")})
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	base := refList("foo", v1, "bar", bar)

	tests := []struct {
		name     string
		head     string
		renderer *render.Renderer
		want     checks.Conclusion
		// wantRule is the rule of the one finding expected, on the line of
		// the foo entry's image (line 6), or "" for none.
		wantRule string
		summary  string
	}{
		{name: "a changed reference that renders and validates", head: refList("foo", v2, "bar", bar),
			renderer: renderer, want: checks.Success, summary: "changed `foo`"},
		{name: "a changed reference that renders to an invalid catalog", head: refList("foo", broken, "bar", bar),
			renderer: renderer, want: checks.Failure, wantRule: "M5"},
		{name: "a changed reference that does not exist", head: refList("foo", host+"/foo-index:v9", "bar", bar),
			renderer: renderer, want: checks.Failure, wantRule: RuleReferenceRender},
		{name: "a local layout is never read", head: refList("foo", "oci:/etc", "bar", bar),
			renderer: renderer, want: checks.Failure, wantRule: RuleReferenceNotImage},
		{name: "rendering off", head: refList("foo", v2, "bar", bar),
			want: checks.Neutral, summary: "Rendering is off"},
		{name: "unchanged", head: base, renderer: renderer, want: checks.Success, summary: "leaves catalog.yaml as it is"},
		{name: "a removed reference is not rendered", head: refList("foo", v1),
			renderer: renderer, want: checks.Success, summary: "removed `bar`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := map[string]string{"catalog.yaml": base}
			h := map[string]string{"catalog.yaml": tt.head}
			in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: policy.Default(), Renderer: tt.renderer}
			res := References{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s (%s, %+v)", res.Conclusion, tt.want, res.Summary, res.Findings)
			}
			if !strings.Contains(res.Summary, tt.summary) {
				t.Errorf("summary %q does not say %q", res.Summary, tt.summary)
			}
			switch {
			case tt.wantRule == "" && len(res.Findings) > 0:
				t.Errorf("findings = %+v, want none", res.Findings)
			case tt.wantRule != "" && (len(res.Findings) != 1 || res.Findings[0].Rule != tt.wantRule ||
				res.Findings[0].File != "catalog.yaml" || res.Findings[0].Line != 6):
				t.Errorf("findings = %+v, want one %s at catalog.yaml:6", res.Findings, tt.wantRule)
			}
		})
	}
}

// TestReferencesOwnedPerEntry runs the owners check on a reference list
// change: the entry's owner approves it alone, as the entry is owned as
// its own path.
func TestReferencesOwnedPerEntry(t *testing.T) {
	base := map[string]string{
		"OWNERS":                  "approvers:\n  - root-admin\n",
		"cool-catalog/foo/OWNERS": "approvers:\n  - alice\n",
		"catalog.yaml":            refList("foo", "quay.io/example/foo-index:v1", "bar", "quay.io/example/bar-index:v1"),
	}
	head := map[string]string{}
	for k, v := range base {
		head[k] = v
	}
	head["catalog.yaml"] = refList("foo", "quay.io/example/foo-index:v2", "bar", "quay.io/example/bar-index:v1")
	pol := policy.Default()
	for _, tt := range []struct {
		author string
		want   checks.Conclusion
	}{{"alice", checks.Success}, {"mallory", checks.Failure}} {
		c := diff(base, head, nil)
		c.Author = tt.author
		in := &Input{Change: c, Base: tree(base), Head: tree(head), Policy: pol}
		res := Owners{}.Run(context.Background(), in)
		if res.Conclusion != tt.want {
			t.Errorf("author %s: owners = %s, want %s (%s)", tt.author, res.Conclusion, tt.want, res.Summary)
		}
	}
}

// TestReferencesPending: an entry whose registry rate limits or cannot be
// reached is not rendered yet, which leaves the check pending, saying
// what it waits for, with no finding against the entry.
func TestReferencesPending(t *testing.T) {
	limited := registrytest.New(t)
	limited.Fail(registrytest.Fault{Status: 429})
	down := registrytest.NewHangup(t)
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The base's side of the entry renders: only the new image waits.
	base := refList("foo", pushCatalog(t, registrytest.New(t).Host+"/foo-index:v1", map[string]string{"foo": fooCatalog}))
	tests := []struct {
		name string
		head string
		want checks.Wait
	}{
		{"rate limited", refList("foo", limited.Ref("foo-index:v2")), checks.Wait{Registry: limited.Host, Class: checks.WaitRateLimited, Count: 1}},
		{"unreachable", refList("foo", down.Ref("foo-index:v2")), checks.Wait{Registry: down.Host, Class: checks.WaitTransport, Count: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := map[string]string{"catalog.yaml": base}
			h := map[string]string{"catalog.yaml": tt.head}
			in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: policy.Default(), Renderer: renderer}
			res := References{}.Run(context.Background(), in)
			if res.Conclusion != checks.Pending || len(res.Findings) != 0 {
				t.Fatalf("result = %s %+v, want pending without findings (%s)", res.Conclusion, res.Findings, res.Summary)
			}
			if len(res.Waits) != 1 || res.Waits[0] != tt.want {
				t.Errorf("waits = %+v, want %+v", res.Waits, tt.want)
			}
			if want := "- `foo`: could not be rendered yet\n\n1 could not be rendered yet.\nCould not judge every entry yet: registry " + tt.want.Registry; !strings.Contains(res.Summary, want) {
				t.Errorf("summary %q does not say %q", res.Summary, want)
			}
		})
	}
}

// TestReferencesAllowlist: the policy's allowlist binds rendering as it
// binds the images check. An entry outside it is a policy finding on its
// line and its registry sees no connection; inside it, a registry that
// cannot be asked leaves the check pending, and the summary says what
// happened to each entry rather than claiming a render.
func TestReferencesAllowlist(t *testing.T) {
	// A registry that cannot be asked, and a witness of whether anything
	// tried.
	down := registrytest.NewHangup(t)
	host := down.Host
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// The unchanged entry is on a registry that answers, which the
	// allowlist names in both cases.
	good := registrytest.New(t).Host
	bar := pushCatalog(t, good+"/bar-index:v1", map[string]string{"bar": pkgCatalog("bar", "1.0.0")})
	base := refList("bar", bar)
	head := refList("foo", host+"/foo-index:v1", "bar", bar)
	tests := []struct {
		name      string
		allow     []string
		want      checks.Conclusion
		wantRule  string
		wantSev   checks.Severity
		wantConns bool
		summary   string
	}{
		{name: "outside the allowlist", allow: []string{good}, want: checks.Failure,
			wantRule: "IM5", wantSev: checks.SeverityError, summary: "- `foo`: refused by policy, not contacted"},
		{name: "on the allowlist, registry unreachable", allow: []string{good, host}, want: checks.Pending,
			wantConns: true, summary: "- `foo`: could not be rendered yet\n\n1 could not be rendered yet."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := down.Conns()
			pol := policy.Default()
			pol.Images.AllowRegistries = tt.allow
			b := map[string]string{"catalog.yaml": base}
			h := map[string]string{"catalog.yaml": head}
			in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: pol, Renderer: renderer}
			res := References{}.Run(context.Background(), in)
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s (%s)", res.Conclusion, tt.want, res.Summary)
			}
			if !strings.Contains(res.Summary, tt.summary) || strings.Contains(res.Summary, "Rendered and validated") {
				t.Errorf("summary %q does not say %q", res.Summary, tt.summary)
			}
			switch {
			case tt.wantRule == "":
				// Waiting is not a finding against the entry.
				if len(res.Findings) != 0 {
					t.Errorf("findings = %+v, want none", res.Findings)
				}
			case len(res.Findings) != 1 || res.Findings[0].Rule != tt.wantRule || res.Findings[0].Severity != tt.wantSev ||
				res.Findings[0].File != "catalog.yaml" || res.Findings[0].Line != 6:
				t.Errorf("findings = %+v, want one %s %s at catalog.yaml:6", res.Findings, tt.wantSev, tt.wantRule)
			}
			if got := down.Conns() - before; (got > 0) != tt.wantConns {
				t.Errorf("%d connection(s) to the registry; want any: %v", got, tt.wantConns)
			}
		})
	}
}

// TestCheckDeadline: a pull request check ends at limits.checkTimeout
// however long a registry it names keeps it waiting, and what was cut
// short says so and is pending, never a pass.
func TestCheckDeadline(t *testing.T) {
	host := registrytest.NewTarpit(t).Addr
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	bar := pushCatalog(t, registrytest.New(t).Host+"/bar-index:v1", map[string]string{"bar": pkgCatalog("bar", "1.0.0")})
	b := map[string]string{"catalog.yaml": refList("bar", bar)}
	h := map[string]string{"catalog.yaml": refList("foo", host+"/foo-index:v1", "bar", bar)}
	pol := policy.Default()
	pol.Limits.CheckTimeout = 200 * time.Millisecond
	in := &Input{Change: diff(b, h, nil), Base: tree(b), Head: tree(h), Policy: pol, Renderer: renderer}

	// Without the deadline this waits for the registry for ever; the
	// guard turns that into a failure rather than a hung test run.
	done := make(chan checks.Report, 1)
	go func() { done <- Run(context.Background(), in) }()
	var rep checks.Report
	select {
	case rep = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the check did not end at its deadline")
	}
	for _, res := range rep.Results {
		if res.Name != ReferencesName {
			continue
		}
		said := res.Summary
		for _, f := range res.Findings {
			said += "\n" + f.Message
		}
		if res.Conclusion != checks.Pending || !strings.Contains(said, "limits.checkTimeout (200ms)") {
			t.Errorf("references = %s, %q; want pending, naming limits.checkTimeout", res.Conclusion, said)
		}
	}
	if rep.Passed() {
		t.Error("the report passed a check that was cut short")
	}
}
