package fbc

import (
	"reflect"
	"testing"
)

// blobSeeds are JSON streams for the fast Blobs path: every character
// encoding/json escapes, keys out of order and nested, and the shapes
// that must go the exact way (folded keys, non-string names, numbers).
var blobSeeds = []string{
	`{"schema":"olm.package","name":"foo","defaultChannel":"stable","icon":{"mediatype":"image/png","base64data":"aGk="}}`,
	`{"schema":"olm.channel","package":"foo","name":"stable","entries":[{"name":"foo.v1","skips":["a"],"skipRange":"<1.0.0"}]}` + "\n" +
		`{"schema":"olm.bundle","package":"foo","name":"foo.v1","image":"quay.io/a/b:v1","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"value":{"b":true,"a":false,"list":[],"map":{}},"type":"x"}]}`,
	`{"schema":"x","s":"quote \" backslash \\ slash / <html> & \u00e9 \ud83d\ude00 \u2028 \u2029 \b \f \n \r \t \u0001 \u001f \u007f"}`,
	`{"schema":"x","esc":"quote \" backslash \\ <html> & \u00e9 \u2028 \u2029 \b \f \n \r \t \u0001 \u001f \u007f","raw":"é 😀  "}`,
	`{"schema":"x","\u0000key":"v","Key":"w","key":"x"}`,
	`{"schema":"olm.package","Name":"foo"}`,
	`{"schema":"olm.package","name":"foo","Key":"kelvin","key":"k"}`,
	`{"schema":"olm.package","name":"foo","NAME":"bar"}`,
	`{"schema":"olm.package","name":["foo"]}`,
	`{"schema":"x","n":1.0}`,
	`{"schema":"olm.package","name":"a"}  {"schema":"olm.package","name":"b"}` + "\n\n" + `{"package":"a","schema":"olm.channel","name":"s","entries":[]}`,
}

// TestBlobsFastPath: the fast path gives what the loader's decoding gives,
// sums included, and is taken for plain JSON.
func TestBlobsFastPath(t *testing.T) {
	for _, s := range blobSeeds {
		sameBlobs(t, []byte(s))
	}
	for _, i := range []int{0, 1, 3, len(blobSeeds) - 1} {
		data := []byte(blobSeeds[i])
		if roots, spans, ok := parseFastJSONStream(data); !ok {
			t.Errorf("the fast JSON parser refused seed %d", i)
		} else if _, ok := fastBlobs(data, roots, spans); !ok {
			t.Errorf("fastBlobs refused seed %d", i)
		}
	}
}

func FuzzBlobsFastPath(f *testing.F) {
	for _, s := range blobSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameBlobs(t, []byte(s)) })
}

// sameBlobs compares the fast path, when it takes data, with the exact one.
func sameBlobs(t *testing.T, data []byte) {
	t.Helper()
	if !looksLikeJSON(data) {
		return
	}
	roots, spans, ok := parseFastJSONStream(data)
	if !ok {
		return
	}
	got, ok := fastBlobs(data, roots, spans)
	if !ok {
		return
	}
	if want := exactBlobs(data); !reflect.DeepEqual(got, want) {
		t.Errorf("fastBlobs(%q) =\n%+v\nwant\n%+v", data, got, want)
	}
}
