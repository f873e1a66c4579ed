package githubtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The merge queue, as far as a bot meets it: a branch whose ruleset
// requires one lists a merge_queue rule (GET rules/branches/{branch}),
// refuses the REST merge with 405, and takes pull requests through
// GraphQL's enqueuePullRequest, which checks expectedHeadOid against the
// head. The queue merges what it holds when the test says (MergeQueued),
// and a test removes an entry (Dequeue) to deliver pull_request dequeued.
// A bot reads a pull request's entry (node on PullRequest, mergeQueueEntry)
// and takes it out with dequeuePullRequest.

// QueueEntry is a pull request in a branch's merge queue.
type QueueEntry struct {
	ID      string // the entry's GraphQL node id
	Number  int
	HeadSHA string // the head it was queued at
}

// mergeQueueMessage is GitHub's refusal of a REST merge into a branch
// that merges through a queue.
const mergeQueueMessage = "Repository rule violations found\n\nChanges must be made through the merge queue"

// RequireMergeQueue gives branch a ruleset that requires a merge queue.
func (r *Repo) RequireMergeQueue(branch string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.queues == nil {
		r.queues = map[string][]QueueEntry{}
	}
	if _, ok := r.queues[branch]; !ok {
		r.queues[branch] = []QueueEntry{}
		r.rulesetID = r.s.newID()
	}
}

// MergeQueue lists the entries of branch's merge queue, first first.
func (r *Repo) MergeQueue(branch string) []QueueEntry {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return append([]QueueEntry(nil), r.queues[branch]...)
}

// Dequeue removes pull request number from its base branch's queue, as
// GitHub does when the queue's checks fail or someone removes it; the
// test then delivers pull_request dequeued (PayloadArgs.Reason).
func (r *Repo) Dequeue(number int) bool {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	pr := r.prs[number]
	if pr == nil {
		return false
	}
	q := r.queues[pr.baseRef]
	for i, e := range q {
		if e.Number == number {
			r.queues[pr.baseRef] = append(q[:i:i], q[i+1:]...)
			r.leftQueueLocked(pr.baseRef, number)
			return true
		}
	}
	return false
}

// MergeQueued merges every entry of branch's queue, in order, as the queue
// does once its checks pass, and returns the merge commits. An entry whose
// head moved since it was queued is dropped, as GitHub drops it.
func (r *Repo) MergeQueued(branch string) ([]string, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var shas []string
	for _, e := range r.queues[branch] {
		pr := r.prs[e.Number]
		if pr == nil || pr.state != "open" || pr.headSHA != e.HeadSHA {
			continue
		}
		sha, err := pr.mergeLocked("merge", "", "", "github-merge-queue[bot]")
		if err != nil {
			return shas, err
		}
		shas = append(shas, sha)
	}
	r.queues[branch] = []QueueEntry{}
	return shas, nil
}

// queuedLocked reports whether branch merges through a queue.
func (r *Repo) queuedLocked(branch string) bool {
	_, ok := r.queues[branch]
	return ok
}

// rulesForBranch answers GET /repos/{owner}/{repo}/rules/branches/{branch}.
func (s *Server) rulesForBranch(w http.ResponseWriter, r *http.Request, repo *Repo) {
	rules := []obj{}
	if rule := repo.requiredChecksRule(r.PathValue("branch")); rule != nil {
		rules = append(rules, rule)
	}
	if repo.queuedLocked(r.PathValue("branch")) {
		rules = append(rules, obj{
			"type":                "merge_queue",
			"ruleset_source_type": "Repository",
			"ruleset_source":      repo.FullName(),
			"ruleset_id":          repo.rulesetID,
			"parameters": obj{
				"check_response_timeout_minutes":    60,
				"grouping_strategy":                 "ALLGREEN",
				"max_entries_to_build":              5,
				"max_entries_to_merge":              5,
				"merge_method":                      "MERGE",
				"min_entries_to_merge":              1,
				"min_entries_to_merge_wait_minutes": 5,
			},
		})
	}
	writeJSON(w, http.StatusOK, rules)
}

// graphqlRequest is a GraphQL POST body.
type graphqlRequest struct {
	Query     string                     `json:"query"`
	Variables map[string]json.RawMessage `json:"variables"`
}

// graphqlError is one entry of a GraphQL response's errors.
type graphqlError struct {
	Type    string   `json:"type,omitempty"`
	Path    []string `json:"path,omitempty"`
	Message string   `json:"message"`
}

// serveGraphQL answers POST /graphql, the GraphQL operations the fake
// knows: the enqueuePullRequest and dequeuePullRequest mutations and the
// query of a pull request's mergeQueueEntry. GitHub answers GraphQL with
// 200 and the refusal in errors, 401 without a valid token.
func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) int {
	reply := func(status int, v any) int {
		writeJSON(w, status, v)
		return status
	}
	if r.Method != http.MethodPost {
		return reply(http.StatusNotFound, obj{"message": "Not Found"})
	}
	var req graphqlRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(body)).Decode(&req)
	}
	if err != nil || req.Query == "" {
		return reply(http.StatusBadRequest, obj{"message": "Problems parsing JSON"})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.tokenInstallation(bearer(r))
	if in == nil {
		return reply(http.StatusUnauthorized, obj{"message": "Bad credentials"})
	}
	switch {
	case strings.Contains(req.Query, "dequeuePullRequest"):
		return s.dequeueGraphQL(req, in, reply)
	case strings.Contains(req.Query, "enqueuePullRequest"):
	case strings.Contains(req.Query, "mergeQueueEntry"):
		return s.entryGraphQL(req, in, reply)
	default:
		return reply(http.StatusOK, obj{"errors": []graphqlError{{Message: "the fake GitHub knows no GraphQL operation but enqueuePullRequest, dequeuePullRequest and a pull request's mergeQueueEntry"}}})
	}
	fail := func(typ, msg string) int {
		return reply(http.StatusOK, obj{"data": obj{"enqueuePullRequest": nil},
			"errors": []graphqlError{{Type: typ, Path: []string{"enqueuePullRequest"}, Message: msg}}})
	}
	var id, head string
	if json.Unmarshal(req.Variables["pullRequestId"], &id) != nil || id == "" {
		return fail("INVALID", "Variable $pullRequestId of type ID! was provided invalid value")
	}
	_ = json.Unmarshal(req.Variables["expectedHeadOid"], &head)
	repo, pr := s.pullByNodeID(id)
	if pr == nil || s.installationOf(repo.Owner) != in {
		return fail("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
	}
	switch {
	case !repo.queuedLocked(pr.baseRef):
		return fail("UNPROCESSABLE", "Pull request is not in a mergeable state: the base branch does not require a merge queue")
	case pr.state != "open":
		return fail("UNPROCESSABLE", "Pull request is closed")
	case head != "" && head != pr.headSHA:
		return fail("UNPROCESSABLE", "Expected head sha did not match the pull request's head")
	}
	if name := repo.unmetLocked(pr.baseRef, pr.headSHA); name != "" {
		return fail("UNPROCESSABLE", fmt.Sprintf("Pull request is not in a mergeable state: required status check %q has not succeeded", name))
	}
	q := repo.queues[pr.baseRef]
	for i, e := range q {
		if e.Number == pr.Number {
			return reply(http.StatusOK, obj{"data": obj{"enqueuePullRequest": obj{"mergeQueueEntry": obj{"id": e.ID, "position": i + 1, "state": "QUEUED"}}}})
		}
	}
	e := QueueEntry{ID: nodeID("MQE_", s.newID()), Number: pr.Number, HeadSHA: pr.headSHA}
	repo.queues[pr.baseRef] = append(q, e)
	pr.updated = s.now()
	return reply(http.StatusOK, obj{"data": obj{"enqueuePullRequest": obj{"mergeQueueEntry": obj{"id": e.ID, "position": len(q) + 1, "state": "QUEUED"}}}})
}

// entryGraphQL answers the query of a pull request's mergeQueueEntry
// (node(id) on PullRequest): the entry, or null when no queue holds it.
func (s *Server) entryGraphQL(req graphqlRequest, in *installation, reply func(int, any) int) int {
	var id string
	_ = json.Unmarshal(req.Variables["id"], &id)
	repo, pr := s.pullByNodeID(id)
	if pr == nil || s.installationOf(repo.Owner) != in {
		return reply(http.StatusOK, obj{"data": obj{"node": nil},
			"errors": []graphqlError{{Type: "NOT_FOUND", Path: []string{"node"}, Message: fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id)}}})
	}
	var entry any
	for i, e := range repo.queues[pr.baseRef] {
		if e.Number == pr.Number {
			entry = obj{"id": e.ID, "position": i + 1, "state": "QUEUED"}
		}
	}
	return reply(http.StatusOK, obj{"data": obj{"node": obj{"mergeQueueEntry": entry}}})
}

// dequeueGraphQL answers the dequeuePullRequest mutation: the pull request
// leaves its base branch's queue, which GitHub refuses for one no queue
// holds. The test delivers the pull_request dequeued that follows.
func (s *Server) dequeueGraphQL(req graphqlRequest, in *installation, reply func(int, any) int) int {
	fail := func(typ, msg string) int {
		return reply(http.StatusOK, obj{"data": obj{"dequeuePullRequest": nil},
			"errors": []graphqlError{{Type: typ, Path: []string{"dequeuePullRequest"}, Message: msg}}})
	}
	var id string
	_ = json.Unmarshal(req.Variables["id"], &id)
	repo, pr := s.pullByNodeID(id)
	if pr == nil || s.installationOf(repo.Owner) != in {
		return fail("NOT_FOUND", fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
	}
	q := repo.queues[pr.baseRef]
	for i, e := range q {
		if e.Number == pr.Number {
			repo.queues[pr.baseRef] = append(q[:i:i], q[i+1:]...)
			pr.updated = s.now()
			repo.leftQueueLocked(pr.baseRef, pr.Number)
			return reply(http.StatusOK, obj{"data": obj{"dequeuePullRequest": obj{"mergeQueueEntry": obj{"id": e.ID, "position": i + 1, "state": "QUEUED"}}}})
		}
	}
	return fail("UNPROCESSABLE", "Pull request is not in the merge queue")
}

// pullByNodeID finds the pull request with GraphQL node id id.
func (s *Server) pullByNodeID(id string) (*Repo, *PR) {
	for _, r := range s.repoOrder {
		for _, pr := range r.prs {
			if nodeID("PR_", pr.ID) == id {
				return r, pr
			}
		}
	}
	return nil, nil
}
