//go:build tools

package cosigncheck

// The tests build cosign's command from the version this module requires;
// the import keeps go mod tidy from dropping it.
import _ "github.com/sigstore/cosign/v2/cmd/cosign"
