package v1alpha1

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	v1 "github.com/catalogbot/catalogbot/checks/fbc/internal/metav1"
)

// CSVMetadata has the shape of operator-registry v1.65.0's
// property.CSVMetadata, so that decoding into it exercises every type of this
// package the way `opm validate` does.
type CSVMetadata struct {
	Annotations               map[string]string         `json:"annotations,omitempty"`
	APIServiceDefinitions     APIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                    `json:"description,omitempty"`
	DisplayName               string                    `json:"displayName,omitempty"`
	InstallModes              []InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                  `json:"keywords,omitempty"`
	Labels                    map[string]string         `json:"labels,omitempty"`
	Links                     []AppLink                 `json:"links,omitempty"`
	Maintainers               []Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                    `json:"maturity,omitempty"`
	MinKubeVersion            string                    `json:"minKubeVersion,omitempty"`
	NativeAPIs                []v1.GroupVersionKind     `json:"nativeAPIs,omitempty"`
	Provider                  AppLink                   `json:"provider,omitempty"`
}

type decodeCase struct {
	Name      string `json:"name"`
	Input     string `json:"input"`
	Error     string `json:"error"`
	Reencoded string `json:"reencoded"`
}

func TestDecodeGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/decode-golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []decodeCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			// When the whole value has the wrong JSON type, encoding/json
			// names the top-level Go type, which upstream is
			// property.CSVMetadata and here is this test's copy.
			want := strings.Replace(c.Error, "Go value of type property.CSVMetadata", "Go value of type v1alpha1.CSVMetadata", 1)
			var m CSVMetadata
			got := ""
			if err := json.Unmarshal([]byte(c.Input), &m); err != nil {
				got = err.Error()
			}
			if got != want {
				t.Errorf("decode %s\n got: %q\nwant: %q", c.Input, got, want)
			}
			re, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(re) != c.Reencoded {
				t.Errorf("re-encoding of %s\n got: %s\nwant: %s", c.Input, re, c.Reencoded)
			}
		})
	}
}
