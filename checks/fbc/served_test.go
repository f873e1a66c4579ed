package fbc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/checks/fbc"
)

// TestServed renders the hand-written catalog of testdata/served as
// catalogd serves it. The golden file is catalogd's own output for it:
// the conformance module checks it against operator-registry's walker.
func TestServed(t *testing.T) {
	want, err := os.ReadFile("testdata/served/served.jsonl.golden")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	view, err := fbc.Served(context.Background(), os.DirFS("testdata/served/catalog"), &got)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("served view:\n%s\nwant:\n%s", got.String(), want)
	}
	wantView := fbc.ServedView{Size: int64(len(want)), Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(want)), Objects: 6}
	if view != wantView {
		t.Errorf("view = %+v, want %+v", view, wantView)
	}
}

// TestServedErrors: a catalog catalogd cannot store is an error that names
// the file and the line.
func TestServedErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"bad yaml", fstest.MapFS{
			"ok.yaml":  {Data: []byte("schema: olm.package\nname: a\n")},
			"bad.yaml": {Data: []byte("schema: olm.package\nname: b\n---\nschema: [\n")},
		}, "bad.yaml:4:"},
		{"bad json", fstest.MapFS{
			"x/index.json": {Data: []byte("{\"schema\":\"olm.package\",\"name\":\"a\"}\n{\"schema\":\"olm.package\",\"name\":\"b\"}\n{\"schema\": ]\n")},
		}, "x/index.json:3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := fbc.Served(context.Background(), tc.files, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}
