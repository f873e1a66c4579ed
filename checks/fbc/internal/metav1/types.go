// Package v1 holds the one k8s.io/apimachinery/pkg/apis/meta/v1 type that an
// olm.csv.metadata property refers to.
//
// The directory is metav1 but the package is named v1 on purpose:
// encoding/json names the Go type in its type-mismatch errors with the package
// name, and `opm validate` prints "[]v1.GroupVersionKind".
package v1

// GroupVersionKind identifies a Kubernetes kind. Only its JSON decoding
// matters here; the upstream type has no custom JSON methods.
type GroupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}
