package pipeline

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/checkstest"
	"github.com/catalogbot/catalogbot/checks/registry/registrytest"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/publisher/render"
)

// registryFaults are answers registries really give, with the details that
// go-containerregistry prints as Go values ("map[Tag:v9]", "[map[Action:pull
// ...]]") and a body that names an internal host.
var registryFaults = []struct {
	name string
	registrytest.Fault
}{
	{"manifest unknown", registrytest.Fault{Repo: "foo-index", Status: 404,
		Body: `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown","detail":{"Tag":"v9"}}]}`}},
	{"name unknown", registrytest.Fault{Repo: "foo-index", Status: 404,
		Body: `{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry","detail":{"name":"foo-index"}}]}`}},
	{"unauthorized", registrytest.Fault{Repo: "foo-index", Status: 401,
		Body: `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":[{"Type":"repository","Name":"foo-index","Action":"pull"}]}]}`}},
	{"denied", registrytest.Fault{Repo: "foo-index", Status: 403,
		Body: `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied","detail":[{"Type":"repository","Name":"foo-index","Action":"pull"}]}]}`}},
	{"server error", registrytest.Fault{Repo: "foo-index", Status: 500,
		Body: `<html>upstream internal-db.corp:5432 refused</html>`}},
	{"bad gateway with details", registrytest.Fault{Repo: "foo-index", Status: 502,
		Body: `{"errors":[{"code":"UNKNOWN","message":"proxy","detail":{"upstream":["10.0.0.7:8080"]}}]}`}},
}

// goValue matches Go's printing of maps and slices of maps, and the body
// and addresses the faults carry.
var goValue = regexp.MustCompile(`map\[|\[map|\]\]|\[\]|internal-db|10\.0\.0\.7|<html>`)

// unanswered says whether a status means the registry did not judge.
func unanswered(status int) bool { return status >= 500 }

// A reference whose registry fails says so with its class, host and what
// to do, never with the library's dump of the registry's answer.
func TestReferenceRegistryFailureMessages(t *testing.T) {
	var b strings.Builder
	for _, tt := range registryFaults {
		reg := registrytest.New(t)
		reg.Fail(tt.Fault)
		renderer, err := render.New(render.Options{RegistryOnly: true, Keychain: authn.NewMultiKeychain(), TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		base := map[string]string{"catalog.yaml": refList("bar", "quay.io/example/bar-index:v1")}
		head := map[string]string{"catalog.yaml": refList("bar", "quay.io/example/bar-index:v1", "foo", reg.Ref("foo-index:v9"))}
		in := &Input{Change: diff(base, head, nil), Base: tree(base), Head: tree(head), Policy: policy.Default(), Renderer: renderer}
		res := References{}.Run(context.Background(), in)
		if unanswered(tt.Status) {
			// A registry that did not answer has said nothing: the
			// entry waits, and the summary must not quote it either.
			if res.Conclusion != checks.Pending || len(res.Findings) != 0 {
				t.Fatalf("%s: %s with findings %+v, want pending and none", tt.name, res.Conclusion, res.Findings)
			}
			sum := strings.ReplaceAll(res.Summary, reg.Host, "REGISTRY")
			if m := goValue.FindString(sum); m != "" {
				t.Errorf("%s: the summary quotes %q: %s", tt.name, m, sum)
			}
			continue
		}
		if len(res.Findings) != 1 {
			t.Fatalf("%s: findings %+v, want one", tt.name, res.Findings)
		}
		msg := strings.ReplaceAll(res.Findings[0].Message, reg.Host, "REGISTRY")
		if m := goValue.FindString(msg); m != "" {
			t.Errorf("%s: the message quotes %q: %s", tt.name, m, msg)
		}
		b.WriteString(tt.name + ": " + msg + "\n")
	}
	checkstest.Golden(t, filepath.Join("testdata", "registry-failures.golden"), []byte(b.String()))
}
