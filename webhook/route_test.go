package webhook

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// examplesDir holds GitHub's webhook examples, shared with the fake
// GitHub, which builds its deliveries from them.
var examplesDir = filepath.Join("githubtest", "testdata", "webhooks")

// payloadFiles returns the GitHub webhook examples, named
// <event>.<action or "event">.<n>.json.
func payloadFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no webhook examples in %s: %v", examplesDir, err)
	}
	return files
}

func readPayload(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantWork is the allowlist as the contract writes it, kept apart from the
// code's table so that a slip in either shows.
var wantWork = map[string][]string{
	"pull_request": {"opened", "reopened", "synchronize", "ready_for_review", "converted_to_draft",
		"edited", "labeled", "unlabeled", "dequeued"},
	"issue_comment":             {"created", "edited", "deleted"},
	"pull_request_review":       {"submitted", "edited", "dismissed"},
	"check_run":                 {"rerequested", "requested_action"},
	"check_suite":               {"requested", "rerequested"},
	"push":                      {"event"},
	"merge_group":               {"checks_requested", "destroyed"},
	"installation":              {"created", "new_permissions_accepted", "unsuspend"},
	"installation_repositories": {"added"},
}

// expectedKeys works out, from a generic decode of an example, the keys
// the contract says it makes.
func expectedKeys(t *testing.T, event, action string, body []byte) []Key {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("example is not JSON: %v", err)
	}
	wanted := false
	for _, a := range wantWork[event] {
		wanted = wanted || a == action
	}
	if !wanted {
		return nil
	}
	repo := ""
	if r, ok := doc["repository"].(map[string]any); ok {
		repo = strings.ToLower(r["full_name"].(string))
	}
	num := func(m any) int { return int(m.(map[string]any)["number"].(float64)) }
	switch event {
	case "pull_request", "pull_request_review":
		return []Key{{Repo: repo, PR: num(doc["pull_request"]), Kind: KindPR}}
	case "issue_comment":
		issue := doc["issue"].(map[string]any)
		if pr, ok := issue["pull_request"].(map[string]any); !ok || pr == nil {
			return nil
		}
		return []Key{{Repo: repo, PR: num(issue), Kind: KindPR}}
	case "check_run", "check_suite":
		var keys []Key
		for _, pr := range doc[event].(map[string]any)["pull_requests"].([]any) {
			keys = append(keys, Key{Repo: repo, PR: num(pr), Kind: KindPR})
		}
		return keys
	case "push":
		return []Key{{Repo: repo, Kind: KindPush}}
	default:
		return []Key{{Kind: KindResync}}
	}
}

// TestRouteExamples runs every GitHub example through Route: none may be an
// error, and each must make exactly the work the allowlist says.
func TestRouteExamples(t *testing.T) {
	accepted := map[string]int{}
	for _, path := range payloadFiles(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			parts := strings.Split(name, ".")
			event, action := parts[0], parts[1]
			body := readPayload(t, name)
			jobs, err := routeAll(event, "d-"+name, body)
			if err != nil {
				t.Fatalf("RouteAll: %v", err)
			}
			want := expectedKeys(t, event, action, body)
			var got []Key
			for _, j := range jobs {
				got = append(got, j.Key)
				if j.Event != event || j.Delivery != "d-"+name || &j.Payload[0] != &body[0] || j.Received.IsZero() {
					t.Errorf("job fields: %+v", j)
				}
				if action != "event" && j.Action != action {
					t.Errorf("Action = %q, want %q", j.Action, action)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("keys = %v, want %v", got, want)
			}
			job, ok, err := routeFirst(event, "d", body)
			if err != nil || ok != (len(want) > 0) || (ok && job.Key != want[0]) {
				t.Fatalf("Route = %v, %v, %v; want first of %v", job.Key, ok, err, want)
			}
			if ok {
				accepted[event]++
			}
		})
	}
	// The examples must exercise every kind of work, or the table proves little.
	for _, ev := range []string{"pull_request", "pull_request_review", "check_run", "check_suite", "push", "installation", "installation_repositories"} {
		if accepted[ev] == 0 {
			t.Errorf("no example of %s was accepted", ev)
		}
	}
}

func TestRouteSpecificExamples(t *testing.T) {
	tests := []struct {
		file         string
		key          Key
		action       string
		installation int64
	}{
		{"pull_request.opened.12.json", Key{"codertocat/hello-world", 2, KindPR}, "opened", 1},
		{"pull_request.synchronize.22.json", Key{"codertocat/hello-world", 2, KindPR}, "synchronize", 1},
		{"pull_request_review.submitted.0.json", Key{"codertocat/hello-world", 2, KindPR}, "submitted", 0},
		{"check_run.requested_action.6.json", Key{"electron/electron", 26764, KindPR}, "requested_action", 690857},
		{"check_suite.rerequested.7.json", Key{"codertocat/hello-world", 2, KindPR}, "rerequested", 957387},
		{"push.event.3.json", Key{"codertocat/hello-world", 0, KindPush}, "", 1},
		{"installation.created.1.json", Key{"", 0, KindResync}, "created", 957387},
		{"installation_repositories.added.0.json", Key{"", 0, KindResync}, "added", 957387},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			event := strings.Split(tc.file, ".")[0]
			job, ok, err := routeFirst(event, "x", readPayload(t, tc.file))
			if err != nil || !ok {
				t.Fatalf("Route = ok %v, err %v", ok, err)
			}
			if job.Key != tc.key || job.Action != tc.action || job.Installation != tc.installation {
				t.Fatalf("got key %v action %q installation %d", job.Key, job.Action, job.Installation)
			}
		})
	}
}

// withField returns the example with one field of an object set, for the
// cases GitHub's examples lack (a comment on a pull request, several PRs in
// a check suite).
func withField(t *testing.T, file string, set func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readPayload(t, file), &doc); err != nil {
		t.Fatal(err)
	}
	set(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRouteCases(t *testing.T) {
	commentOnPR := withField(t, "issue_comment.created.0.json", func(d map[string]any) {
		d["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
	})
	commentNullPR := withField(t, "issue_comment.created.0.json", func(d map[string]any) {
		d["issue"].(map[string]any)["pull_request"] = nil
	})
	twoPRs := withField(t, "check_suite.rerequested.7.json", func(d map[string]any) {
		cs := d["check_suite"].(map[string]any)
		prs := cs["pull_requests"].([]any)
		other := map[string]any{"number": 7.0, "head": map[string]any{"sha": "abc"}}
		cs["pull_requests"] = append(prs, other, prs[0]) // a repeat makes no second job
	})
	upper := withField(t, "pull_request.opened.12.json", func(d map[string]any) {
		d["repository"].(map[string]any)["full_name"] = "CodeRtocat/HELLO-World"
	})
	noRepo := withField(t, "pull_request.opened.12.json", func(d map[string]any) { delete(d, "repository") })
	noNumber := withField(t, "pull_request.opened.12.json", func(d map[string]any) {
		delete(d["pull_request"].(map[string]any), "number")
	})
	noAction := withField(t, "pull_request.opened.12.json", func(d map[string]any) { delete(d, "action") })
	badRepo := withField(t, "push.event.3.json", func(d map[string]any) {
		d["repository"].(map[string]any)["full_name"] = "no-slash"
	})
	group := func(action, ref string) []byte {
		return []byte(`{"action":"` + action + `","merge_group":{"head_sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821","head_ref":"` + ref +
			`","base_sha":"5bd5f196a46b8222fb7484f05faba41a73cf34bd","base_ref":"refs/heads/main"},"repository":{"full_name":"Acme/Catalog"},"installation":{"id":3}}`)
	}
	noInstallation := withField(t, "installation.created.1.json", func(d map[string]any) { delete(d, "installation") })
	numberAsString := withField(t, "pull_request.opened.12.json", func(d map[string]any) {
		d["pull_request"].(map[string]any)["number"] = "2"
	})

	tests := []struct {
		name    string
		event   string
		body    []byte
		keys    []Key
		wantErr string
	}{
		{"comment on a PR", "issue_comment", commentOnPR, []Key{{"codertocat/hello-world", 1, KindPR}}, ""},
		{"comment with null pull_request", "issue_comment", commentNullPR, nil, ""},
		{"check suite of several PRs", "check_suite", twoPRs, []Key{{"codertocat/hello-world", 2, KindPR}, {"codertocat/hello-world", 7, KindPR}}, ""},
		{"repo name lower-cased", "pull_request", upper, []Key{{"codertocat/hello-world", 2, KindPR}}, ""},
		{"ping", "ping", readPayload(t, "ping.event.0.json"), nil, ""},
		{"event outside the allowlist is not parsed", "issues", []byte("not json"), nil, ""},
		{"irrelevant action", "pull_request", readPayload(t, "pull_request.closed.3.json"), nil, ""},
		{"not JSON", "pull_request", []byte("{"), nil, "pull_request payload: invalid JSON at byte 1"},
		{"JSON of the wrong shape", "push", []byte(`[1,2]`), nil, "push payload: invalid JSON at byte 0: want a JSON object"},
		{"empty body", "push", nil, nil, "push payload: invalid JSON at byte 0: want a JSON object"},
		{"no repository", "pull_request", noRepo, nil, "pull_request payload has no repository.full_name"},
		{"no PR number", "pull_request", noNumber, nil, "pull_request payload has no pull_request.number"},
		{"no action", "pull_request", noAction, nil, "pull_request payload has no action"},
		{"repo not owner/name", "push", badRepo, nil, `push payload: repository.full_name "no-slash" is not owner/name`},
		{"installation without id", "installation", noInstallation, nil, "installation payload has no installation.id"},
		{"number of the wrong type", "pull_request", numberAsString, nil, "pull_request payload: invalid JSON at byte"},
		{"merge group", "merge_group", group("checks_requested", "refs/heads/gh-readonly-queue/main/pr-7-5bd5f196a46b8222fb7484f05faba41a73cf34bd"),
			[]Key{{"acme/catalog", 7, KindMergeGroup}}, ""},
		{"merge group of a base with a slash", "merge_group", group("destroyed", "refs/heads/gh-readonly-queue/release/4.18/pr-12-5bd5f196"),
			[]Key{{"acme/catalog", 12, KindMergeGroup}}, ""},
		{"merge group action without work", "merge_group", group("other", "refs/heads/gh-readonly-queue/main/pr-7-5bd5f196"), nil, ""},
		{"merge group head_ref of another shape", "merge_group", group("checks_requested", "refs/heads/main"), nil,
			`merge_group payload: merge_group.head_ref "refs/heads/main" is not refs/heads/gh-readonly-queue/<base>/pr-<number>-<sha>`},
		{"merge group head_ref without a number", "merge_group", group("checks_requested", "refs/heads/gh-readonly-queue/main/pr-x-5bd5"), nil,
			`merge_group payload: merge_group.head_ref`},
		{"merge group without its object", "merge_group", []byte(`{"action":"destroyed","repository":{"full_name":"a/b"}}`), nil,
			"merge_group payload has no merge_group object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := routeAll(tc.event, "d", tc.body)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tc.wantErr)
				}
				if _, ok, err := routeFirst(tc.event, "d", tc.body); ok || err == nil {
					t.Fatalf("Route: ok %v, err %v; want the error", ok, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []Key
			for _, j := range jobs {
				got = append(got, j.Key)
			}
			if !reflect.DeepEqual(got, tc.keys) {
				t.Fatalf("keys = %v, want %v", got, tc.keys)
			}
		})
	}
}

func TestRouteHeadSHA(t *testing.T) {
	tests := []struct{ file, sha string }{
		{"pull_request.synchronize.22.json", "ec26c3e57ca3a959ca5aad62de7213c562f8c821"},
		{"check_run.requested_action.6.json", "5bd5f196a46b8222fb7484f05faba41a73cf34bd"},
	}
	for _, tc := range tests {
		r, err := route(strings.Split(tc.file, ".")[0], "d", readPayload(t, tc.file), time.Time{})
		if err != nil || r.sha != tc.sha {
			t.Errorf("%s: sha %q, err %v; want %s", tc.file, r.sha, err, tc.sha)
		}
	}
}

// stdPayload is the routing fields as encoding/json decodes them, to check
// parseRoutePayload against.
type stdPayload struct {
	Action       *string `json:"action"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
	PullRequest *stdPR `json:"pull_request"`
	Issue       *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
	} `json:"issue"`
	CheckRun   *stdCheck `json:"check_run"`
	CheckSuite *stdCheck `json:"check_suite"`
	After      string    `json:"after"`
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		HeadRef string `json:"head_ref"`
	} `json:"merge_group"`
}

type stdPR struct {
	Number int `json:"number"`
	Head   struct {
		SHA string `json:"sha"`
	} `json:"head"`
}

type stdCheck struct {
	HeadSHA      string  `json:"head_sha"`
	PullRequests []stdPR `json:"pull_requests"`
}

func (s stdPayload) convert() routePayload {
	var p routePayload
	p.Action, p.After = s.Action, s.After
	if s.Installation != nil {
		p.Installation = &struct{ ID int64 }{s.Installation.ID}
	}
	if s.Repository != nil {
		p.Repository = &struct{ FullName string }{s.Repository.FullName}
	}
	if s.PullRequest != nil {
		p.PullRequest = &routePR{s.PullRequest.Number, s.PullRequest.Head.SHA}
	}
	if s.Issue != nil {
		raw := strings.TrimSpace(string(s.Issue.PullRequest))
		p.Issue = &struct {
			Number int
			IsPR   bool
		}{s.Issue.Number, strings.HasPrefix(raw, "{")}
	}
	check := func(c *stdCheck) *routeCheck {
		if c == nil {
			return nil
		}
		r := &routeCheck{HeadSHA: c.HeadSHA}
		for _, pr := range c.PullRequests {
			r.PullRequests = append(r.PullRequests, routePR{pr.Number, pr.Head.SHA})
		}
		return r
	}
	p.CheckRun, p.CheckSuite = check(s.CheckRun), check(s.CheckSuite)
	if s.MergeGroup != nil {
		p.MergeGroup = &routeGroup{s.MergeGroup.HeadSHA, s.MergeGroup.HeadRef}
	}
	return p
}

// checkAgainstStd fails when parseRoutePayload and encoding/json disagree
// on whether body is valid JSON, or on a field of a valid one.
func checkAgainstStd(t *testing.T, body []byte) {
	t.Helper()
	got, err := parseRoutePayload(body)
	var std stdPayload
	stdErr := json.Unmarshal(body, &std)
	if !json.Valid(body) {
		if err == nil {
			t.Fatalf("%q: accepted invalid JSON", body)
		}
		return
	}
	var generic any
	if json.Unmarshal(body, &generic) == nil && hasCaseVariantKey(generic) {
		return // encoding/json matches names case-insensitively; the reader, by design, does not
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); stdErr != nil || trimmed[0] != '{' {
		// Valid JSON of the wrong shape: both must refuse it; a payload
		// is an object, though encoding/json lets null through.
		if err == nil {
			t.Fatalf("%q: accepted; encoding/json: %v", body, stdErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("%q: %v; encoding/json accepts it", body, err)
	}
	want := std.convert()
	if want.CheckRun != nil && len(want.CheckRun.PullRequests) == 0 {
		want.CheckRun.PullRequests = got.CheckRun.PullRequests
	}
	if want.CheckSuite != nil && len(want.CheckSuite.PullRequests) == 0 {
		want.CheckSuite.PullRequests = got.CheckSuite.PullRequests
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", body, got, want)
	}
}

var routedKeys = []string{"action", "after", "installation", "id", "repository", "full_name", "pull_request",
	"number", "head", "sha", "issue", "check_run", "check_suite", "head_sha", "pull_requests", "merge_group", "head_ref"}

// hasCaseVariantKey reports whether a decoded document has a member name
// that equals a routed key only when case is ignored.
func hasCaseVariantKey(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			for _, r := range routedKeys {
				if k != r && strings.EqualFold(k, r) {
					return true
				}
			}
			if hasCaseVariantKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasCaseVariantKey(e) {
				return true
			}
		}
	}
	return false
}

func TestParseRoutePayloadMatchesEncodingJSON(t *testing.T) {
	for _, path := range payloadFiles(t) {
		checkAgainstStd(t, readPayload(t, filepath.Base(path)))
	}
	for _, in := range routeJSONSeeds {
		checkAgainstStd(t, []byte(in))
	}
}

var routeJSONSeeds = []string{
	``, ` `, `{}`, ` {"action":"opened"} `, `[]`, `null`, `"x"`, `{`, `}`, `{}{}`, `{} x`,
	`{"a":tru}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":+1}`,
	`{"a":"\q"}`, `{"a":"\u12G4"}`, "{\"a\":\"\x01\"}", `{"a":[1,]}`, `{"a":1,}`, `{"a" 1}`, `{a:1}`,
	`{"a":[{"b":[null,true,false,-0.5e+3,"\u00e9\n"]}]}`, `{"action":null}`, `{"action":1}`,
	`{"action":"a\"b\u0041"}`, `{"pull_request":{"number":2.5}}`, `{"pull_request":{"number":"2"}}`,
	`{"pull_request":{"number":99999999999999999999}}`, `{"pull_request":null}`, `{"pull_request":{"head":null}}`,
	`{"pull_request":{"number":3,"head":{"sha":"abc"}},"pull_request":{"number":4}}`,
	`{"issue":{"number":5,"pull_request":{}}}`, `{"issue":{"number":5,"pull_request":null}}`,
	`{"check_suite":{"head_sha":"s","pull_requests":[{"number":1},{"number":2,"head":{"sha":"h"}}]}}`,
	`{"check_run":{"pull_requests":null}}`, `{"check_run":{"pull_requests":{}}}`, `{"check_run":[]}`,
	`{"installation":{"id":-1}}`, `{"installation":{"id":1e3}}`, `{"repository":{"full_name":"A/B","x":[[[]]]}}`,
	`{"merge_group":{"head_sha":"s","head_ref":"r","base_sha":"b"}}`, `{"merge_group":null}`, `{"merge_group":{"head_ref":1}}`,
	`{"after":"0000"}`, `{"ACtion":"0"}`, `{"ChECk_run":[]}`, "{\"action\":\"\x82\"}", "{\"a\":1}\n", `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
}

// FuzzRoutePayload checks parseRoutePayload against encoding/json on
// arbitrary input; the seeds run as part of go test.
func FuzzRoutePayload(f *testing.F) {
	for _, s := range routeJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkAgainstStd(t, body) })
}

// routeFirst decides from a verified delivery what work it makes: ok=false for
// events outside the allowlist or irrelevant actions (reply 202, ignore);
// err for a malformed body (reply 400). For a check_run or check_suite that
// names several pull requests it returns the job of the first; routeAll
// returns them all.
func routeFirst(event, delivery string, body []byte) (job Job, ok bool, err error) {
	jobs, err := routeAll(event, delivery, body)
	if err != nil || len(jobs) == 0 {
		return Job{}, false, err
	}
	return jobs[0], true, nil
}

// routeAll is route at the current time, returning every job the delivery
// makes: none when it is ignored, one per pull request for check_run and
// check_suite.
func routeAll(event, delivery string, body []byte) ([]Job, error) {
	r, err := route(event, delivery, body, time.Now())
	return r.jobs, err
}
