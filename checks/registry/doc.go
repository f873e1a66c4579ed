// Package registry is what every part of catalogbot that talks to container
// registries shares: the keychain that finds credentials as the container
// tools on the same machine do, the classes registry failures fall into,
// and the transport that retries what may pass.
//
// It is a leaf: the image check, catalog assembly and publishing build on
// it, and it imports none of them.
package registry
