// Package registry is what every part of catalogbot that talks to container
// registries shares: the keychain that finds credentials as the container
// tools on the same machine do (Keychain, ContainersKeychain); the classes
// registry failures fall into (Classify), what a person is told about one
// (Explain) and which ones leave a check pending (Unanswered); the
// transport that retries what may pass (NewRetryTransport); and, for one
// pass of a check, the breaker that stops it from waiting on a registry
// that already ran out of time (Breaker) and the gate that lets a host's
// first handshake go before the others and remembers the hosts found down
// (HostGate); and, for every check of a process, the bound on the contacts
// with each host and the circuit breaker per host that a service's jobs
// share (Hosts), so that a registry which never answers holds one of its
// workers for one deadline rather than every worker on every try.
//
// Its sub-packages hold the HTTP transport under every client (timeout),
// the rule for connections that pull request data steers (egress), and
// the registries tests talk to (registrytest).
//
// It is a leaf: the image check, catalog assembly and publishing build on
// it, and it imports none of them.
package registry
