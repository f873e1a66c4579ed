package registry

// Names the external tests use; nothing outside the package needs them.
var (
	ContainersAuthFiles = containersAuthFiles
)
