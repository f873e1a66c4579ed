package checks

// Names the external tests use; nothing outside the package needs them.
var (
	VisibleJSON = visibleJSON
)
