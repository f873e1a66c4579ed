package conformance_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/operator-framework/operator-registry/pkg/image/containerdregistry"
	"github.com/sirupsen/logrus"

	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/template"
	"github.com/catalogbot/catalogbot/publisher/template/templatetest"
)

// benchLatency is added to every registry request once the registry is
// seeded: a registry across a network rather than on the same host.
const benchLatency = 20 * time.Millisecond

// BenchmarkSemverTemplate200 renders one semver template of 200 bundles
// (ten minor versions of twenty patches, candidate and stable, minor and
// major channels) from a loopback registry that answers every request
// 20 ms late, side by side: operator-registry v1.65.0's template code with
// its containerd registry client, which renders bundles one after another
// (as opm alpha render-template does), and publisher/template, which
// renders eight at once. Each iteration starts cold: a new opm cache
// directory, a new catalogbot renderer. Run with -benchtime=1x.
func BenchmarkSemverTemplate200(b *testing.B) {
	logrus.SetOutput(io.Discard)
	var delay atomic.Bool
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay.Load() {
			time.Sleep(benchLatency)
		}
		reg.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")

	var bundles []templatetest.Bundle
	for minor := range 10 {
		for patch := range 20 {
			bundles = append(bundles, templatetest.Bundle{Package: "widget", Version: fmt.Sprintf("1.%d.%d", minor, patch)})
		}
	}
	refs := templatetest.Push(b, func(t templatetest.Bundle) string { return host + "/widget-bundle:v" + t.Version }, false, bundles...)
	text := "schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ncandidate:\n  bundles:\n"
	for _, r := range refs {
		text += "  - image: " + r + "\n"
	}
	text += "stable:\n  bundles:\n"
	for _, r := range refs[len(refs)-50:] {
		text += "  - image: " + r + "\n"
	}
	delay.Store(true)
	c := templateCase{name: "bench", text: text}

	b.Run("opm", func(b *testing.B) {
		for b.Loop() {
			reg, err := containerdregistry.NewRegistry(containerdregistry.WithCacheDir(b.TempDir()+"/cache"),
				containerdregistry.WithPlainHTTP(true), containerdregistry.WithLog(logrus.NewEntry(logrus.New())))
			if err != nil {
				b.Fatal(err)
			}
			out := opmTemplate(b, reg, c)
			reg.Destroy()
			if out.err != nil {
				b.Fatal(out.err)
			}
		}
	})
	b.Run("catalogbot", func(b *testing.B) {
		for b.Loop() {
			r, err := render.New(render.Options{TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			res, err := template.Render(context.Background(), "bench.yaml", []byte(text), template.Options{Renderer: r})
			if err != nil || res.Config == nil {
				b.Fatal(err, res.Findings)
			}
		}
	})
}
