package reference

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// goldenCase is one line of testdata/parse-golden.json. Inputs that are not
// valid UTF-8 are carried base64-encoded in InputB64.
type goldenCase struct {
	Input      string `json:"input"`
	InputB64   string `json:"input_b64"`
	OK         bool   `json:"ok"`
	Error      string `json:"error"`
	Normalized string `json:"normalized"`
}

func (c goldenCase) input(t testing.TB) string {
	if c.InputB64 == "" {
		return c.Input
	}
	b, err := base64.StdEncoding.DecodeString(c.InputB64)
	if err != nil {
		t.Fatalf("bad input_b64 %q: %v", c.InputB64, err)
	}
	return string(b)
}

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	b, err := os.ReadFile("testdata/parse-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 150 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	return cases
}

func TestValidateGolden(t *testing.T) {
	for i, c := range loadGolden(t) {
		in := c.input(t)
		err := Validate(in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (err == nil) != c.OK || got != c.Error {
			t.Errorf("case %d Validate(%q) = %q, want ok=%v %q", i, in, got, c.OK, c.Error)
		}
		norm, nerr := normalize(in)
		if (nerr == nil) != (err == nil) || (nerr != nil && nerr.Error() != got) {
			t.Errorf("case %d Normalize(%q) error %v disagrees with Validate %v", i, in, nerr, err)
		}
		if norm != c.Normalized {
			t.Errorf("case %d Normalize(%q) = %q, want %q", i, in, norm, c.Normalized)
		}
	}
}

func TestValidateExamples(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		in, err, norm string
	}{
		{"foo", "", "docker.io/library/foo"},
		{"foo:v1", "", "docker.io/library/foo:v1"},
		{"index.docker.io/x/y:Z", "", "docker.io/x/y:Z"},
		{"localhost:5000/foo", "", "localhost:5000/foo"},
		{"foo:tag@sha256:" + hex, "", "docker.io/library/foo:tag@sha256:" + hex},
		{"https://foo", "invalid reference format", ""},
		{"foo:", "invalid reference format", ""},
		{"foo@sha256:abc", "invalid reference format", ""},
		{"[::1]:5000/foo", "invalid reference format", ""},
		{"Foo", "invalid reference format: repository name must be lowercase", ""},
		{"Localhost/foo", "invalid reference format: repository name must be lowercase", ""},
		{"foo:\u212a", "repository name must be lowercase", ""},
		{"foo@sha256:" + hex[:63], "invalid checksum digest length", ""},
		{"foo@sha256:" + strings.ToUpper(hex), "invalid checksum digest format", ""},
		{"foo:tag@SHA256:" + hex, "invalid checksum digest format", ""},
		// Without a tag, the algorithm is part of the "repository name" that
		// is checked for case before the grammar.
		{"foo@SHA256:" + hex, "invalid reference format: repository name must be lowercase", ""},
		{"foo@md5:" + hex[:32], "unsupported digest algorithm", ""},
		{hex, "invalid repository name (" + hex + "), cannot specify 64-byte hexadecimal strings", ""},
		{strings.Repeat("a", 238), "repository name must not be more than 255 characters", ""},
	} {
		norm, err := normalize(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.err || norm != tc.norm {
			t.Errorf("Normalize(%q) = %q, %q; want %q, %q", tc.in, norm, got, tc.norm, tc.err)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		"", "foo", "Foo", "foo:tag", "localhost:5000/foo", "example.com/a/b:c@sha256:" + strings.Repeat("0", 64),
		"foo@md5:" + strings.Repeat("0", 32), strings.Repeat("a", 64), "a__b/c--d.e", "foo:\u212a", "\xff/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err1 := Validate(s)
		err2 := Validate(s)
		if (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("Validate(%q) not deterministic: %v vs %v", s, err1, err2)
		}
		norm, err3 := normalize(s)
		if (err1 == nil) != (err3 == nil) {
			t.Fatalf("Validate(%q) = %v but Normalize error = %v", s, err1, err3)
		}
		if err3 == nil && norm == "" {
			t.Fatalf("Normalize(%q) returned an empty name", s)
		}
	})
}

var benchInputs = []string{
	"quay.io/operatorhubio/etcd@sha256:7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa",
	"registry.redhat.io/openshift4/ose-kube-rbac-proxy:v4.14",
	"registry.example.com:5000/team/operator-bundle:v1.2.3@sha256:7cc4b5aefd1d0cadf8d97d4350462ba51c694ebca145b08d7d41b41acc8db5aa",
	"busybox",
	"Quay.io/Org/Repo:tag",
	"https://example.com/foo",
}

func BenchmarkValidate(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Validate(benchInputs[i%len(benchInputs)])
	}
}
