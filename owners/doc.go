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
//     paths the list renders them into. Which files are reference lists is
//     the caller's to say (Policy.ReferenceLists), as the repository policy
//     decides it.
//   - With SourceCIYAML among LoadOptions.Sources (the policy's
//     owners.sources), the reviewers of operators/<package>/ci.yaml, the
//     operator-pipelines convention, approve the package: they count as
//     one more OWNERS file at operators/<package>/ and at <root>/<package>/
//     under every catalog root, read from the same trusted tree. With
//     OWNERS files as a source too, either file's approvers approve, and
//     the walk goes on to the root as it does past any OWNERS file. Only
//     reviewers is read from a ci.yaml, strictly; the rest of the file is
//     the pipeline's.
//   - A catalog package needs the approvers of its home wherever its blobs
//     sit. One owned by its name (PackageTouch.ByName, where directories
//     are named for operators) needs too those of the places the base
//     keeps it, and the root approvers when a directory of another name
//     holds it for the first time or it is new to the repository. A
//     catalog a change adds or removes (Input.Catalogs) needs the root
//     approvers.
//   - Under Policy.RequireAccess only the users the caller found to have
//     write access (Input.WriteAccess) approve.
//
// Load parses a tree into a Repo (OWNERS, OWNERS_ALIASES and ci.yaml files);
// ReadOperators reads the packages' ci.yaml files alone, decoding each once
// for every reader of the file, into an Operators that Load takes back
// (LoadOptions.Operators) when it is of the same operators tree id, so that
// they are read once per tree, not once per check;
// Repo.Resolve says who may approve a path and why; Repo.Evaluate computes
// the approval state of a change. ReadEvents turns comments and reviews
// into approvals.
package owners
