package ghapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v60/github"
)

// A branch whose ruleset requires a merge queue refuses the REST merge
// with 405: a pull request gets there through the queue alone, which only
// GitHub's GraphQL API (enqueuePullRequest) joins. These are the calls
// that find such a branch, queue a pull request on it, and take one out
// again (dequeuePullRequest) when it is held after it was queued.

// MergeQueueRefusal reports whether err is GitHub refusing a REST merge
// because the base branch merges through a merge queue: a 405 whose
// message says so. A 405 for anything else (not mergeable, a draft) is
// not one; RequiresMergeQueue tells for sure.
func MergeQueueRefusal(err error) bool {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || er.Response.StatusCode != http.StatusMethodNotAllowed {
		return false
	}
	return strings.Contains(strings.ToLower(er.Message), "merge queue")
}

// RequiresMergeQueue reports whether the rules that apply to branch of
// owner/repo include a merge_queue rule (GET
// /repos/{owner}/{repo}/rules/branches/{branch}). go-github's own call
// cannot decode that rule's type, so the rules are read by type alone.
func RequiresMergeQueue(ctx context.Context, gh *github.Client, owner, repo, branch string) (bool, error) {
	u := fmt.Sprintf("repos/%s/%s/rules/branches/%s", url.PathEscape(owner), url.PathEscape(repo), url.PathEscape(branch))
	opts := &github.ListOptions{PerPage: 100}
	for {
		req, err := gh.NewRequest(http.MethodGet, fmt.Sprintf("%s?per_page=%d&page=%d", u, opts.PerPage, max(opts.Page, 1)), nil)
		if err != nil {
			return false, err
		}
		var rules []struct {
			Type string `json:"type"`
		}
		resp, err := gh.Do(ctx, req, &rules)
		if err != nil {
			return false, fmt.Errorf("read the rules of %s/%s branch %s: %w", owner, repo, branch, err)
		}
		for _, r := range rules {
			if r.Type == "merge_queue" {
				return true, nil
			}
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
}

// GraphQLURL is the GraphQL endpoint beside the REST base URL rest:
// https://api.github.com/graphql for GitHub.com, and /api/graphql for a
// GitHub Enterprise Server whose REST API is under /api/v3/.
func GraphQLURL(rest *url.URL) *url.URL {
	u := *rest
	if p, ok := strings.CutSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v3"); ok {
		u.Path = p + "/api/graphql"
	} else {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/graphql"
	}
	return &u
}

// ErrQueueHeadMoved is a pull request not queued because its head is no
// longer the commit that was checked (enqueuePullRequest's
// expectedHeadOid did not match).
var ErrQueueHeadMoved = errors.New("the pull request head is not the checked commit")

// ErrAlreadyQueued is a pull request not queued because the queue holds
// it already: a reconcile after the one that queued it asks again.
var ErrAlreadyQueued = errors.New("the pull request is already in the merge queue")

// QueueEntry is a pull request's place in its base branch's merge queue.
type QueueEntry struct {
	ID       string
	Position int
	State    string // QUEUED, AWAITING_CHECKS, MERGEABLE, UNMERGEABLE, LOCKED
}

const enqueueMutation = `mutation($pullRequestId: ID!, $expectedHeadOid: GitObjectID!) {
  enqueuePullRequest(input: {pullRequestId: $pullRequestId, expectedHeadOid: $expectedHeadOid}) {
    mergeQueueEntry { id position state }
  }
}`

// EnqueuePullRequest adds the pull request with GraphQL node id
// pullRequestID to its base branch's merge queue, pinned to headSHA: GitHub
// refuses it, and the error is ErrQueueHeadMoved, when the head moved since
// the check.
func EnqueuePullRequest(ctx context.Context, gh *github.Client, pullRequestID, headSHA string) (*QueueEntry, error) {
	body := map[string]any{
		"query":     enqueueMutation,
		"variables": map[string]string{"pullRequestId": pullRequestID, "expectedHeadOid": headSHA},
	}
	req, err := gh.NewRequest(http.MethodPost, GraphQLURL(gh.BaseURL).String(), body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data struct {
			EnqueuePullRequest *struct {
				MergeQueueEntry *QueueEntry `json:"mergeQueueEntry"`
			} `json:"enqueuePullRequest"`
		} `json:"data"`
		Errors []struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := gh.Do(ctx, req, &out); err != nil {
		return nil, fmt.Errorf("enqueue pull request %s: %w", pullRequestID, err)
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		// GitHub says the expected head did not match in words only;
		// the checked head is named in none of the other refusals.
		msg := strings.ToLower(e.Message)
		switch {
		case strings.Contains(msg, "expected head") || strings.Contains(msg, "expectedheadoid") || strings.Contains(msg, "head sha"):
			return nil, fmt.Errorf("enqueue pull request %s at %s: %s: %w", pullRequestID, headSHA, e.Message, ErrQueueHeadMoved)
		case strings.Contains(msg, "already") && strings.Contains(msg, "queue"):
			return nil, fmt.Errorf("enqueue pull request %s at %s: %s: %w", pullRequestID, headSHA, e.Message, ErrAlreadyQueued)
		}
		return nil, fmt.Errorf("enqueue pull request %s at %s: %s (%s)", pullRequestID, headSHA, e.Message, e.Type)
	}
	if out.Data.EnqueuePullRequest == nil || out.Data.EnqueuePullRequest.MergeQueueEntry == nil {
		return nil, fmt.Errorf("enqueue pull request %s: GitHub returned no merge queue entry", pullRequestID)
	}
	return out.Data.EnqueuePullRequest.MergeQueueEntry, nil
}

// graphQLError is one entry of a GraphQL answer's errors.
type graphQLError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// graphQL sends query with vars and decodes the answer's data into data;
// GitHub answers a refusal with 200 and errors, which come back as they
// are.
func graphQL(ctx context.Context, gh *github.Client, query string, vars map[string]string, data any) ([]graphQLError, error) {
	req, err := gh.NewRequest(http.MethodPost, GraphQLURL(gh.BaseURL).String(), map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []graphQLError  `json:"errors"`
	}
	if _, err := gh.Do(ctx, req, &out); err != nil {
		return nil, err
	}
	if len(out.Data) > 0 && string(out.Data) != "null" {
		if err := json.Unmarshal(out.Data, data); err != nil {
			return out.Errors, fmt.Errorf("decode GitHub's GraphQL answer: %w", err)
		}
	}
	return out.Errors, nil
}

const entryQuery = `query($id: ID!) {
  node(id: $id) {
    ... on PullRequest { mergeQueueEntry { id position state } }
  }
}`

// MergeQueueEntryOf is the merge queue entry of the pull request with
// GraphQL node id pullRequestID, nil when no queue holds it.
func MergeQueueEntryOf(ctx context.Context, gh *github.Client, pullRequestID string) (*QueueEntry, error) {
	var data struct {
		Node *struct {
			MergeQueueEntry *QueueEntry `json:"mergeQueueEntry"`
		} `json:"node"`
	}
	errs, err := graphQL(ctx, gh, entryQuery, map[string]string{"id": pullRequestID}, &data)
	if err == nil && len(errs) > 0 {
		err = fmt.Errorf("%s (%s)", errs[0].Message, errs[0].Type)
	}
	if err != nil {
		return nil, fmt.Errorf("read the merge queue entry of pull request %s: %w", pullRequestID, err)
	}
	if data.Node == nil {
		return nil, nil
	}
	return data.Node.MergeQueueEntry, nil
}

const dequeueMutation = `mutation($id: ID!) {
  dequeuePullRequest(input: {id: $id}) {
    mergeQueueEntry { id position state }
  }
}`

// DequeuePullRequest takes the pull request with GraphQL node id
// pullRequestID out of its base branch's merge queue. GitHub refuses it
// for a pull request no queue holds, so callers ask MergeQueueEntryOf
// first.
func DequeuePullRequest(ctx context.Context, gh *github.Client, pullRequestID string) error {
	var data struct {
		DequeuePullRequest *struct {
			MergeQueueEntry *QueueEntry `json:"mergeQueueEntry"`
		} `json:"dequeuePullRequest"`
	}
	errs, err := graphQL(ctx, gh, dequeueMutation, map[string]string{"id": pullRequestID}, &data)
	if err == nil && len(errs) > 0 {
		err = fmt.Errorf("%s (%s)", errs[0].Message, errs[0].Type)
	}
	if err != nil {
		return fmt.Errorf("dequeue pull request %s: %w", pullRequestID, err)
	}
	return nil
}
