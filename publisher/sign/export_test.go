package sign

// SameTargetForTest is sameTarget, for the external tests.
var SameTargetForTest = sameTarget
