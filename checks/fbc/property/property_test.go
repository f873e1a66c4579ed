package property

import (
	"encoding/json"
	"fmt"
	"reflect"
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

// TestParseObjectsRead: where every olm.bundle.object value decodes, as
// the loader makes sure before it asks, ParseObjectsRead says what Parse
// says, its errors and their indexes included.
func TestParseObjectsRead(t *testing.T) {
	obj := Property{Type: TypeBundleObject, Value: json.RawMessage(`{"data":"eyJraW5kIjoiQ29uZmlnTWFwIn0="}`)}
	pkg := Property{Type: TypePackage, Value: json.RawMessage(`{"packageName":"a","version":"1.0.0"}`)}
	ocp := Property{Type: TypeMaxOpenShiftVersion, Value: json.RawMessage(`"4.14"`)}
	bad := Property{Type: TypeGVK, Value: json.RawMessage(`{"group":1}`)}
	for _, tc := range []struct {
		name  string
		props []Property
	}{
		{"none", nil},
		{"objects only", []Property{obj, obj}},
		{"package, objects, max OpenShift", []Property{pkg, obj, ocp, obj}},
		{"an error after an object", []Property{obj, pkg, bad}},
		{"an error before an object", []Property{bad, obj}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := Parse(tc.props)
			got, err := ParseObjectsRead(tc.props)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Errorf("ParseObjectsRead = %+v, %v; Parse = %+v, %v", got, err, want, wantErr)
			}
		})
	}
}
