package conformance_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/operator-framework/operator-registry/alpha/action"
	"github.com/operator-framework/operator-registry/alpha/action/migrations"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/image/containerdregistry"
	"github.com/sirupsen/logrus"

	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/bundletest"
)

// TestTruthRenderParity renders each bundle image the truthfulness tests
// use (publisher/render/bundletest: the faithful bundle and one per kind of
// lie), pulled by digest from a registry on loopback, with opm's own
// render (alpha/action.Render over its containerd registry client, as `opm
// render REF --use-http` runs it) and with publisher/render, which the
// truthfulness check renders them with, with no migration and with each
// migration level. Output must be byte-identical in both formats: what the
// check compares a blob with is what opm makes of the image.
func TestTruthRenderParity(t *testing.T) {
	logrus.SetOutput(io.Discard)
	host := registrytest.New(t).Host
	im := bundletest.Push(t, host)
	reg, err := containerdregistry.NewRegistry(containerdregistry.WithCacheDir(t.TempDir()+"/cache"),
		containerdregistry.WithPlainHTTP(true), containerdregistry.WithLog(logrus.NewEntry(logrus.New())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Destroy() })

	for _, v := range bundletest.Variants {
		for _, level := range append([]string{""}, render.MigrationLevels...) {
			t.Run(v+"/level="+level, func(t *testing.T) {
				ref := im.Refs[v]
				r := action.Render{Refs: []string{ref}, Registry: reg, AllowedRefMask: action.RefBundleImage}
				if level != "" {
					if r.Migrations, err = migrations.NewMigrations(level); err != nil {
						t.Fatal(err)
					}
				}
				cfg, err := r.Run(context.Background())
				if err != nil {
					t.Fatalf("opm render %s: %v", ref, err)
				}
				ours, err := render.New(render.Options{MigrateLevel: level, Keychain: authn.NewMultiKeychain()})
				if err != nil {
					t.Fatal(err)
				}
				got, err := ours.RenderOne(context.Background(), ref)
				if err != nil {
					t.Fatalf("catalogbot render %s: %v", ref, err)
				}
				for _, format := range renderFormats {
					var want, have bytes.Buffer
					write, writeOurs := declcfg.WriteJSON, render.WriteJSON
					if format == "yaml" {
						write, writeOurs = declcfg.WriteYAML, render.WriteYAML
					}
					if err := write(*cfg, &want); err != nil {
						t.Fatal(err)
					}
					if err := writeOurs(&have, got); err != nil {
						t.Fatal(err)
					}
					if d := firstDiff("opm", "catalogbot", want.Bytes(), have.Bytes()); d != "" {
						t.Errorf("-o %s: output differs\n%s", format, d)
					}
				}
			})
		}
	}
}
