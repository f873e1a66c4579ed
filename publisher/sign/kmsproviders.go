package sign

// The KMS providers compiled in. HashiCorp Vault's transit engine is the
// one a self-hosted publisher can run without a cloud, and its client is
// light; the AWS, Google Cloud and Azure providers each bring their
// cloud's SDK into the binary, so those schemes (awskms://, gcpkms://,
// azurekms://) are served by a sigstore KMS plugin the user installs
// (sigstore-kms-awskms, …) instead, as any other scheme is.
import _ "github.com/sigstore/sigstore/pkg/signature/kms/hashivault"
