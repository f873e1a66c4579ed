package publish

// Names the external tests use; nothing outside the package needs them.
var (
	Compare       = compare
	ReadPublished = readPublished
)
