// Package images verifies the image references of a catalog against their
// registries and against the repository's image policy.
//
// What is checked: every olm.bundle image and relatedImages entry of a
// File-Based Catalog, every image of a catalog.yaml reference list and the
// base image the catalog is published on. Each reference is checked once,
// however often it is written, and every place it is written is reported.
//
// How: existence is a HEAD request on the manifest, which registries answer
// without counting it as a pull (Docker Hub's pull limits count GETs only). A
// manifest or config is fetched only when a policy rule needs its content:
// the labels of a catalog image, the platforms it provides, or whether a
// bundle image is an index when the HEAD response's media type does not say.
// Requests are bounded overall and per registry, each has a timeout, and
// failures are retried with exponential backoff and jitter, honouring
// Retry-After on 429 and 503.
//
// For references from a pull request (Options.Egress), every connection,
// token realm and redirect included, passes the egress rule, each
// reference has a deadline (Options.ReferenceTimeout), and a registry that
// runs out of it is not asked again in the same run. Credentials go to
// their own registry only, whatever realm its challenge names.
//
// Every failure falls into exactly one class (see registry.Class), so a report can
// tell "this image is not there" from "we were not allowed to look": an
// authentication failure is never reported as a missing image.
package images
