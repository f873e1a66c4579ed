package owners

// Names the external tests use; nothing outside the package needs them.
var (
	ParseAliases  = parseAliases
	ParseCIYAML   = parseCIYAML
	ParseCommands = parseCommands
	ParseOwners   = parseOwners
)
