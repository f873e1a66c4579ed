package v1

import (
	"encoding/json"
	"testing"
)

// The package name is part of encoding/json's error text; opm prints it as v1.
func TestDecodeErrorNamesPackageV1(t *testing.T) {
	type holder struct {
		NativeAPIs []GroupVersionKind `json:"nativeAPIs"`
	}
	var x holder
	err := json.Unmarshal([]byte(`{"nativeAPIs":"x"}`), &x)
	const want = "json: cannot unmarshal string into Go struct field holder.nativeAPIs of type []v1.GroupVersionKind"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	err = json.Unmarshal([]byte(`{"nativeAPIs":[{"group":"","version":"v1","kind":1}]}`), &x)
	const want2 = "json: cannot unmarshal number into Go struct field GroupVersionKind.nativeAPIs.kind of type string"
	if err == nil || err.Error() != want2 {
		t.Fatalf("got %v, want %q", err, want2)
	}
}
