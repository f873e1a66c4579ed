// Package keyref tells a signing key's file from a key held by a key
// management service, by its name alone. It is apart from publisher/sign
// so that reading a configuration that names a key (the App's) does not
// link the signing stack.
package keyref

import "regexp"

// kmsRef is a key reference as cosign takes one for --key: an RFC 3986
// scheme, "://", and the key's name at the provider.
var kmsRef = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://.`)

// IsKMS says whether key names a key held by a key management service
// (scheme://…, as cosign names them: hashivault://KEY, awskms:///ARN, …)
// rather than a key file.
func IsKMS(key string) bool { return kmsRef.MatchString(key) }
