package ghapi

// Permission is one permission of a GitHub token: a scope as a workflow's
// permissions block spells it, the access, and what it is for (a phrase
// that reads after "for").
type Permission struct {
	Scope, Access, For string
	// Endpoints are the REST paths it opens that catalogbot calls, as
	// GitHub's API description writes them; empty for what only git
	// or another step uses.
	Endpoints []string
}

// ActionsPermissions are all the Action asks of the workflow's token.
// Everything is read: the Action reports through its step's output files,
// never through the API. docs/action.md, action.yml and the example
// workflows are generated or checked against this table, and a test holds
// Actions.Events to exactly these endpoints, so a new call cannot go
// undocumented and a stale one (check suites were read once) cannot
// linger.
var ActionsPermissions = []Permission{
	{Scope: "contents", Access: "read", For: "the checkout of the base and head commits (actions/checkout), which catalogbot reads with git"},
	{Scope: "pull-requests", Access: "read", For: "reading the pull request's reviews, comments and timeline, so that reviews and /approve and /hold comments count, each bound to the head it was given on",
		Endpoints: []string{
			"/repos/{owner}/{repo}/pulls/{pull_number}/reviews",
			"/repos/{owner}/{repo}/issues/{issue_number}/comments",
			"/repos/{owner}/{repo}/issues/{issue_number}/timeline",
		}},
}
