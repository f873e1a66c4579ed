package fbc

import "github.com/catalogbot/catalogbot/checks"

// Rules returns the catalogue of rules this package checks, in the order of
// the opm specification: loading (L), conversion (C), model (M). Ids are the
// specification's; L0 is catalogbot's own, for files that cannot be read at
// all. The catalogue is published in SARIF output, so ids and names are
// stable: code scanning keys alerts on them.
func Rules() []checks.Rule {
	out := make([]checks.Rule, len(rules))
	copy(out, rules)
	return out
}

var rules = []checks.Rule{
	// Loading and decoding.
	{ID: "L0", Name: "file-unreadable", Description: "A file in the catalog tree cannot be read."},
	{ID: "L1", Name: "every-file-parsed", Description: "Every regular file in the tree is parsed as catalog content, whatever its name or extension."},
	{ID: "L2", Name: "indexignore", Description: "Files matched by an .indexignore pattern are skipped, and .indexignore files themselves are never parsed."},
	{ID: "L3", Name: "symlink", Description: "A symlink to a file is parsed like the file, and a symlink to a directory cannot be read."},
	{ID: "L4", Name: "empty-input", Description: "Empty directories, empty files and files holding only document separators are valid."},
	{ID: "L5", Name: "load-order", Description: "Blobs from different files load in no fixed order, so opm may name a different first error between runs."},
	{ID: "L6", Name: "json-or-yaml", Description: "A file whose first non-space byte is '{' is decoded as a JSON stream and any other file as YAML, whatever its extension."},
	{ID: "L7", Name: "json-syntax", Description: "A JSON stream must be a sequence of well-formed JSON values."},
	{ID: "L8", Name: "yaml-document-separator", Description: "A '---' document separator may be followed only by spaces or a comment."},
	{ID: "L9", Name: "null-document", Description: "A document must not decode to null, as a comment-only document does."},
	{ID: "L10", Name: "yaml-1.1-typing", Description: "Unquoted YAML 1.1 scalars such as yes, on, n and 1.0 decode as booleans and numbers, not strings."},
	{ID: "L11", Name: "yaml-first-node-only", Description: "Only the first YAML node of a document is read, so objects after it without a '---' separator are dropped."},
	{ID: "L12", Name: "yaml-syntax", Description: "A YAML document must be syntactically valid."},
	{ID: "L13", Name: "top-level-object", Description: "Every document must be a mapping (a JSON object) at the top level."},
	{ID: "L14", Name: "case-folded-duplicate-keys", Description: "The keys of an object must not differ only by letter case."},
	{ID: "L15", Name: "meta-key-string", Description: "The schema, package and name keys must hold strings when present."},
	{ID: "L16", Name: "schema-required", Description: "Every object must have a non-empty schema field."},
	{ID: "L17", Name: "unknown-schema", Description: "Objects whose schema is not olm.package, olm.channel, olm.bundle or olm.deprecations are accepted and never validated."},
	{ID: "L18", Name: "field-types", Description: "The fields of olm.package, olm.channel, olm.bundle and olm.deprecations objects must have the expected JSON types."},
	{ID: "L19", Name: "bundle-object", Description: "An olm.bundle.object property must hold base64 data that decodes to a YAML or JSON object."},
	{ID: "L20", Name: "no-other-load-checks", Description: "Loading checks nothing else: missing fields are left empty for the later rules to catch."},

	// Conversion to the package, channel and bundle model.
	{ID: "C1", Name: "package-name-required", Description: "An olm.package must have a name."},
	{ID: "C2", Name: "duplicate-package", Description: "A package name must be declared only once."},
	{ID: "C3", Name: "dns1123-package-name", Description: "A package name must be a DNS-1123 label: at most 63 lower-case alphanumerics or '-', starting and ending with an alphanumeric."},
	{ID: "C4", Name: "channel-unknown-package", Description: "A channel's package must be a declared package."},
	{ID: "C5", Name: "channel-name-required", Description: "An olm.channel must have a name."},
	{ID: "C6", Name: "duplicate-channel", Description: "A channel name must be used only once per package."},
	{ID: "C7", Name: "duplicate-channel-entry", Description: "A channel must not list the same entry name twice."},
	{ID: "C8", Name: "bundle-package-required", Description: "An olm.bundle must name its package."},
	{ID: "C9", Name: "bundle-unknown-package", Description: "A bundle's package must be a declared package."},
	{ID: "C10", Name: "duplicate-bundle", Description: "A bundle name must be used only once per package."},
	{ID: "C11", Name: "property-value", Description: "Every bundle property value must have the shape its type requires."},
	{ID: "C12", Name: "single-olm-package-property", Description: "A bundle must have exactly one olm.package property."},
	{ID: "C13", Name: "olm-package-matches-bundle", Description: "The packageName of a bundle's olm.package property must equal the bundle's package."},
	{ID: "C14", Name: "bundle-image-reference", Description: "A bundle image must be a valid image reference."},
	{ID: "C15", Name: "related-image-reference", Description: "Every related image must be a valid image reference."},
	{ID: "C16", Name: "semver-version", Description: "A bundle's olm.package version must be a strict semantic version, without a leading v."},
	{ID: "C17", Name: "release-version", Description: "A bundle's release must be at most 20 characters of dot-separated semver pre-release identifiers."},
	{ID: "C18", Name: "bundle-in-channel", Description: "Every bundle must be an entry of at least one channel of its package."},
	{ID: "C19", Name: "channel-entry-has-bundle", Description: "Every channel entry must name an olm.bundle of the package."},
	{ID: "C20", Name: "default-channel-exists", Description: "A default channel that names no channel is added as an empty channel, which then fails M5."},
	{ID: "C21", Name: "deprecation-package-required", Description: "An olm.deprecations object must name its package."},
	{ID: "C22", Name: "deprecation-unknown-package", Description: "Deprecations must apply to a declared package."},
	{ID: "C23", Name: "single-deprecation-per-package", Description: "A package may have at most one olm.deprecations object."},
	{ID: "C24", Name: "deprecation-schema-required", Description: "Every deprecation entry must set reference.schema."},
	{ID: "C25", Name: "duplicate-deprecation-entry", Description: "A deprecation entry must not reference the same object twice."},
	{ID: "C26", Name: "deprecated-bundle-exists", Description: "A deprecated bundle must be an olm.bundle of the package."},
	{ID: "C27", Name: "deprecated-channel-exists", Description: "A deprecated channel must be a channel of the package."},
	{ID: "C28", Name: "deprecated-package-unnamed", Description: "A package deprecation entry must leave reference.name empty."},
	{ID: "C29", Name: "deprecation-reference-schema", Description: "A deprecation reference schema must be olm.package, olm.channel or olm.bundle."},

	// Model validation.
	{ID: "M1", Name: "default-channel-required", Description: "A package must set defaultChannel."},
	{ID: "M2", Name: "package-has-channel", Description: "A package must have at least one channel."},
	{ID: "M3", Name: "unique-bundle-versions", Description: "Bundle versions (with release) must be unique within a package."},
	{ID: "M4", Name: "package-deprecation-message", Description: "A package deprecation must have a message."},
	{ID: "M5", Name: "channel-has-bundle", Description: "A channel must contain at least one bundle."},
	{ID: "M6", Name: "channel-head-exists", Description: "A channel must have a head: a bundle that no other entry replaces or skips."},
	{ID: "M7", Name: "single-channel-head", Description: "A channel must have exactly one head."},
	{ID: "M8", Name: "replaces-cycle", Description: "The replaces chain from the channel head must not loop."},
	{ID: "M9", Name: "stranded-bundle", Description: "Every bundle of a channel must be on the head's replaces chain or skipped by an entry."},
	{ID: "M10", Name: "channel-deprecation-message", Description: "A channel deprecation must have a message."},
	{ID: "M11", Name: "bundle-name-required", Description: "A bundle must have a name."},
	{ID: "M12", Name: "normalized-bundle-name", Description: "A bundle with a release must be named <package>-v<version>-<release>."},
	{ID: "M13", Name: "empty-skip", Description: "A channel entry's skips must not contain an empty name."},
	{ID: "M14", Name: "skip-range", Description: "A skipRange must be a valid semver range."},
	{ID: "M15", Name: "bundle-olm-package-property", Description: "A bundle listed in a channel must exist with exactly one olm.package property."},
	{ID: "M16", Name: "bundle-image-required", Description: "A bundle must set image unless it carries olm.bundle.object properties."},
	{ID: "M17", Name: "bundle-deprecation-message", Description: "A bundle deprecation must have a message."},
	{ID: "M18", Name: "build-metadata-with-release", Description: "A bundle version with build metadata must not also set a release."},
}
