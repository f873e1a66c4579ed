// Package durable keeps catalogbot serve's work and what it learns from
// deliveries in a database, so that a restart loses nothing and several
// replicas can share them. It is the durable counterpart of webhook.Queue
// (same semantics, see Queue) and of the App's in-memory records
// (Facts), on River (github.com/riverqueue/river), a job queue the
// service does not own the code of.
//
// # Engines
//
// Open takes either a state directory, where one SQLite file
// (modernc.org/sqlite, pure Go) is the embedded default and needs nothing
// else, or a PostgreSQL URL, which several replicas share. A SQLite file
// belongs to one process at a time: Open holds a lock on it and refuses a
// second opener. Open creates a fresh state, migrates one written by an
// older version, and refuses one written by a newer version, naming both.
//
// # Keyed work on River
//
// River runs jobs; the keyed semantics are kept beside it, in the table
// catalogbot_key: one row per key with work, holding the newest job of the
// key (a newer job replaces the queued older one) and the key's lease. For
// each such key there is exactly one River job of kind catalogbot_work
// (unique by key among the live states, running included), so a key is
// worked on by one worker at a time, on whichever replica fetched it. The
// worker takes the key's job from its row, runs it, and loops while the row
// holds newer work; it completes its River job in the same transaction
// that finds the row empty and removes it, so that work enqueued while the
// job ran is never lost between the two.
//
// A job held back until its NotBefore is a scheduled River job. The
// periodic resync is a River periodic job, which only the elected leader
// inserts.
//
// # Replicas dying
//
// A worker holds the key's lease while it runs and renews it every
// LeaseTTL/3. A replica that dies leaves its River job running; River's
// rescuer (on the leader) makes it retryable after RescueAfter, and
// another replica takes it once the lease has lapsed. A replica that is
// slow, not dead, keeps renewing its lease, and the rescued copy waits
// (snoozes) for it, so a pull request never has two passes at once. See
// docs/architecture.md for the bound on the takeover.
package durable
