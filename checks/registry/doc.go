// Package registry is what every part of catalogbot that talks to container
// registries shares: the keychain that finds credentials as the container
// tools on the same machine do, the classes registry failures fall into,
// the transport that retries what may pass, and the breaker that stops a
// pass from waiting on a registry that already ran out of time.
//
// Its sub-packages hold the HTTP transport under every client (timeout)
// and the rule for connections that pull request data steers (egress).
//
// It is a leaf: the image check, catalog assembly and publishing build on
// it, and it imports none of them.
package registry
