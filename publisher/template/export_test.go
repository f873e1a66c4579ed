package template

// NewCache returns an empty cache, for the external tests.
func NewCache() *Cache { return &Cache{m: map[string]Known{}} }
