// Package cosigncheck checks what catalogbot signs with the real cosign:
// it builds cmd/cosign from github.com/sigstore/cosign/v2 (the version
// this module requires) and runs `cosign verify` and `cosign
// verify-attestation` against images catalogbot published, signed and
// attested in an in-process registry on loopback, with keys made by
// `cosign generate-key-pair` and by catalogbot, and keyless with a fake
// Fulcio; and it has catalogbot verify what cosign signed.
//
// It is a module of its own so that the main module does not depend on
// cosign and its hundreds of modules. When cosign cannot be built (no
// module cache, no network) the tests skip and say why; CATALOGBOT_TEST_COSIGN
// names a cosign binary built already.
package cosigncheck
