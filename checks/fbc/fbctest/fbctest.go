// Package fbctest holds File-Based Catalog fixtures that tests of several
// packages share: the checks, the CLI and the service all start from the
// same small valid catalog and change it.
package fbctest

// Foo is a valid catalog of one package, foo: its olm.package, one channel
// (stable) and one bundle, foo.v1.0.0, whose image is
// quay.io/example/foo-bundle:v1.0.0. Line 15 is the bundle's image.
const Foo = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1.0.0
---
schema: olm.bundle
package: foo
name: foo.v1.0.0
image: quay.io/example/foo-bundle:v1.0.0
properties:
  - type: olm.package
    value:
      packageName: foo
      version: 1.0.0
`
