package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/registry"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/bundletest"
)

// TestTruth adds, in a pull request, a blob written for the faithful bundle
// image that points at each bundle image of bundletest in turn: the
// faithful one matches, and each other one is a BT finding (golden) on the
// blob's line, because the image holds another package, version, set of
// APIs or related images than the blob says.
func TestTruth(t *testing.T) {
	reg := registrytest.New(t)
	im := bundletest.Push(t, reg.Host)
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"catalog/bar/catalog.yaml": strings.ReplaceAll(fooCatalog, "foo", "bar")}
	run := func(t *testing.T, pol *policy.Policy, head map[string]string) checks.Result {
		t.Helper()
		in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: pol,
			ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}, Renderer: renderer}
		return Truth{}.Run(context.Background(), in)
	}
	with := func(catalog string) map[string]string {
		return map[string]string{"catalog/foo/catalog.yaml": catalog, "catalog/bar/catalog.yaml": base["catalog/bar/catalog.yaml"]}
	}

	tests := []struct {
		variant, level string
		want           checks.Conclusion
		rules          []string
	}{
		{variant: bundletest.Faithful, want: checks.Success},
		{variant: "other-package", want: checks.Failure, rules: []string{"BT2"}},
		// The CSV changes with the version, and so does its manifest.
		{variant: "other-version", want: checks.Failure, rules: []string{"BT3", "BT7"}},
		{variant: "missing-api", want: checks.Failure, rules: []string{"BT4", "BT7"}},
		{variant: "extra-required", want: checks.Failure, rules: []string{"BT5", "BT7"}},
		{variant: "other-related", want: checks.Failure, rules: []string{"BT7", "BT8"}},
		// A migrated blob carries olm.csv.metadata, compared with the
		// image's CSV migrated the same way.
		{variant: bundletest.Faithful, level: render.MigrateBundleObjectToMeta, want: checks.Success},
		{variant: "other-version", level: render.MigrateBundleObjectToMeta, want: checks.Failure, rules: []string{"BT3"}},
		// The CSV's metadata leaves its related images out.
		{variant: "other-related", level: render.MigrateBundleObjectToMeta, want: checks.Failure, rules: []string{"BT8"}},
	}
	var golden strings.Builder
	for _, tt := range tests {
		name := tt.variant
		if tt.level != "" {
			name += " migrated"
		}
		t.Run(name, func(t *testing.T) {
			catalog := im.Catalog(t, tt.variant, tt.level)
			res := run(t, policy.Default(), with(catalog))
			if res.Conclusion != tt.want {
				t.Errorf("conclusion = %s, want %s\n%s", res.Conclusion, tt.want, res.Summary)
			}
			line := blobLine(catalog)
			var rules []string
			for _, f := range res.Findings {
				rules = append(rules, f.Rule)
				if f.File != "catalog/foo/catalog.yaml" || f.Line != line || f.Severity != checks.SeverityError || f.Package != "foo" || f.Bundle != "foo.v0.2.0" {
					t.Errorf("finding %+v, want an error on the blob at catalog/foo/catalog.yaml:%d", f, line)
				}
			}
			if !slices.Equal(rules, tt.rules) {
				t.Errorf("rules = %v, want %v", rules, tt.rules)
			}
			fmt.Fprintf(&golden, "## %s\n", name)
			for _, f := range res.Findings {
				fmt.Fprintf(&golden, "%s %s:%d %s\n", f.Rule, f.File, f.Line, im.Stable(f.Message))
			}
		})
	}
	checkstest.Golden(t, "testdata/truth.golden", []byte(golden.String()))

	t.Run("warning", func(t *testing.T) {
		pol := policy.Default()
		pol.Images.Truthfulness = images.TruthWarning
		res := run(t, pol, with(im.Catalog(t, "other-package", "")))
		if res.Conclusion != checks.Success || len(res.Findings) != 1 || res.Findings[0].Severity != checks.SeverityWarning {
			t.Errorf("result = %+v, want success with one warning", res)
		}
	})
	t.Run("unchanged bundles are not pulled again", func(t *testing.T) {
		same := with(im.Catalog(t, "other-package", ""))
		in := &Input{Change: diff(same, same, nil), Base: tree(same), Head: tree(same), Policy: policy.Default(),
			ImageOptions: &images.Options{}, Renderer: renderer}
		before := len(reg.Requests())
		if res := (Truth{}).Run(context.Background(), in); res.Conclusion != checks.Success || len(reg.Requests()) != before {
			t.Errorf("result = %+v after %d requests, want success and none", res, len(reg.Requests())-before)
		}
		// A property the check does not compare is no new claim.
		labelled := with(strings.Replace(same["catalog/foo/catalog.yaml"], "properties:\n", "properties:\n- type: example.com/label\n  value: stable\n", 1))
		in = &Input{Change: diff(same, labelled, nil), Base: tree(same), Head: tree(labelled), Policy: policy.Default(),
			ImageOptions: &images.Options{}, Renderer: renderer}
		if res := (Truth{}).Run(context.Background(), in); res.Conclusion != checks.Success || len(reg.Requests()) != before || !strings.Contains(res.Summary, "no bundle blob") {
			t.Errorf("labelled: result = %+v after %d requests, want success and none", res, len(reg.Requests())-before)
		}
	})
	t.Run("a digest is pulled once", func(t *testing.T) {
		head := with(im.Catalog(t, "missing-api", ""))
		hits := renderer.CacheHits()
		before := reg.Count("GET", "blobs")
		if res := run(t, policy.Default(), head); res.Conclusion != checks.Failure {
			t.Errorf("conclusion = %s, want failure", res.Conclusion)
		}
		if renderer.CacheHits() != hits+1 || reg.Count("GET", "blobs") != before {
			t.Errorf("cache hits %d→%d, blob pulls %d→%d: want the render of the first run reused", hits, renderer.CacheHits(), before, reg.Count("GET", "blobs"))
		}
	})
	t.Run("not judged is never truthful", func(t *testing.T) {
		registrytest.Push(t, reg.Ref("truth/not-a-bundle:v1"), registrytest.RandomImage(t))
		faithful := im.Catalog(t, bundletest.Faithful, "")
		cases := []struct {
			name, image string
			want        checks.Conclusion
			rules       []string
		}{
			// The images check reports the missing image.
			{"missing", reg.Ref("truth/gone:v1"), checks.Neutral, nil},
			{"not a bundle image", reg.Ref("truth/not-a-bundle:v1"), checks.Neutral, []string{"BT9"}},
		}
		for _, c := range cases {
			res := run(t, policy.Default(), with(strings.ReplaceAll(faithful, im.Refs[bundletest.Faithful], c.image)))
			var rules []string
			for _, f := range res.Findings {
				rules = append(rules, f.Rule)
			}
			if res.Conclusion != c.want || !slices.Equal(rules, c.rules) || !strings.Contains(res.Summary, "not judged") {
				t.Errorf("%s: result = %+v, want %s with %v, not judged", c.name, res, c.want, c.rules)
			}
		}
	})
	t.Run("limits.images", func(t *testing.T) {
		pol := policy.Default()
		pol.Limits.Images = 1
		in := &Input{Change: diff(base, with(im.Catalog(t, "other-version", "")), nil), Base: tree(base), Head: tree(with(im.Catalog(t, "other-version", ""))),
			Policy: pol, ImageOptions: &images.Options{}, Renderer: renderer}
		in.imageBudget().take([]string{reg.Ref("something/else:v1")}, false)
		res := Truth{}.Run(context.Background(), in)
		if res.Conclusion != checks.Failure || len(res.Findings) != 1 || res.Findings[0].Rule != RuleLimitImages {
			t.Errorf("result = %+v, want one LM1 finding", res)
		}
	})
}

// blobLine is the line the olm.bundle blob of a YAML catalog starts on.
func blobLine(catalog string) int {
	line := 1
	for _, d := range strings.SplitAfter(catalog, "---\n") {
		if strings.Contains(d, "schema: olm.bundle\n") {
			return line
		}
		line += strings.Count(d, "\n")
	}
	return 0
}

// TestTruthRendersOnce: a change that adds a catalog template naming a
// bundle image by digest, and the output generated from it, has the image
// pulled once in the pass: the templates check renders it, and the
// truthfulness check takes its rendering from the renderer's cache.
func TestTruthRendersOnce(t *testing.T) {
	reg := registrytest.New(t)
	im := bundletest.Push(t, reg.Host)
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	tpl := "schema: olm.template.basic\nentries:\n" +
		"  - {schema: olm.package, name: foo, defaultChannel: stable}\n" +
		"  - {schema: olm.channel, package: foo, name: stable, entries: [{name: foo.v0.2.0}]}\n" +
		"  - {schema: olm.bundle, image: \"" + im.Refs[bundletest.Faithful] + "\"}\n"
	head := map[string]string{"templates/foo.yaml": tpl, "catalog/foo/catalog.yaml": im.Catalog(t, bundletest.Faithful, "")}
	pol := policy.Default()
	pol.Catalog.Templates = []policy.Template{{Template: "templates/foo.yaml", Output: "catalog/foo"}}
	in := &Input{Change: diff(nil, head, nil), Base: tree(nil), Head: tree(head), Policy: pol,
		ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Attempts: 1}, Renderer: renderer}
	before := reg.Count("GET", "blobs")
	if res := (Templates{}).Run(context.Background(), in); res.Conclusion != checks.Success {
		t.Fatalf("templates: %s\n%s", res.Conclusion, res.Summary)
	}
	if res := (Truth{}).Run(context.Background(), in); res.Conclusion != checks.Success {
		t.Fatalf("truthfulness: %s\n%s", res.Conclusion, res.Summary)
	}
	// One pull is the config and the one layer.
	if n := reg.Count("GET", "blobs") - before; n != 2 || renderer.CacheHits() != 1 {
		t.Errorf("%d blob pulls and %d cache hits, want 2 (one pull) and 1", n, renderer.CacheHits())
	}
}

// BenchmarkTruth is the truthfulness check of a change that adds one
// bundle, against an in-process registry on loopback: cold, every run
// pulls and renders the image (a renderer without a cache); warm, the
// digest is in the renderer's cache, as for the App's next pull request
// naming it.
func BenchmarkTruth(b *testing.B) {
	reg := registrytest.New(b)
	im := bundletest.Push(b, reg.Host)
	head := map[string]string{"catalog/foo/catalog.yaml": im.Catalog(b, "other-version", "")}
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"cold", -1}, {"warm", 0}} {
		b.Run(c.name, func(b *testing.B) {
			renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: b.TempDir(), CacheBytes: c.bytes})
			if err != nil {
				b.Fatal(err)
			}
			run := func() {
				in := &Input{Change: diff(nil, head, nil), Base: tree(nil), Head: tree(head), Policy: policy.Default(),
					ImageOptions: &images.Options{}, Renderer: renderer}
				if res := (Truth{}).Run(context.Background(), in); res.Conclusion != checks.Failure {
					b.Fatalf("conclusion %s", res.Conclusion)
				}
			}
			run()
			b.ResetTimer()
			for b.Loop() {
				run()
			}
		})
	}
}

// TestTruthTakesAHostSlot: while another check's first contact with a
// registry host is under way (the images check's, in the App), the
// truthfulness check's render of a bundle image on that host waits for its
// outcome within the process's registryHostWait, and leaves the bundle
// waiting on the host, rather than dial it too. On a registry that never
// answers, dialling held the job for the whole limits.referenceTimeout
// however the images check was bounded.
func TestTruthTakesAHostSlot(t *testing.T) {
	tarpit := registrytest.NewTarpit(t)
	renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir(),
		InsecureRegistries: []string{tarpit.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	hosts := registry.NewHosts(registry.HostsOptions{Wait: 200 * time.Millisecond})
	// The other check's contact, which goes alone: the host is new.
	leave, err := hosts.Acquire(context.Background(), tarpit.Addr, "images check")
	if err != nil {
		t.Fatal(err)
	}
	defer leave(nil)
	head := map[string]string{"catalog/foo/catalog.yaml": strings.Replace(fooCatalog, "quay.io/example/foo-bundle:v1.0.0",
		tarpit.Addr+"/foo-bundle@sha256:"+strings.Repeat("ab", 32), 1)}
	pol := policy.Default()
	pol.Limits.ReferenceTimeout = 5 * time.Second
	in := &Input{Change: diff(nil, head, nil), Base: tree(nil), Head: tree(head), Policy: pol,
		ImageOptions: &images.Options{Keychain: authn.NewMultiKeychain(), Hosts: hosts}, Renderer: renderer,
		Breaker: &registry.Breaker{Hosts: hosts}}
	res := Truth{}.Run(context.Background(), in)
	if res.Conclusion != checks.Pending || len(res.Waits) != 1 || res.Waits[0].Registry != tarpit.Addr {
		t.Errorf("truthfulness = %s %+v, want pending on %s:\n%s", res.Conclusion, res.Waits, tarpit.Addr, res.Summary)
	}
	if n := settled(tarpit.Conns); n != 0 {
		t.Errorf("the truthfulness check dialled the tarpit %d times while another check's first contact was under way, want 0", n)
	}
}
