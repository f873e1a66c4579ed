package assemble

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/checks/catalogyaml"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/publisher/render"
	"github.com/catalogbot/catalogbot/publisher/render/rendertest"
)

// testRegistry is an in-process registry that counts what it is asked,
// so tests can tell a cache hit (HEAD only) from a render (blob GETs).
type testRegistry struct {
	host string
	// delay (a time.Duration) is added to every request, standing in for
	// the round trip to a real registry.
	delay atomic.Int64

	// refuseHead makes manifest HEAD requests fail with 405, as some
	// registry proxies do.
	refuseHead atomic.Bool

	blobGets  atomic.Int64
	blobBytes atomic.Int64
	requests  atomic.Int64
	inFlight  atomic.Int64
	maxFlight atomic.Int64

	mu   sync.Mutex
	hits map[string]int // path -> requests, to find a reference's requests
}

func newTestRegistry(t testing.TB, delay time.Duration) *testRegistry {
	t.Helper()
	reg := &testRegistry{hits: map[string]int{}}
	reg.delay.Store(int64(delay))
	h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := reg.inFlight.Add(1)
		defer reg.inFlight.Add(-1)
		for {
			m := reg.maxFlight.Load()
			if n <= m || reg.maxFlight.CompareAndSwap(m, n) {
				break
			}
		}
		reg.requests.Add(1)
		reg.mu.Lock()
		reg.hits[r.URL.Path]++
		reg.mu.Unlock()
		if d := time.Duration(reg.delay.Load()); d > 0 {
			time.Sleep(d)
		}
		if r.Method == http.MethodHead && reg.refuseHead.Load() && strings.Contains(r.URL.Path, "/manifests/") {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			reg.blobGets.Add(1)
			cw := &countingWriter{ResponseWriter: w}
			h.ServeHTTP(cw, r)
			reg.blobBytes.Add(cw.n)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	reg.host = strings.TrimPrefix(srv.URL, "http://")
	return reg
}

// reset zeroes the counters between the runs a test compares.
func (r *testRegistry) reset() {
	r.blobGets.Store(0)
	r.blobBytes.Store(0)
	r.requests.Store(0)
	r.maxFlight.Store(0)
	r.mu.Lock()
	r.hits = map[string]int{}
	r.mu.Unlock()
}

type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

// catalogImage is a catalog image holding one package, whose bundle
// version makes images of the same package differ.
func catalogImage(t testing.TB, pkg, version string) v1.Image {
	t.Helper()
	body := fmt.Sprintf(`{"schema":"olm.package","name":%[1]q,"defaultChannel":"stable"}
{"schema":"olm.channel","package":%[1]q,"name":"stable","entries":[{"name":"%[1]s.v%[2]s"}]}
{"schema":"olm.bundle","package":%[1]q,"name":"%[1]s.v%[2]s","image":"quay.io/example/%[1]s-bundle:v%[2]s","properties":[{"type":"olm.package","value":{"packageName":%[1]q,"version":%[2]q}}],"relatedImages":[{"name":"operator","image":"quay.io/example/%[1]s:v%[2]s"},{"name":"","image":"quay.io/example/%[1]s-bundle:v%[2]s"}]}
`, pkg, version)
	return rendertest.Image(t, map[string]string{render.ConfigsLabel: "/configs"},
		rendertest.Layer(t,
			rendertest.Entry{Name: "configs/"},
			rendertest.Entry{Name: "configs/" + pkg + "/"},
			rendertest.Entry{Name: "configs/" + pkg + "/catalog.json", Body: body},
		))
}

// pushCatalogs pushes n catalog images, ref-0 ... ref-(n-1), and returns
// the catalog.yaml that references them.
func pushCatalogs(t testing.TB, reg *testRegistry, n int) *catalogyaml.File {
	t.Helper()
	var sb strings.Builder
	sb.WriteString("name: test-catalog\nreferences:\n")
	for i := range n {
		pkg := fmt.Sprintf("ref-%d", i)
		image := fmt.Sprintf("%s/example/%s-catalog:latest", reg.host, pkg)
		registrytest.Push(t, image, catalogImage(t, pkg, "1.0.0"))
		fmt.Fprintf(&sb, "- name: %s\n  image: %s\n", pkg, image)
	}
	return parse(t, sb.String())
}

func parse(t testing.TB, text string) *catalogyaml.File {
	t.Helper()
	f, findings := catalogyaml.Parse("catalog.yaml", []byte(text))
	for _, fd := range findings {
		t.Fatalf("catalog.yaml: %s:%d: %s", fd.File, fd.Line, fd.Message)
	}
	return f
}

// parseLoose parses a catalog.yaml that may have findings, returning them
// as file:line: message strings.
func parseLoose(text string) (*catalogyaml.File, []string) {
	f, findings := catalogyaml.Parse("catalog.yaml", []byte(text))
	var out []string
	for _, fd := range findings {
		out = append(out, fmt.Sprintf("%s:%d: %s", fd.File, fd.Line, fd.Message))
	}
	return f, out
}
