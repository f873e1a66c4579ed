package images

import "github.com/catalogbot/catalogbot/checks/registry"

// Class is the outcome of checking one reference: the classes of registry
// failures (see registry.Class), ok, and policy.
type Class = registry.Class

// The classes, as registry names them.
const (
	ClassOK           = registry.ClassOK
	ClassNotFound     = registry.ClassNotFound
	ClassUnauthorized = registry.ClassUnauthorized
	ClassRateLimited  = registry.ClassRateLimited
	ClassTransport    = registry.ClassTransport
	ClassPolicy       = registry.ClassPolicy
)

// Classes lists every class, ok first, in the order reports count them.
var Classes = registry.Classes
