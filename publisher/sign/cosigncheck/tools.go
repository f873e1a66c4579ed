//go:build tools

package cosigncheck

import _ "github.com/sigstore/cosign/v2/cmd/cosign"
