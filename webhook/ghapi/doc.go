// Package ghapi is the GitHub adapter that both front ends which speak to
// GitHub share, the App (catalogbot serve) and the Action (catalogbot
// check in a workflow):
//
//   - Transport, an http.RoundTripper that retries what is safe to retry,
//     honours GitHub's rate limits and makes conditional requests from an
//     ETag cache;
//   - Apps, the App and installation clients built on go-github with
//     ghinstallation, installation tokens fetched and renewed as needed;
//   - the reads a review needs, every page of each: PRFiles, a pull
//     request's files (ErrTooManyFiles past GitHub's listing limit), and
//     Events, its reviews and comments as owners.Events, each bound to the
//     head commit it was given on, with what deliveries told of edits and
//     pushes (EditLog, HeadLog);
//   - the merge queue: MergeQueueRefusal and RequiresMergeQueue tell a
//     base branch that merges through a queue, and EnqueuePullRequest
//     (GraphQL) queues a pull request pinned to its checked head;
//   - Actions, a workflow step's environment and event (ReadActions), the
//     Action's argument string split into words (SplitWords), and its
//     Report: annotations and the decision on stdout, the job summary and
//     step outputs appended to their step files. What it
//     writes is rendered by the review core; this only puts it where a
//     workflow reads it. ActionsPermissions lists the token permissions
//     the Action needs, held to the requests it makes by a test.
//
// The package knows nothing of the service around it: metrics arrive as
// hooks (Hooks), so that package webhook can import this one and not the
// reverse.
package ghapi
