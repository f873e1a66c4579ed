package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kinds of work.
const (
	KindPR     = "pr"     // reconcile one pull request at its current head
	KindPush   = "push"   // a push; the processor publishes when it is to the default branch
	KindResync = "resync" // list the installation's open pull requests and reconcile what changed
)

// Key identifies a unit of work. Work for a key runs one at a time, and a
// newer job replaces the queued (not yet running) older job of the same key.
// That is safe because the processor is level-triggered: it reads the
// current state from GitHub, so the newest job for a key does all that the
// older ones would have done.
type Key struct {
	Repo string // "owner/name" lower-cased; "" for installation-wide resync
	PR   int    // 0 unless KindPR
	Kind string
}

func (k Key) String() string {
	switch {
	case k.Kind == KindPR:
		return fmt.Sprintf("%s#%d", k.Repo, k.PR)
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
}

// Processor does the work of a job. An error is logged and counted; the
// job is not retried, because resync reconciles whatever a failure left.
type Processor interface {
	Process(ctx context.Context, job Job) error
}

// ProcessorFunc adapts a function to Processor.
type ProcessorFunc func(ctx context.Context, job Job) error

// Process calls f.
func (f ProcessorFunc) Process(ctx context.Context, job Job) error { return f(ctx, job) }

// actions lists, per allowlisted event, the actions that make work. A nil
// set means every delivery of the event does (push has no action).
var actions = map[string]map[string]bool{
	"pull_request": actionSet("opened", "reopened", "synchronize", "ready_for_review", "converted_to_draft",
		"edited", "labeled", "unlabeled"),
	"issue_comment":             actionSet("created", "edited", "deleted"),
	"pull_request_review":       actionSet("submitted", "edited", "dismissed"),
	"check_run":                 actionSet("rerequested", "requested_action"),
	"check_suite":               actionSet("requested", "rerequested"),
	"push":                      nil,
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

// Allowed reports whether event is one that can make work. Other events are
// acknowledged and ignored without parsing.
func Allowed(event string) bool {
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

// Route decides from a verified delivery what work it makes: ok=false for
// events outside the allowlist or irrelevant actions (reply 202, ignore);
// err for a malformed body (reply 400). For a check_run or check_suite that
// names several pull requests it returns the job of the first; RouteAll
// returns them all.
func Route(event, delivery string, body []byte) (job Job, ok bool, err error) {
	jobs, err := RouteAll(event, delivery, body)
	if err != nil || len(jobs) == 0 {
		return Job{}, false, err
	}
	return jobs[0], true, nil
}

// RouteAll is Route returning every job the delivery makes: none when it is
// ignored, one per pull request for check_run and check_suite.
func RouteAll(event, delivery string, body []byte) ([]Job, error) {
	r, err := route(event, delivery, body, time.Now())
	return r.jobs, err
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
	s := &jsonReader{b: body}
	s.ws()
	if s.peek() != '{' {
		return p, s.errorf("want a JSON object")
	}
	// Members given twice behave as with encoding/json: the later one is
	// decoded into what the earlier one left, and a null object clears it.
	err := s.object(0, func(key []byte) error {
		switch string(key) {
		case "action":
			v, null, err := s.str()
			if null {
				p.Action = nil
			} else if err == nil {
				p.Action = &v
			}
			return err
		case "after":
			return s.strInto(&p.After)
		case "installation":
			inst := cmp.Or(p.Installation, &struct{ ID int64 }{})
			present, err := s.objectOrNull(1, func(k []byte) error {
				if string(k) == "id" {
					return s.int64Into(&inst.ID)
				}
				return s.skip(2)
			})
			p.Installation = nilUnless(present, inst)
			return err
		case "repository":
			repo := cmp.Or(p.Repository, &struct{ FullName string }{})
			present, err := s.objectOrNull(1, func(k []byte) error {
				if string(k) == "full_name" {
					return s.strInto(&repo.FullName)
				}
				return s.skip(2)
			})
			p.Repository = nilUnless(present, repo)
			return err
		case "pull_request":
			pr := cmp.Or(p.PullRequest, &routePR{})
			present, err := s.pr(1, pr)
			p.PullRequest = nilUnless(present, pr)
			return err
		case "issue":
			issue := cmp.Or(p.Issue, &struct {
				Number int
				IsPR   bool
			}{})
			present, err := s.objectOrNull(1, func(k []byte) error {
				switch string(k) {
				case "number":
					return s.intInto(&issue.Number)
				case "pull_request":
					s.ws()
					issue.IsPR = s.peek() == '{'
				}
				return s.skip(2)
			})
			p.Issue = nilUnless(present, issue)
			return err
		case "check_run", "check_suite":
			dst := &p.CheckRun
			if string(key) == "check_suite" {
				dst = &p.CheckSuite
			}
			c := cmp.Or(*dst, &routeCheck{})
			present, err := s.objectOrNull(1, func(k []byte) error {
				switch string(k) {
				case "head_sha":
					return s.strInto(&c.HeadSHA)
				case "pull_requests":
					s.ws()
					if s.peek() == 'n' {
						c.PullRequests = nil
					} else {
						c.PullRequests = c.PullRequests[:0]
					}
					return s.arrayOrNull(2, func() error {
						var pr routePR
						present, err := s.pr(3, &pr)
						if present {
							c.PullRequests = append(c.PullRequests, pr)
						} else {
							c.PullRequests = append(c.PullRequests, routePR{})
						}
						return err
					})
				}
				return s.skip(2)
			})
			*dst = nilUnless(present, c)
			return err
		}
		return s.skip(1)
	})
	if err != nil {
		return routePayload{}, err
	}
	s.ws()
	if s.i != len(s.b) {
		return routePayload{}, s.errorf("data after the top-level value")
	}
	return p, nil
}

// maxJSONDepth bounds nesting, as encoding/json does, so that a deep body
// cannot exhaust the stack.
const maxJSONDepth = 10000

// jsonReader is a cursor over a JSON text.
type jsonReader struct {
	b []byte
	i int
}

func (s *jsonReader) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

func (s *jsonReader) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonReader) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// pr reads a pull request object: number and head.sha.
func (s *jsonReader) pr(depth int, pr *routePR) (bool, error) {
	return s.objectOrNull(depth, func(k []byte) error {
		switch string(k) {
		case "number":
			return s.intInto(&pr.Number)
		case "head":
			_, err := s.objectOrNull(depth+1, func(k []byte) error {
				if string(k) == "sha" {
					return s.strInto(&pr.HeadSHA)
				}
				return s.skip(depth + 2)
			})
			return err
		}
		return s.skip(depth + 1)
	})
}

// objectOrNull reads an object, calling field with the cursor on each
// member's value (field must consume it), or a null; it reports whether
// there was an object.
func (s *jsonReader) objectOrNull(depth int, field func(key []byte) error) (bool, error) {
	s.ws()
	if s.peek() == 'n' {
		return false, s.literal("null")
	}
	if s.peek() != '{' {
		return false, s.errorf("want an object")
	}
	return true, s.object(depth, field)
}

func (s *jsonReader) object(depth int, field func(key []byte) error) error {
	if depth > maxJSONDepth {
		return s.errorf("nested too deeply")
	}
	s.i++ // {
	s.ws()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if s.peek() != '"' {
			return s.errorf("want a member name")
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		s.ws()
		if s.peek() != ':' {
			return s.errorf("want ':' after a member name")
		}
		s.i++
		s.ws()
		if err := field(key); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}' in an object")
		}
	}
}

func (s *jsonReader) arrayOrNull(depth int, elem func() error) error {
	s.ws()
	switch s.peek() {
	case 'n':
		return s.literal("null")
	case '[':
	default:
		return s.errorf("want an array")
	}
	if depth > maxJSONDepth {
		return s.errorf("nested too deeply")
	}
	s.i++
	s.ws()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or ']' in an array")
		}
	}
}

// skip checks and passes over one value of any kind.
func (s *jsonReader) skip(depth int) error {
	s.ws()
	switch c := s.peek(); {
	case c == '{':
		return s.object(depth, func([]byte) error { return s.skip(depth + 1) })
	case c == '[':
		return s.arrayOrNull(depth, func() error { return s.skip(depth + 1) })
	case c == '"':
		_, _, err := s.strRaw()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	case c == 0 && s.i >= len(s.b):
		return s.errorf("unexpected end of input")
	}
	return s.errorf("unexpected character %q", s.peek())
}

func (s *jsonReader) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.errorf("want %s", word)
	}
	s.i += len(word)
	return nil
}

// strRaw passes over a string, checking its escapes, and returns its bytes
// between the quotes and whether it holds an escape.
func (s *jsonReader) strRaw() ([]byte, bool, error) {
	start := s.i + 1
	escaped := false
	for i := start; i < len(s.b); {
		// Most bytes need no attention: pass over them in a tight loop.
		for i < len(s.b) && plainStringByte[s.b[i]] {
			i++
		}
		if i == len(s.b) {
			break
		}
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				s.i = i
				return nil, false, s.errorf("unterminated string")
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s.b) || !isHex4(s.b[i+2:i+6]) {
					s.i = i
					return nil, false, s.errorf("bad \\u escape")
				}
				i += 6
			default:
				s.i = i
				return nil, false, s.errorf("bad escape")
			}
		case c < 0x20:
			s.i = i
			return nil, false, s.errorf("control character in a string")
		default:
			i++
		}
	}
	s.i = len(s.b)
	return nil, false, s.errorf("unterminated string")
}

// plainStringByte marks the bytes a string holds as they are: not the
// quote, the backslash or a control character.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// key reads a member name. Unescaped names (all of GitHub's) are returned
// as a slice of the body, not copied: the callers only compare them, and
// comparing string(key) does not allocate.
func (s *jsonReader) key() ([]byte, error) {
	at := s.i
	raw, escaped, err := s.strRaw()
	if err != nil || (!escaped && utf8.Valid(raw)) {
		return raw, err
	}
	s.i = at
	v, _, err := s.str()
	return []byte(v), err
}

// str reads a string or null (null reports "", true).
func (s *jsonReader) str() (string, bool, error) {
	s.ws()
	switch s.peek() {
	case 'n':
		return "", true, s.literal("null")
	case '"':
	default:
		return "", false, s.errorf("want a string")
	}
	at := s.i
	raw, escaped, err := s.strRaw()
	if err != nil || (!escaped && utf8.Valid(raw)) {
		return string(raw), false, err
	}
	// Escapes and invalid UTF-8 (which encoding/json replaces with U+FFFD)
	// are rare in the fields routing reads; let the standard library decode
	// them exactly.
	var v string
	if err := json.Unmarshal(s.b[at:s.i], &v); err != nil {
		return "", false, fmt.Errorf("invalid JSON string at byte %d: %w", at, err)
	}
	return v, false, nil
}

// number passes over a number per the JSON grammar and returns its text.
func (s *jsonReader) number() ([]byte, error) {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.peek() == '-' {
		s.i++
	}
	switch {
	case s.peek() == '0':
		s.i++
	case s.peek() >= '1' && s.peek() <= '9':
		digits()
	default:
		return nil, s.errorf("bad number")
	}
	if s.peek() == '.' {
		s.i++
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			return nil, s.errorf("bad number")
		}
	}
	return s.b[start:s.i], nil
}

// int64Into reads a whole number into *dst; a null leaves it as it was.
func (s *jsonReader) int64Into(dst *int64) error {
	s.ws()
	if s.peek() == 'n' {
		return s.literal("null")
	}
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		return s.errorf("want a number")
	}
	at := s.i
	text, err := s.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		s.i = at
		return s.errorf("%s is not a whole number", text)
	}
	*dst = n
	return nil
}

func (s *jsonReader) intInto(dst *int) error {
	n := int64(*dst)
	if err := s.int64Into(&n); err != nil {
		return err
	}
	if int64(int(n)) != n {
		return s.errorf("%d is out of range", n)
	}
	*dst = int(n)
	return nil
}

// strInto reads a string into *dst; a null leaves it as it was.
func (s *jsonReader) strInto(dst *string) error {
	v, null, err := s.str()
	if err == nil && !null {
		*dst = v
	}
	return err
}

// nilUnless returns v when present, else nil.
func nilUnless[T any](present bool, v *T) *T {
	if present {
		return v
	}
	return nil
}
