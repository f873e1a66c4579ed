package images

import "testing"

func TestIndexDetection(t *testing.T) {
	tests := []struct {
		manifest string
		want     bool
	}{
		{`{"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`, true},
		{`{"mediaType":"application/vnd.docker.distribution.manifest.list.v2+json"}`, true},
		{`{"schemaVersion":2,"manifests":[{"digest":"sha256:00"}]}`, true},
		{`{"schemaVersion":2,"config":{},"layers":[]}`, false},
		{`{"mediaType":"application/vnd.oci.image.manifest.v1+json","manifests":[]}`, false},
		{`not json`, false},
	}
	for _, tt := range tests {
		var f facts
		setIndex(&f, []byte(tt.manifest))
		if f.Index == nil || *f.Index != tt.want {
			t.Errorf("setIndex(%s) = %v, want %v", tt.manifest, f.Index, tt.want)
		}
	}
	if _, known := indexMediaType("application/json"); known {
		t.Error("application/json taken as known")
	}
}

func TestPinned(t *testing.T) {
	const d = "sha256:abc"
	for in, want := range map[string]string{
		"quay.io/a/b:v1":           "quay.io/a/b@" + d,
		"quay.io/a/b":              "quay.io/a/b@" + d,
		"localhost:5000/a/b":       "localhost:5000/a/b@" + d,
		"localhost:5000/a/b:1.2.3": "localhost:5000/a/b@" + d,
		"busybox:1.36":             "busybox@" + d,
	} {
		if got := pinned(in, d); got != want {
			t.Errorf("pinned(%q) = %q, want %q", in, got, want)
		}
	}
}
