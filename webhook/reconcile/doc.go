// Package reconcile is the GitHub App's reconciler: the Processor that the
// intake's queue (package webhook) runs for each job.
//
//   - A pull request job (reconcile.go) reads the pull request's current
//     state from GitHub, checks its head with the one review core
//     (policy/review), reports the outcome as the catalogbot check run and
//     one status comment (report.go, comment.go), and merges when the
//     outcome allows it, pinned to the SHA it checked (merge.go).
//   - A push job (publish.go) publishes the default branch through the one
//     publish flow (publisher/publish); a push that changes OWNERS files
//     or the policy re-checks the open pull requests (rules.go).
//   - However a pull request job ends, an open pull request says why it is
//     not merged: the reason codes (policy.Code) of the decision, or of the
//     state the job left it in (queued, retrying, ...), lead the text of
//     its catalogbot run and feed webhook.BlockedWaits (report.go,
//     explain). A job that could not say it is not remembered as done, so
//     the next resync comes back.
//   - A merge group job (mergegroup.go) judges the commit a merge queue
//     built (the base's tip with the queued pull requests merged in) on its
//     content with the review core, and reports the catalogbot check run
//     there, which a ruleset that requires it and a merge queue waits for.
//   - A resync job (resync.go), and RunResync on a timer, list every open
//     pull request of every installation, so a lost delivery or a restart
//     loses nothing: webhooks only make the work start sooner.
//   - The proposer (propose.go), RunProposer on a timer and at a registry's
//     push notification (NotifyRegistry), polls the bundle repositories
//     each repository's policy watches and keeps one pull request per
//     package with new releases, made by policy/propose and written
//     through the git data API; each repository's round is made under a
//     lease in the state (turn.go's mechanism), so replicas make it once.
//
// Work a job finds (the pull requests a resync lists, the retry of a check
// that could not judge) is returned in Process's webhook.Result, and the
// queue acts on it, so the App and the queue are built independently of
// each other.
//
// Authorization comes from the base commit only, PR content is read as
// data and never run, and the registry credentials of the service config's
// publish section are used for publishing alone: checking a pull request
// never holds them.
package reconcile
