package sign_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/catalogbot/catalogbot/publisher/sign"
)

func TestSameRepository(t *testing.T) {
	for _, tc := range []struct {
		recorded, want string
		same           bool
	}{
		{"acme/catalog", "acme/catalog", true},
		{"acme/catalog", "Acme/Catalog", true},
		{"https://github.com/acme/catalog", "acme/catalog", true},
		{"https://github.com/acme/catalog.git", "acme/catalog", true},
		{"git@github.com:Acme/catalog.git", "acme/catalog", true},
		{"/work/acme/catalog", "/work/acme/catalog", true},
		{"acme/catalog2", "acme/catalog", false},
		{"https://github.com/evil/acme/catalog", "acme/catalog", false},
		{"/work/acme/catalog", "acme/catalog", false},
		{"", "acme/catalog", false},
	} {
		if got := sign.SameRepository(tc.recorded, tc.want); got != tc.same {
			t.Errorf("SameRepository(%q, %q) = %v, want %v", tc.recorded, tc.want, got, tc.same)
		}
	}
}

// TestCheckPublication: what the approval records must be what was asked
// about: the tag's repository and tag, the repository and the catalog.
func TestCheckPublication(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	rec := sign.Record{Approval: sign.Approval{Repository: "acme/catalog", Catalog: "v4.20", Image: "quay.io/acme/index:v4.20"}}
	rec.Digest, _ = name.NewDigest("quay.io/acme/index@" + digest)
	for _, tc := range []struct {
		ref    string
		claims sign.Claims
		err    string
	}{
		{"quay.io/acme/index:v4.20", sign.Claims{}, ""},
		{"quay.io/acme/index@" + digest, sign.Claims{}, ""},
		{"quay.io/acme/index:v4.20", sign.Claims{Repository: "acme/catalog", Catalog: "v4.20", CheckCatalog: true}, ""},
		{"quay.io/acme/index:v4.21", sign.Claims{}, "not under the tag v4.21"},
		{"quay.io/acme/other:v4.20", sign.Claims{}, "not to quay.io/acme/other"},
		{"quay.io/acme/index:v4.20", sign.Claims{Repository: "evil/catalog"}, "was published from acme/catalog, not from evil/catalog"},
		{"quay.io/acme/index:v4.20", sign.Claims{CheckCatalog: true}, "is catalog v4.20, not (the repository's one catalog)"},
	} {
		ref, err := name.ParseReference(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		err = sign.CheckPublication(ref, rec, sign.ProvenanceParameters{}, tc.claims)
		if tc.err == "" && err != nil || tc.err != "" && (!errors.Is(err, sign.ErrPublication) || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s %+v: %v; want %q", tc.ref, tc.claims, err, tc.err)
		}
	}
}

func TestSameTarget(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"quay.io/acme/index:v1", "quay.io/acme/index:v1", true},
		{"quay.io/acme/index", "quay.io/acme/index:latest", true},
		{"localhost:5000/acme/index:v1", "localhost:5000/acme/index:v1", true},
		{"quay.io/acme/index:v1", "quay.io/acme/index:v2", false},
		{"quay.io/acme/index:v1", "quay.io/acme/other:v1", false},
		{"oci:out", "quay.io/acme/index:v1", false},
	} {
		if got := sign.SameTargetForTest(tc.a, tc.b); got != tc.same {
			t.Errorf("sameTarget(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
