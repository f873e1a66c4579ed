package webhook

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/webhook/internal/jsonscan"
)

// Kinds of work.
const (
	KindPR     = "pr"     // reconcile one pull request at its current head
	KindPush   = "push"   // a push; the processor publishes when it is to the default branch
	KindResync = "resync" // list the installation's open pull requests and reconcile what changed
	// KindMergeGroup judges a merge queue's group, keyed by the number of
	// the pull request its head ref names (gh-readonly-queue/<base>/pr-N-
	// <sha>): the queue holds a pull request once, so at most one group at
	// a time ends with it, and a newer group of the same number replaces
	// the older, which GitHub destroyed to make it.
	KindMergeGroup = "merge_group"
)

// Key identifies a unit of work. Work for a key runs one at a time, and a
// newer job replaces the queued (not yet running) older job of the same key.
// That is safe because the processor is level-triggered: it reads the
// current state from GitHub, so the newest job for a key does all that the
// older ones would have done.
type Key struct {
	Repo string // "owner/name" lower-cased; "" for installation-wide resync
	PR   int    // 0 unless KindPR or KindMergeGroup
	Kind string
}

func (k Key) String() string {
	switch {
	case k.Kind == KindPR:
		return fmt.Sprintf("%s#%d", k.Repo, k.PR)
	case k.Kind == KindMergeGroup:
		return fmt.Sprintf("%s:%s#%d", k.Kind, k.Repo, k.PR)
	case k.Repo == "":
		return k.Kind
	}
	return k.Kind + ":" + k.Repo
}

// Job is one unit of work made from a verified delivery (or by resync).
type Job struct {
	Key          Key
	Event        string // X-GitHub-Event
	Action       string // payload "action", "" if none
	Delivery     string // X-GitHub-Delivery
	Installation int64  // payload installation.id, 0 if none
	Payload      []byte // the verified raw body
	Received     time.Time
	// NotBefore, when after now, holds the job back until then: a pull
	// request whose check could not judge is tried again later. A job
	// for the same key that is due at once replaces it.
	NotBefore time.Time
	// Replay identifies the signed body for the queue's replay check;
	// the server sets it from the verified signature. A job with the zero
	// key or without a Delivery (resync's, or one a processor's Result asks for)
	// is never taken for a replay.
	Replay ReplayKey
	// Attempt counts the failed tries of the work this job tries again
	// (RetryPolicy.Retry); 0 for a job that is not a retry.
	Attempt int
}

// ReplayKey identifies a delivery's body: its verified HMAC-SHA256. A
// replay of a captured delivery carries the same body under any delivery
// id, and no one without the secret can sign another, while every genuine
// new event has a body of its own (its action, head SHA, comment or review
// id and updated_at are in it). The unsigned X-GitHub-Event header is left
// out, so a replay cannot pass for new work by naming another event.
type ReplayKey [32]byte

// IsZero reports whether k is the zero key.
func (k ReplayKey) IsZero() bool { return k == ReplayKey{} }

// Processor does the work of a job. An error is logged and counted, and
// the job is tried again by the error's class (RetryPolicy.Retry): a
// failure never waits for the periodic resync. What more the job calls for it returns as a Result, which the
// queue acts on (even beside an error: a resync that could not list one
// repository still found the others' work), as a controller-runtime
// Reconciler returns its Result: the processor never holds the queue, and
// neither is built before the other.
type Processor interface {
	Process(ctx context.Context, job Job) (Result, error)
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(ctx context.Context, job Job) (Result, error)

// Process calls f.
func (f ProcessorFunc) Process(ctx context.Context, job Job) (Result, error) {
	return f(ctx, job)
}

// Result is what a processed job asks of the queue. The zero Result asks
// nothing.
type Result struct {
	// RetryAt, when not zero, runs the job's key again at that time (a
	// pull request whose check could not judge): see Next.
	RetryAt time.Time
	// Jobs are the further work the job found, such as the pull
	// requests a resync lists.
	Jobs []Job
}

// Next lists the jobs r asks the queue to take after job: a retry of
// job's key held back until RetryAt, then Jobs. They are the processor's
// own work, not deliveries: none carries a replay key, so none is dropped
// as a replay of the job that made it (a copy of the job included). The
// retry carries no delivery id and no payload: the processor reads the
// current state, as it does for every job.
func (r Result) Next(job Job, now time.Time) []Job {
	out := make([]Job, 0, len(r.Jobs)+1)
	if !r.RetryAt.IsZero() {
		out = append(out, Job{
			Key:          job.Key,
			Event:        "retry",
			Installation: job.Installation,
			Received:     now,
			NotBefore:    r.RetryAt,
		})
	}
	for _, j := range r.Jobs {
		j.Replay = ReplayKey{}
		out = append(out, j)
	}
	return out
}

// actions lists, per allowlisted event, the actions that make work. A nil
// set means every delivery of the event does (push has no action).
var actions = map[string]map[string]bool{
	"pull_request": actionSet("opened", "reopened", "synchronize", "ready_for_review", "converted_to_draft",
		"edited", "labeled", "unlabeled", "dequeued"),
	"issue_comment":             actionSet("created", "edited", "deleted"),
	"pull_request_review":       actionSet("submitted", "edited", "dismissed"),
	"check_run":                 actionSet("rerequested", "requested_action"),
	"check_suite":               actionSet("requested", "rerequested"),
	"push":                      nil,
	"merge_group":               actionSet("checks_requested", "destroyed"),
	"installation":              actionSet("created", "new_permissions_accepted", "unsuspend"),
	"installation_repositories": actionSet("added"),
}

func actionSet(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// allowed reports whether event is one that can make work. Other events are
// acknowledged and ignored without parsing.
func allowed(event string) bool {
	_, ok := actions[event]
	return ok
}

// routePayload holds the few fields routing needs. parseRoutePayload fills
// it; a nil pointer is an object that is absent or null.
type routePayload struct {
	Action       *string
	Installation *struct{ ID int64 }
	Repository   *struct{ FullName string }
	PullRequest  *routePR
	Issue        *struct {
		Number int
		IsPR   bool // issue.pull_request is an object: the issue is a pull request
	}
	CheckRun   *routeCheck
	CheckSuite *routeCheck
	After      string // push: the new head of the ref
	MergeGroup *routeGroup
}

type routeGroup struct {
	HeadSHA string
	HeadRef string
}

type routePR struct {
	Number  int
	HeadSHA string
}

type routeCheck struct {
	HeadSHA      string
	PullRequests []routePR
}

// routed is what routing learns from a delivery: the jobs and the head SHA
// for the logs.
type routed struct {
	jobs []Job
	sha  string
}

func route(event, delivery string, body []byte, now time.Time) (routed, error) {
	wanted, known := actions[event]
	if !known {
		return routed{}, nil
	}
	p, err := parseRoutePayload(body)
	if err != nil {
		return routed{}, fmt.Errorf("%s payload: %w", event, err)
	}
	action := ""
	if p.Action != nil {
		action = *p.Action
	}
	if wanted != nil {
		if p.Action == nil {
			return routed{}, fmt.Errorf("%s payload has no action", event)
		}
		if !wanted[action] {
			return routed{}, nil
		}
	}
	job := Job{Event: event, Action: action, Delivery: delivery, Payload: body, Received: now}
	if p.Installation != nil {
		job.Installation = p.Installation.ID
	}

	if event == "installation" || event == "installation_repositories" {
		if job.Installation <= 0 {
			return routed{}, fmt.Errorf("%s payload has no installation.id", event)
		}
		job.Key = Key{Kind: KindResync}
		return routed{jobs: []Job{job}}, nil
	}

	repo, err := routeRepo(event, p)
	if err != nil {
		return routed{}, err
	}
	switch event {
	case "push":
		job.Key = Key{Repo: repo, Kind: KindPush}
		return routed{jobs: []Job{job}, sha: p.After}, nil

	case "pull_request", "pull_request_review":
		if p.PullRequest == nil || p.PullRequest.Number <= 0 {
			return routed{}, fmt.Errorf("%s payload has no pull_request.number", event)
		}
		job.Key = Key{Repo: repo, PR: p.PullRequest.Number, Kind: KindPR}
		return routed{jobs: []Job{job}, sha: p.PullRequest.HeadSHA}, nil

	case "issue_comment":
		if p.Issue == nil || p.Issue.Number <= 0 {
			return routed{}, fmt.Errorf("issue_comment payload has no issue.number")
		}
		if !p.Issue.IsPR {
			return routed{}, nil // a comment on a plain issue
		}
		job.Key = Key{Repo: repo, PR: p.Issue.Number, Kind: KindPR}
		return routed{jobs: []Job{job}}, nil

	case "merge_group":
		if p.MergeGroup == nil {
			return routed{}, fmt.Errorf("merge_group payload has no merge_group object")
		}
		n, err := GroupNumber(p.MergeGroup.HeadRef)
		if err != nil {
			return routed{}, fmt.Errorf("merge_group payload: %w", err)
		}
		job.Key = Key{Repo: repo, PR: n, Kind: KindMergeGroup}
		return routed{jobs: []Job{job}, sha: p.MergeGroup.HeadSHA}, nil

	case "check_run", "check_suite":
		obj := p.CheckRun
		if event == "check_suite" {
			obj = p.CheckSuite
		}
		if obj == nil {
			return routed{}, fmt.Errorf("%s payload has no %s object", event, event)
		}
		// pull_requests is empty for a commit that no open pull request of
		// this repository has at its head (such as a fork's); there is no
		// PR to re-check, and resync covers what is open.
		r := routed{sha: obj.HeadSHA}
		seen := map[int]bool{}
		for i, pr := range obj.PullRequests {
			if pr.Number <= 0 {
				return routed{}, fmt.Errorf("%s payload: %s.pull_requests[%d] has no number", event, event, i)
			}
			if seen[pr.Number] {
				continue
			}
			seen[pr.Number] = true
			j := job
			j.Key = Key{Repo: repo, PR: pr.Number, Kind: KindPR}
			r.jobs = append(r.jobs, j)
		}
		return r, nil
	}
	return routed{}, fmt.Errorf("event %s has no route", event) // unreachable: actions and this switch agree
}

// GroupNumber is the number of the pull request that a merge group's head
// ref ends with: refs/heads/gh-readonly-queue/<base branch>/pr-<N>-<sha>,
// the group of that pull request and every one queued before it.
func GroupNumber(headRef string) (int, error) {
	rest, ok := strings.CutPrefix(headRef, "refs/heads/gh-readonly-queue/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 {
		return 0, fmt.Errorf("merge_group.head_ref %q is not refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>", headRef)
	}
	num, _, ok := strings.Cut(strings.TrimPrefix(rest[i+1:], "pr-"), "-")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n <= 0 || !strings.HasPrefix(rest[i+1:], "pr-") {
		return 0, fmt.Errorf("merge_group.head_ref %q is not refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>", headRef)
	}
	return n, nil
}

// repoName returns the delivery's repository as "owner/name", lower-cased:
// GitHub treats names case-insensitively, and one PR must make one key
// whatever case a payload spells it in.
func routeRepo(event string, p routePayload) (string, error) {
	if p.Repository == nil || p.Repository.FullName == "" {
		return "", fmt.Errorf("%s payload has no repository.full_name", event)
	}
	owner, name, ok := strings.Cut(p.Repository.FullName, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("%s payload: repository.full_name %q is not owner/name", event, p.Repository.FullName)
	}
	return strings.ToLower(p.Repository.FullName), nil
}

// parseRoutePayload reads the routing fields from a webhook body. It is a
// small validating JSON reader rather than encoding/json because a payload
// is 5-30 KiB of which routing needs a few dozen bytes, and encoding/json
// scans every byte twice through a per-byte state machine (validate, then
// decode); that cost dominated the accept path. The reader still checks the
// whole body against the JSON grammar, so what is malformed for
// encoding/json is malformed here too. Keys match exactly (GitHub's are
// lower case); for a key given twice the last wins; a null object is absent.
func parseRoutePayload(body []byte) (routePayload, error) {
	var p routePayload
	s := jsonscan.New(body)
	s.WS()
	if s.Peek() != '{' {
		return p, s.Errorf("want a JSON object")
	}
	// Members given twice behave as with encoding/json: the later one is
	// decoded into what the earlier one left, and a null object clears it.
	err := s.Object(0, func(key []byte) error {
		switch string(key) {
		case "action":
			v, null, err := s.Str()
			if null {
				p.Action = nil
			} else if err == nil {
				p.Action = &v
			}
			return err
		case "after":
			return s.StrInto(&p.After)
		case "installation":
			inst := cmp.Or(p.Installation, &struct{ ID int64 }{})
			present, err := s.ObjectOrNull(1, func(k []byte) error {
				if string(k) == "id" {
					return s.Int64Into(&inst.ID)
				}
				return s.Skip(2)
			})
			p.Installation = nilUnless(present, inst)
			return err
		case "repository":
			repo := cmp.Or(p.Repository, &struct{ FullName string }{})
			present, err := s.ObjectOrNull(1, func(k []byte) error {
				if string(k) == "full_name" {
					return s.StrInto(&repo.FullName)
				}
				return s.Skip(2)
			})
			p.Repository = nilUnless(present, repo)
			return err
		case "pull_request":
			pr := cmp.Or(p.PullRequest, &routePR{})
			present, err := readPR(s, 1, pr)
			p.PullRequest = nilUnless(present, pr)
			return err
		case "issue":
			issue := cmp.Or(p.Issue, &struct {
				Number int
				IsPR   bool
			}{})
			present, err := s.ObjectOrNull(1, func(k []byte) error {
				switch string(k) {
				case "number":
					return s.IntInto(&issue.Number)
				case "pull_request":
					s.WS()
					issue.IsPR = s.Peek() == '{'
				}
				return s.Skip(2)
			})
			p.Issue = nilUnless(present, issue)
			return err
		case "merge_group":
			g := cmp.Or(p.MergeGroup, &routeGroup{})
			present, err := s.ObjectOrNull(1, func(k []byte) error {
				switch string(k) {
				case "head_sha":
					return s.StrInto(&g.HeadSHA)
				case "head_ref":
					return s.StrInto(&g.HeadRef)
				}
				return s.Skip(2)
			})
			p.MergeGroup = nilUnless(present, g)
			return err
		case "check_run", "check_suite":
			dst := &p.CheckRun
			if string(key) == "check_suite" {
				dst = &p.CheckSuite
			}
			c := cmp.Or(*dst, &routeCheck{})
			present, err := s.ObjectOrNull(1, func(k []byte) error {
				switch string(k) {
				case "head_sha":
					return s.StrInto(&c.HeadSHA)
				case "pull_requests":
					s.WS()
					if s.Peek() == 'n' {
						c.PullRequests = nil
					} else {
						c.PullRequests = c.PullRequests[:0]
					}
					return s.ArrayOrNull(2, func() error {
						var pr routePR
						present, err := readPR(s, 3, &pr)
						if present {
							c.PullRequests = append(c.PullRequests, pr)
						} else {
							c.PullRequests = append(c.PullRequests, routePR{})
						}
						return err
					})
				}
				return s.Skip(2)
			})
			*dst = nilUnless(present, c)
			return err
		}
		return s.Skip(1)
	})
	if err != nil {
		return routePayload{}, err
	}
	if !s.AtEnd() {
		return routePayload{}, s.Errorf("data after the top-level value")
	}
	return p, nil
}

// pr reads a pull request object: number and head.sha.
func readPR(s *jsonscan.Reader, depth int, pr *routePR) (bool, error) {
	return s.ObjectOrNull(depth, func(k []byte) error {
		switch string(k) {
		case "number":
			return s.IntInto(&pr.Number)
		case "head":
			_, err := s.ObjectOrNull(depth+1, func(k []byte) error {
				if string(k) == "sha" {
					return s.StrInto(&pr.HeadSHA)
				}
				return s.Skip(depth + 2)
			})
			return err
		}
		return s.Skip(depth + 1)
	})
}

// nilUnless returns v when present, else nil.
func nilUnless[T any](present bool, v *T) *T {
	if present {
		return v
	}
	return nil
}
