package egress

// Names the external tests use; nothing outside the package needs them.
var (
	Classify   = classify
	ErrRefused = errRefused
	SameOwner  = sameOwner
)
