package webhook

// NotReadyError is why the service is not ready to take deliveries:
// Reason is the few words GET /readyz answers with, Err the detail, which
// goes to the log only (it may name hosts, paths or a database).
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *NotReadyError) Unwrap() error { return e.Err }

// NotReady says err makes the service not ready, for reason; nil stays
// nil.
func NotReady(reason string, err error) error {
	if err == nil {
		return nil
	}
	return &NotReadyError{Reason: reason, Err: err}
}

// AllReady is ready when every one of ready is; the first that is not
// says why. Nil entries are skipped.
func AllReady(ready ...func() error) func() error {
	return func() error {
		for _, r := range ready {
			if r == nil {
				continue
			}
			if err := r(); err != nil {
				return err
			}
		}
		return nil
	}
}
