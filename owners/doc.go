// Package owners reads Prow-style OWNERS and OWNERS_ALIASES files and decides
// who may approve a change.
//
// The rules are those of the specification in spec/owners.md: Prow's
// semantics (so a tree that works under Prow means the same here), with the
// deliberate differences winning where they apply. In short:
//
//   - OWNERS data comes only from the trusted base tree handed to Load; an
//     OWNERS edit inside a change grants nothing until it merges.
//   - A file that does not parse is an error finding and nobody can approve
//     the paths it governs: the engine fails closed instead of skipping it.
//   - A renamed file needs the approvers of both its old and its new path;
//     a change with no files, or with as many as GitHub lists (3000), is never
//     approved.
//   - Approvals are bound to the head commit they were given on, unless the
//     policy makes them sticky; the author approves their own files unless the
//     policy says otherwise.
//   - Entries of a catalog.yaml reference list are owned one by one, as the
//     paths the list renders them into.
//
// Load parses a tree into a Repo; Repo.Resolve says who may approve a path and
// why; Repo.Evaluate computes the approval state of a change. ParseCommands
// and ReadEvents turn comments and reviews into approvals.
package owners
