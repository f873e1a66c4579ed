// Package webhook is the intake of the GitHub App service behind
// catalogbot serve: it receives GitHub's webhooks, checks their
// signatures, turns them into keyed work and runs that work on a bounded
// queue. What the work does (check, report, merge, publish) is the
// reconciler's, in webhook/reconcile, which this package does not import:
// the queue runs any Processor.
//
// # Parts
//
//   - Server (server.go) serves POST /webhook, GET /healthz and GET /readyz
//     (Handler, the public listener) and GET /metrics (MetricsHandler, a
//     listener of its own, loopback by default, behind a bearer token when
//     one is set). A delivery is answered at once: 202 when it is taken or
//     ignored, and the work runs later on the Queue.
//   - POST /hooks/registry (registryhook.go), when a shared secret is
//     configured, reads Distribution, Quay and Harbor push notifications
//     and hands the pushed repositories to the App's proposer.
//   - The signature check (signature.go) verifies X-Hub-Signature-256
//     against every configured secret, so secrets can be rotated without
//     downtime.
//   - Routing (route.go) reads the few payload fields that decide what work
//     a delivery makes, a Job with a Key of (repository, PR, kind).
//   - Queue (queue.go) runs Jobs on a bounded worker pool: one job per key at
//     a time, a newer job replacing the queued older one of its key, delivery
//     ids deduplicated for a TTL, replays dropped (below), and bounds on
//     queued jobs, queued bytes and remembered ids, so a flood cannot exhaust
//     memory. The Server takes any Intake: Queue, in memory, or the durable
//     queue of package webhook/durable, which keeps the same semantics in a
//     database that outlives the process and that replicas share.
//   - Facts (facts.go) is where the App keeps what only deliveries tell it;
//     webhook/durable keeps them in the same database.
//   - Metrics (metrics.go) are the Prometheus metrics every part records;
//     BlockedWaits (blocked.go) among them keeps why each open pull request
//     waits and since when, for catalogbot_pr_blocked_seconds.
//   - Config and LoadConfig (config.go) read the service's strict YAML file
//     and the environment, where secrets belong.
//
// # Trust
//
// Nothing from the network is parsed before its signature is verified: the
// headers are checked, the body is read up to MaxBody (25 MiB), its
// HMAC-SHA256 is compared in constant time, and only then is it decoded. A
// failed check is answered 401 and leaves no trace in the queue or the
// dedupe memory. The SHA-1 X-Hub-Signature header is never accepted, and the
// server does not start without a secret.
//
// Reading a body before it can be verified is the one thing an
// unauthenticated client can make the server do, so it is bounded three
// ways: the bytes being read by all requests together are capped
// (MaxReading), charged as they arrive rather than by the Content-Length a
// client claims; each body must keep up a minimum rate (MinBodyRate, after
// BodyGrace) or its connection is closed; and NewHTTPServer's timeouts
// drop connections that never finish their headers or sit idle. Hostile
// connections therefore cost the server a goroutine and a few KiB each, for
// seconds, and a genuine delivery is accepted beside them.
//
// A signature proves who wrote a body, not when it was sent: anyone who
// captured a delivery can send it again under new delivery ids. So a
// delivery whose signed body (its ReplayKey, the verified HMAC) has work
// queued or running, or done within ReplayWindow (10 minutes), is answered
// 202 "replay" and dropped before it costs a job or a GitHub call, and
// counted in catalogbot_webhook_replays_total. Every genuine new event has
// a body of its own (action, head SHA, comment or review id, updated_at), so
// none is taken for a replay; a body whose work failed is forgotten, so
// GitHub's redelivery of it runs again; resync makes jobs without a key.
//
// A verified delivery is still only a hint. The work is level-triggered: the
// processor reads the pull request's current state from GitHub, binds every
// result to the head SHA it checked, and takes authorization only from the
// base commit. That is why a newer job may replace an older one, why a
// refused delivery (503 when the queue is full) loses nothing, and why a
// periodic resync, not webhook delivery, is what guarantees that every open
// pull request is reconciled.
package webhook
