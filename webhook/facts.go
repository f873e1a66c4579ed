package webhook

import "context"

// Facts is where the App keeps what only deliveries tell it (who edited a
// comment, when a head was pushed, when a pending check is tried again),
// so that it outlives the process and is shared by replicas: package
// webhook/durable keeps them in the service's database. Without one the
// App keeps them in memory. Values are the App's own encoding.
type Facts interface {
	// Update sets ns/key to what fn returns from the current value (seen
	// says whether there is one); fn's false leaves it as it was. Updates
	// of one key are serialized, whichever replica makes them, and fn may
	// be called more than once.
	Update(ctx context.Context, ns, key string, fn func(old []byte, seen bool) ([]byte, bool)) error
	// Get is ns/key's value.
	Get(ctx context.Context, ns, key string) ([]byte, bool, error)
	// List is every value of ns, by key.
	List(ctx context.Context, ns string) (map[string][]byte, error)
}
