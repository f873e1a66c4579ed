package fbcreport

// Names the external tests use; nothing outside the package needs them.
var (
	Summary = summary
)
