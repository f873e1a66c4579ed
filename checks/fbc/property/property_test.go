package property

import (
	"encoding/json"
	"testing"
)

// FuzzParsePackage holds ParsePackage to json.Unmarshal on any value:
// the same package, or an error from both.
func FuzzParsePackage(f *testing.F) {
	for _, seed := range []string{
		`{"packageName":"etcd","version":"0.9.4"}`,
		`{"packageName":"etcd","version":"0.9.4","release":"2"}`,
		`{"version":"1.0.0","packageName":"a"}`,
		`{"packageName":"a\u0062","version":"1"}`,
		`{"packageName":"a\\"b","version":"1"}`,
		`{"packageName":"é","version":"1"}`,
		"{\"packageName\":\"\xff\",\"version\":\"1\"}",
		"{\"packageName\":\"a\tb\",\"version\":\"1\"}",
		`{"packageName":"a","version":"1"} `,
		`{"packageName":"a","version":"1"}}`,
		`{"packageName":"a","version":1}`,
		`{"PackageName":"a","version":"1"}`,
		`{"packageName":"a","version":"1","version":"2"}`,
		`{"packageName":"a",`,
		`null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := ParsePackage(raw)
		var want Package
		wantErr := json.Unmarshal(raw, &want)
		if (err == nil) != (wantErr == nil) || got != want {
			t.Fatalf("ParsePackage(%q) = %+v, %v; json.Unmarshal gives %+v, %v", raw, got, err, want, wantErr)
		}
	})
}
