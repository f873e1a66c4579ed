package githubtest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// This file builds the JSON objects the fake returns, with every field GitHub's description
// requires, from the fake's state. The server's mutex is held by callers.

type obj = map[string]any

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func nodeID(kind string, id int64) string {
	return base64.RawStdEncoding.EncodeToString(fmt.Appendf(nil, "0:%s%d", kind, id))
}

func (s *Server) userJSON(login string) obj {
	id := s.userID(login)
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	u := s.URL + "/users/" + login
	return obj{
		"login": login, "id": id, "node_id": nodeID("U_", id),
		"avatar_url":  fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", id),
		"gravatar_id": "", "url": u, "html_url": s.URL + "/" + login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events", "type": typ, "site_admin": false,
		"user_view_type": "public",
	}
}

// appPermissions are the permissions the App asks for.
func appPermissions() obj {
	return obj{"checks": "write", "contents": "write", "pull_requests": "write", "issues": "write", "merge_queues": "read", "metadata": "read", "statuses": "write"}
}

func appEvents() []string {
	return []string{"check_run", "check_suite", "issue_comment", "merge_group", "pull_request", "pull_request_review", "push"}
}

func (s *Server) appJSON() obj {
	created := s.start.UTC()
	return obj{
		"id": s.appID, "slug": s.AppSlug(), "node_id": nodeID("A_", s.appID), "client_id": fmt.Sprintf("Iv1.%016x", s.appID),
		"owner": s.userJSON("catalogbot-org"), "name": "catalogbot", "description": "OLM catalog GitOps bot",
		"external_url": s.URL + "/apps/" + s.AppSlug(), "html_url": s.URL + "/apps/" + s.AppSlug(),
		"created_at": ts(created), "updated_at": ts(created), "permissions": appPermissions(), "events": appEvents(),
	}
}

// appOf is the id and slug of the App that made something: app, or the
// catalogbot App when app is nil.
func (s *Server) appOf(app *otherApp) (int64, string) {
	if app == nil {
		return s.appID, s.AppSlug()
	}
	return app.id, app.slug
}

// otherAppJSON describes app as GitHub describes an App (an
// "integration"); nil is the catalogbot App.
func (s *Server) otherAppJSON(app *otherApp) obj {
	if app == nil {
		return s.appJSON()
	}
	created := s.start.UTC()
	return obj{
		"id": app.id, "slug": app.slug, "node_id": nodeID("A_", app.id), "client_id": fmt.Sprintf("Iv1.%016x", app.id),
		"owner": s.userJSON(app.slug + "-org"), "name": app.slug, "description": "",
		"external_url": s.URL + "/apps/" + app.slug, "html_url": s.URL + "/apps/" + app.slug,
		"created_at": ts(created), "updated_at": ts(created), "permissions": obj{"checks": "write"}, "events": []string{},
	}
}

func (s *Server) installationJSON(in *installation) obj {
	// GET /app/installations describes account as allOf [simple-user, enterprise], so the account
	// carries the enterprise's required fields too (name, slug, created_at, updated_at).
	account := s.userJSON(in.account)
	account["name"], account["slug"] = in.account, strings.ToLower(in.account)
	account["created_at"], account["updated_at"] = ts(in.created), ts(in.created)
	return obj{
		"id": in.id, "app_id": s.appID, "app_slug": s.AppSlug(), "target_id": s.userID(in.account),
		"target_type": "Organization", "single_file_name": nil, "repository_selection": "selected",
		"access_tokens_url": fmt.Sprintf("%s/app/installations/%d/access_tokens", s.URL, in.id),
		"repositories_url":  s.URL + "/installation/repositories",
		"html_url":          fmt.Sprintf("%s/organizations/%s/settings/installations/%d", s.URL, in.account, in.id),
		"events":            appEvents(), "account": account, "permissions": appPermissions(),
		"created_at": ts(in.created), "updated_at": ts(in.created), "suspended_by": nil, "suspended_at": nil,
		"has_multiple_single_files": false, "single_file_paths": []string{},
	}
}

// repoJSON satisfies full-repository, which is a superset of repository and minimal-repository.
func (s *Server) repoJSON(r *Repo) obj {
	api := s.URL + "/repos/" + r.FullName()
	o := obj{
		"id": r.ID, "node_id": nodeID("R_", r.ID), "name": r.Name, "full_name": r.FullName(),
		"owner": s.userJSON(r.Owner), "private": true, "html_url": s.URL + "/" + r.FullName(),
		"description": nil, "fork": false, "url": api, "homepage": nil, "language": nil,
		"clone_url": r.CloneURL(), "git_url": "git://" + strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://") + "/" + r.FullName() + ".git",
		"ssh_url": "git@github.com:" + r.FullName() + ".git", "svn_url": s.URL + "/" + r.FullName(), "mirror_url": nil,
		"default_branch": r.defaultBranch, "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0,
		"watchers_count": 0, "open_issues": r.openPRs(), "open_issues_count": r.openPRs(), "size": 1,
		"has_issues": true, "has_projects": false, "has_wiki": false, "has_pages": false, "has_downloads": true,
		"has_discussions": false, "archived": false, "disabled": false, "visibility": "private", "license": nil,
		"pushed_at": ts(r.pushed), "created_at": ts(r.created), "updated_at": ts(r.pushed),
		"network_count": 0, "subscribers_count": 0, "topics": []string{}, "is_template": false,
		"allow_merge_commit": true, "allow_squash_merge": true, "allow_rebase_merge": true,
		"permissions": obj{"admin": false, "maintain": false, "push": true, "triage": true, "pull": true},
	}
	for k, suffix := range map[string]string{
		"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}", "blobs_url": "/git/blobs{/sha}",
		"branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}",
		"comments_url": "/comments{/number}", "commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}",
		"contents_url": "/contents/{+path}", "contributors_url": "/contributors", "deployments_url": "/deployments",
		"downloads_url": "/downloads", "events_url": "/events", "forks_url": "/forks", "git_commits_url": "/git/commits{/sha}",
		"git_refs_url": "/git/refs{/sha}", "git_tags_url": "/git/tags{/sha}", "hooks_url": "/hooks",
		"issue_comment_url": "/issues/comments{/number}", "issue_events_url": "/issues/events{/number}",
		"issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}",
		"languages_url": "/languages", "merges_url": "/merges", "milestones_url": "/milestones{/number}",
		"notifications_url": "/notifications{?since,all,participating}", "pulls_url": "/pulls{/number}",
		"releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags",
		"teams_url": "/teams", "trees_url": "/git/trees{/sha}",
	} {
		o[k] = api + suffix
	}
	return o
}

func (r *Repo) openPRs() int {
	n := 0
	for _, pr := range r.prs {
		if pr.state == "open" {
			n++
		}
	}
	return n
}

// association is the author_association GitHub gives login on r.
func (r *Repo) association(login string) string {
	if strings.EqualFold(login, r.Owner) {
		return "OWNER"
	}
	switch r.perms[strings.ToLower(login)] {
	case "admin", "maintain", "write", "triage":
		return "COLLABORATOR"
	}
	for _, pr := range r.prs {
		if pr.merged && strings.EqualFold(pr.author, login) {
			return "CONTRIBUTOR"
		}
	}
	return "NONE"
}

func (s *Server) labelJSON(r *Repo, name string) obj {
	id := s.userID("label:" + r.FullName() + ":" + name)
	return obj{
		"id": id, "node_id": nodeID("LA_", id), "url": s.URL + "/repos/" + r.FullName() + "/labels/" + name,
		"name": name, "description": "", "color": "ededed", "default": false,
	}
}

func (s *Server) branchJSON(r *Repo, ref, sha string) obj {
	return obj{"label": r.Owner + ":" + ref, "ref": ref, "sha": sha, "user": s.userJSON(r.Owner), "repo": s.repoJSON(r)}
}

// pullJSON is a pull-request (full) or pull-request-simple (list) object.
func (s *Server) pullJSON(pr *PR, full bool) obj {
	r := pr.r
	api := s.URL + "/repos/" + r.FullName()
	self := fmt.Sprintf("%s/pulls/%d", api, pr.Number)
	html := fmt.Sprintf("%s/%s/pull/%d", s.URL, r.FullName(), pr.Number)
	issue := fmt.Sprintf("%s/issues/%d", api, pr.Number)
	labels := []obj{}
	for _, l := range pr.labels {
		labels = append(labels, s.labelJSON(r, l))
	}
	baseSHA, _ := r.tip(pr.baseRef)
	var mergeCommit any
	if pr.mergeCommitSHA != "" {
		mergeCommit = pr.mergeCommitSHA
	}
	o := obj{
		"url": self, "id": pr.ID, "node_id": nodeID("PR_", pr.ID), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue,
		"commits_url": self + "/commits", "review_comments_url": self + "/comments",
		"review_comment_url": api + "/pulls/comments{/number}", "comments_url": issue + "/comments",
		"statuses_url": api + "/statuses/" + pr.headSHA, "number": pr.Number, "state": pr.state,
		"locked": false, "title": pr.title, "user": s.userJSON(pr.author), "body": nilIfEmpty(pr.body),
		"labels": labels, "milestone": nil, "active_lock_reason": nil,
		"created_at": ts(pr.created), "updated_at": ts(pr.updated), "closed_at": ts(pr.closedAt),
		"merged_at": ts(pr.mergedAt), "merge_commit_sha": mergeCommit, "assignee": nil, "assignees": []obj{},
		"requested_reviewers": []obj{}, "requested_teams": []obj{}, "draft": pr.draft,
		"head": s.branchJSON(r, pr.headRef, pr.headSHA), "base": s.branchJSON(r, pr.baseRef, baseSHA.String()),
		"_links": obj{
			"self": obj{"href": self}, "html": obj{"href": html}, "issue": obj{"href": issue},
			"comments": obj{"href": issue + "/comments"}, "review_comments": obj{"href": self + "/comments"},
			"review_comment": obj{"href": api + "/pulls/comments{/number}"}, "commits": obj{"href": self + "/commits"},
			"statuses": obj{"href": api + "/statuses/" + pr.headSHA},
		},
		"author_association": r.association(pr.author), "auto_merge": nil,
	}
	if !full {
		return o
	}
	adds, dels, files := 0, 0, 0
	if _, changes, err := pr.changesLocked(); err == nil {
		files = len(changes)
		for _, c := range changes {
			adds += c.Additions
			dels += c.Deletions
		}
	}
	comments := 0
	for _, c := range r.comments {
		if c.number == pr.Number {
			comments++
		}
	}
	var mergeable any
	state := "clean"
	switch {
	case pr.merged || pr.state == "closed":
		mergeable, state = nil, "unknown"
	case pr.draft:
		mergeable, state = pr.mergeableLocked(), "draft"
	case !pr.mergeableLocked():
		mergeable, state = false, "dirty"
	default:
		mergeable = true
	}
	var mergedBy any
	if pr.mergedBy != "" {
		mergedBy = s.userJSON(pr.mergedBy)
	}
	o["merged"] = pr.merged
	o["mergeable"] = mergeable
	o["rebaseable"] = mergeable
	o["mergeable_state"] = state
	o["merged_by"] = mergedBy
	o["comments"] = comments
	o["review_comments"] = 0
	o["maintainer_can_modify"] = false
	o["commits"] = pr.commitCountLocked()
	o["additions"] = adds
	o["deletions"] = dels
	o["changed_files"] = files
	return o
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// minimalPullJSON is a pull-request-minimal, as embedded in check runs and suites.
func (s *Server) minimalPullJSON(pr *PR) obj {
	r := pr.r
	repo := obj{"id": r.ID, "url": s.URL + "/repos/" + r.FullName(), "name": r.Name}
	baseSHA, _ := r.tip(pr.baseRef)
	return obj{
		"id": pr.ID, "number": pr.Number, "url": fmt.Sprintf("%s/repos/%s/pulls/%d", s.URL, r.FullName(), pr.Number),
		"head": obj{"ref": pr.headRef, "sha": pr.headSHA, "repo": repo},
		"base": obj{"ref": pr.baseRef, "sha": baseSHA.String(), "repo": repo},
	}
}

// openPullsWithHead are the minimal objects of open PRs whose head is sha, as GitHub lists them in
// check runs and suites.
func (s *Server) openPullsWithHead(r *Repo, sha string) []obj {
	out := []obj{}
	for _, pr := range r.sortedPRs() {
		if pr.state == "open" && pr.headSHA == sha {
			out = append(out, s.minimalPullJSON(pr))
		}
	}
	return out
}

func (s *Server) checkRunJSON(r *Repo, cr *checkRun) obj {
	api := s.URL + "/repos/" + r.FullName()
	return obj{
		"id": cr.ID, "node_id": nodeID("CR_", cr.ID), "head_sha": cr.HeadSHA, "name": cr.Name,
		"external_id": cr.ExternalID, "url": fmt.Sprintf("%s/check-runs/%d", api, cr.ID),
		"html_url": fmt.Sprintf("%s/%s/runs/%d", s.URL, r.FullName(), cr.ID), "details_url": nilIfEmpty(cr.DetailsURL),
		"status": cr.Status, "conclusion": nilIfEmpty(cr.Conclusion),
		"started_at": ts(cr.StartedAt), "completed_at": ts(cr.CompletedAt),
		"output": obj{
			"title": nilIfEmpty(cr.Title), "summary": nilIfEmpty(cr.Summary), "text": nilIfEmpty(cr.Text),
			"annotations_count": len(cr.Annotations), "annotations_url": fmt.Sprintf("%s/check-runs/%d/annotations", api, cr.ID),
		},
		"check_suite": obj{"id": cr.suiteID}, "app": s.otherAppJSON(cr.app), "pull_requests": s.openPullsWithHead(r, cr.HeadSHA),
	}
}

// suiteState is a suite's status and conclusion, from its runs.
func (r *Repo) suiteState(cs *checkSuite) (status string, conclusion any, runs int) {
	status = "queued"
	conclusions := map[string]bool{}
	completed := 0
	for _, cr := range r.checkRuns {
		if cr.suiteID != cs.ID {
			continue
		}
		runs++
		if cr.Status == "completed" {
			completed++
			conclusions[cr.Conclusion] = true
		}
	}
	switch {
	case runs == 0:
		return "queued", nil, 0
	case completed < runs:
		return "in_progress", nil, runs
	}
	for _, c := range []string{"action_required", "cancelled", "timed_out", "failure", "neutral", "skipped", "success"} {
		if conclusions[c] {
			return "completed", c, runs
		}
	}
	return "completed", "neutral", runs
}

func (s *Server) checkSuiteJSON(r *Repo, cs *checkSuite) obj {
	api := s.URL + "/repos/" + r.FullName()
	status, conclusion, runs := r.suiteState(cs)
	var head any
	if c, err := r.resolve(cs.HeadSHA); err == nil {
		head = obj{
			"id": c.Hash.String(), "tree_id": c.TreeHash.String(), "message": c.Message, "timestamp": ts(c.Committer.When),
			"author":    obj{"name": c.Author.Name, "email": c.Author.Email},
			"committer": obj{"name": c.Committer.Name, "email": c.Committer.Email},
		}
	}
	before := cs.before
	if before == "" || before == "0000000000000000000000000000000000000000" {
		before = "0000000000000000000000000000000000000000"
	}
	return obj{
		"id": cs.ID, "node_id": nodeID("CS_", cs.ID), "head_branch": cs.Branch, "head_sha": cs.HeadSHA,
		"status": status, "conclusion": conclusion, "url": fmt.Sprintf("%s/check-suites/%d", api, cs.ID),
		"before": before, "after": cs.HeadSHA, "pull_requests": s.openPullsWithHead(r, cs.HeadSHA),
		"app": s.otherAppJSON(cs.app), "repository": s.repoJSON(r), "created_at": ts(cs.CreatedAt), "updated_at": ts(cs.CreatedAt),
		"head_commit": head, "latest_check_runs_count": runs, "check_runs_url": fmt.Sprintf("%s/check-suites/%d/check-runs", api, cs.ID),
		"rerequestable": true, "runs_rerequestable": true,
	}
}

func (s *Server) commentJSON(r *Repo, c *issueComment) obj {
	api := s.URL + "/repos/" + r.FullName()
	return obj{
		"id": c.ID, "node_id": nodeID("IC_", c.ID), "url": fmt.Sprintf("%s/issues/comments/%d", api, c.ID),
		"html_url":  fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", s.URL, r.FullName(), c.number, c.ID),
		"issue_url": fmt.Sprintf("%s/issues/%d", api, c.number), "body": c.Body, "user": s.userJSON(c.User),
		"created_at": ts(c.CreatedAt), "updated_at": ts(c.UpdatedAt), "author_association": r.association(c.User),
	}
}

// timelineJSON is a timeline event as GitHub's timeline lists it: a
// committed event names the commit with its git dates (its maker's
// choice), a head_ref_force_pushed event the new head with GitHub's time.
func (s *Server) timelineJSON(r *Repo, pr *PR, ev timelineEvent) obj {
	api := s.URL + "/repos/" + r.FullName()
	if ev.event == "head_ref_force_pushed" {
		return obj{
			"id": ev.id, "node_id": nodeID("HRFPE_", ev.id), "url": fmt.Sprintf("%s/issues/events/%d", api, ev.id),
			"actor": s.userJSON(ev.actor), "event": ev.event, "commit_id": ev.sha,
			"commit_url": api + "/commits/" + ev.sha, "created_at": ts(ev.at), "performed_via_github_app": nil,
		}
	}
	c, err := object.GetCommit(r.st, plumbing.NewHash(ev.sha))
	if err != nil {
		return obj{"event": ev.event, "sha": ev.sha}
	}
	person := func(sig object.Signature) obj {
		return obj{"name": sig.Name, "email": sig.Email, "date": sig.When.UTC().Format(time.RFC3339)}
	}
	parents := []obj{}
	for _, p := range c.ParentHashes {
		parents = append(parents, obj{"sha": p.String(), "url": api + "/git/commits/" + p.String(), "html_url": s.URL + "/" + r.FullName() + "/commit/" + p.String()})
	}
	return obj{
		"event": ev.event, "sha": ev.sha, "node_id": nodeID("C_", ev.id), "url": api + "/git/commits/" + ev.sha,
		"html_url": s.URL + "/" + r.FullName() + "/commit/" + ev.sha,
		"author":   person(c.Author), "committer": person(c.Committer), "message": c.Message,
		"tree":         obj{"sha": c.TreeHash.String(), "url": api + "/git/trees/" + c.TreeHash.String()},
		"parents":      parents,
		"verification": obj{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	}
}

// canWrite says whether login may push to r (and so edit anyone's
// comments on it).
func (r *Repo) canWrite(login string) bool {
	if strings.EqualFold(login, r.Owner) {
		return true
	}
	switch r.perms[strings.ToLower(login)] {
	case "admin", "maintain", "write":
		return true
	}
	return false
}

func (s *Server) reviewJSON(r *Repo, rv *review) obj {
	pull := fmt.Sprintf("%s/repos/%s/pulls/%d", s.URL, r.FullName(), rv.number)
	html := fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", s.URL, r.FullName(), rv.number, rv.id)
	return obj{
		"id": rv.id, "node_id": nodeID("PRR_", rv.id), "user": s.userJSON(rv.user), "body": rv.body,
		"state": rv.state, "html_url": html, "pull_request_url": pull, "submitted_at": ts(rv.submitted),
		"commit_id": rv.commitID, "author_association": r.association(rv.user),
		"_links": obj{"html": obj{"href": html}, "pull_request": obj{"href": pull}},
	}
}

func (s *Server) statusJSON(r *Repo, st *commitStatus) obj {
	return obj{
		"url": fmt.Sprintf("%s/repos/%s/statuses/%s", s.URL, r.FullName(), st.SHA), "avatar_url": nil,
		"id": st.id, "node_id": nodeID("SC_", st.id), "state": st.State, "description": nilIfEmpty(st.Description),
		"target_url": nilIfEmpty(st.TargetURL), "context": st.Context, "created_at": ts(st.created),
		"updated_at": ts(st.created), "creator": s.userJSON(st.creator),
	}
}
