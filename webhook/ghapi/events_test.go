package ghapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/owners"
)

const (
	evHead = "1111111111111111111111111111111111111111"
	evOld  = "0000000000000000000000000000000000000000"
)

// eventPages are GitHub-shaped responses, as the REST API sends them, keyed
// by path and then page ("" is the first). The pull request opened with
// evOld and was force-pushed to evHead at 10:00:00 (on the timeline's
// second page). evHead had a check suite from 09:00, made when another
// pull request pushed it: it must not date the head.
var eventPages = map[string]map[string]string{
	"/repos/o/r/commits/" + evHead + "/check-suites": {
		"": `{"total_count": 1, "check_suites": [
			{"id": 1, "head_sha": "` + evHead + `", "status": "completed", "created_at": "2024-05-01T09:00:00Z", "updated_at": "2024-05-01T09:02:00Z",
			 "app": {"id": 99, "slug": "catalogbot"}}]}`,
	},
	"/repos/o/r/issues/7/timeline": {
		"":  `[` + tlCommit(evOld, "2024-05-01T11:00:00Z") + `]`,
		"2": `[` + tlForcePush(evHead, "2024-05-01T10:00:00Z") + `]`,
	},
	"/repos/o/r/pulls/7/reviews": {
		"": `[
			{"id": 80, "user": {"login": "dave", "id": 4, "type": "User"}, "body": "", "state": "APPROVED",
			 "commit_id": "` + evOld + `", "submitted_at": "2024-05-01T09:30:00Z", "author_association": "MEMBER"},
			{"id": 81, "user": {"login": "erin", "id": 5, "type": "User"}, "body": "LGTM", "state": "APPROVED",
			 "commit_id": "` + evHead + `", "submitted_at": "2024-05-01T10:20:00Z", "author_association": "MEMBER"},
			{"id": 82, "user": {"login": "frank", "id": 6, "type": "User"}, "body": "", "state": "PENDING",
			 "commit_id": "` + evHead + `", "author_association": "MEMBER"},
			{"id": 83, "user": {"login": "ivan", "id": 10, "type": "User"}, "body": "/approve", "state": "COMMENTED",
			 "commit_id": "` + evHead + `", "submitted_at": "2024-05-01T10:21:00Z", "author_association": "MEMBER"}
		]`,
	},
	"/repos/o/r/issues/7/comments": {
		"": `[
			{"id": 90, "user": {"login": "alice", "id": 1, "type": "User"}, "body": "/approve",
			 "created_at": "2024-05-01T09:59:00Z", "updated_at": "2024-05-01T09:59:00Z", "author_association": "MEMBER"},
			{"id": 91, "user": {"login": "bob", "id": 2, "type": "User"}, "body": "/approve",
			 "created_at": "2024-05-01T10:01:00Z", "updated_at": "2024-05-01T10:01:00Z", "author_association": "MEMBER"}
		]`,
		"2": `[
			{"id": 92, "user": {"login": "carol", "id": 3, "type": "User"}, "body": "thanks\n/approve",
			 "created_at": "2024-05-01T08:00:00Z", "updated_at": "2024-05-01T10:30:00Z", "author_association": "MEMBER"},
			{"id": 93, "user": {"login": "catalogbot[bot]", "id": 100, "type": "Bot"}, "body": "/approve",
			 "created_at": "2024-05-01T10:40:00Z", "updated_at": "2024-05-01T10:40:00Z", "author_association": "NONE"},
			{"id": 94, "user": {"login": "helper", "id": 101, "type": "Bot"}, "body": "/approve",
			 "created_at": "2024-05-01T10:41:00Z", "updated_at": "2024-05-01T10:41:00Z", "author_association": "NONE"},
			{"id": 95, "user": {"login": "gina", "id": 7, "type": "User"}, "body": "/approve",
			 "created_at": "2024-05-01T10:42:00Z", "updated_at": "2024-05-01T10:50:00Z", "author_association": "MEMBER"},
			{"id": 96, "user": {"login": "hank", "id": 8, "type": "User"}, "body": "/approve",
			 "created_at": "2024-05-01T10:43:00Z", "updated_at": "2024-05-01T10:51:00Z", "author_association": "MEMBER"}
		]`,
	},
}

// tlCommit and tlForcePush are timeline events as GitHub sends them; a
// committed event's dates are the commit's own.
func tlCommit(sha, date string) string {
	return `{"event": "committed", "sha": "` + sha + `", "node_id": "C_1", "url": "https://api.github.com/repos/o/r/git/commits/` + sha + `",
		"html_url": "https://github.com/o/r/commit/` + sha + `", "message": "m",
		"author": {"name": "a", "email": "a@example.com", "date": "` + date + `"},
		"committer": {"name": "a", "email": "a@example.com", "date": "` + date + `"},
		"tree": {"sha": "` + evOld + `", "url": "https://api.github.com/repos/o/r/git/trees/` + evOld + `"}, "parents": [],
		"verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null}}`
}

func tlForcePush(sha, at string) string {
	return `{"id": 5, "node_id": "HRFPE_5", "url": "https://api.github.com/repos/o/r/issues/events/5",
		"actor": {"login": "mallory", "id": 9, "type": "User"}, "event": "head_ref_force_pushed",
		"commit_id": "` + sha + `", "commit_url": "https://api.github.com/repos/o/r/commits/` + sha + `",
		"created_at": "` + at + `", "performed_via_github_app": null}`
}

// edits is an EditLog: comment id to editor and the updated_at of the
// edit, or review id to editor (with no time).
type edits map[int64]struct {
	by string
	at time.Time
}

func (e edits) CommentEditor(id int64, updated time.Time) (string, bool) {
	x, ok := e[id]
	if !ok || x.at.IsZero() || !x.at.Equal(updated) {
		return "", false
	}
	return x.by, true
}

func (e edits) ReviewEditor(id int64) (string, bool) {
	x, ok := e[id]
	if !ok || !x.at.IsZero() {
		return "", false
	}
	return x.by, true
}

// eventServer serves pages, linking each to the next as GitHub does, and
// records the pages asked for.
func eventServer(t *testing.T, pages map[string]map[string]string) (*github.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		mu.Lock()
		asked = append(asked, r.URL.Path+"?page="+page)
		mu.Unlock()
		if r.Method != http.MethodGet {
			http.Error(w, "read only", http.StatusMethodNotAllowed)
			return
		}
		byPage, ok := pages[r.URL.Path]
		if !ok {
			http.Error(w, `{"message": "Not Found"}`, http.StatusNotFound)
			return
		}
		body, ok := byPage[page]
		if !ok {
			body = "[]"
		}
		n := 1
		if page != "" {
			n, _ = strconv.Atoi(page)
		}
		next := strconv.Itoa(n + 1)
		if _, more := byPage[next]; more {
			u := *r.URL
			q := u.Query()
			q.Set("page", next)
			u.RawQuery = q.Encode()
			w.Header().Set("Link", fmt.Sprintf(`<http://%s%s>; rel="next"`, r.Host, u.String()))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	c := github.NewClient(srv.Client())
	base, err := url.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = base
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

func evAt(hhmm string) time.Time {
	t, err := time.Parse(time.RFC3339, "2024-05-01T"+hhmm+":00Z")
	if err != nil {
		panic(err)
	}
	return t
}

func TestEvents(t *testing.T) {
	c, asked := eventServer(t, eventPages)
	log := edits{
		92: {"carol", evAt("10:30")},   // carol's own edit
		95: {"mallory", evAt("10:50")}, // gina's comment, edited by mallory
		96: {"hank", evAt("10:00")},    // hank edited, then someone again unseen
		81: {by: "erin"},               // erin's review, edited by erin
		83: {by: "mallory"},            // ivan's review, its body edited by mallory
	}
	got, err := Events(context.Background(), c, "o", "r", 7, evHead, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := "commented before the head 111111111111 became this pull request's head (2024-05-01T10:00:00Z); a push after an approval needs a fresh one"
	want := []owners.Event{
		// A review binds to the commit it names, even an old one.
		{User: "dave", ReviewState: "APPROVED", Time: evAt("09:30"), CommitSHA: evOld},
		// Posted before the force-push to the head: it was about an
		// earlier head, though the head's check suite is older.
		{User: "alice", Body: "/approve", Time: evAt("09:59"), Unbound: before},
		// Posted after the force-push (on the timeline's second page).
		{User: "bob", Body: "/approve", Time: evAt("10:01"), CommitSHA: evHead},
		{User: "erin", Body: "LGTM", ReviewState: "APPROVED", Time: evAt("10:20"), CommitSHA: evHead, Edited: true, EditedBy: "erin"},
		{User: "ivan", Body: "/approve", ReviewState: "COMMENTED", Time: evAt("10:21"), CommitSHA: evHead, Edited: true, EditedBy: "mallory"},
		// Created before the push, edited after by its author: it
		// counts from the edit.
		{User: "carol", Body: "thanks\n/approve", Time: evAt("10:30"), CommitSHA: evHead, Edited: true, EditedBy: "carol"},
		// Bots keep, or gain, their [bot] suffix.
		{User: "catalogbot[bot]", Body: "/approve", Time: evAt("10:40"), CommitSHA: evHead},
		{User: "helper[bot]", Body: "/approve", Time: evAt("10:41"), CommitSHA: evHead},
		{User: "gina", Body: "/approve", Time: evAt("10:50"), CommitSHA: evHead, Edited: true, EditedBy: "mallory"},
		{User: "hank", Body: "/approve", Time: evAt("10:51"), CommitSHA: evHead, Edited: true},
		// frank's pending review is not there: it was never submitted.
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n%s\nwant:\n%s", evLines(got), evLines(want))
	}
	for _, p := range []string{
		"/repos/o/r/issues/7/timeline?page=2",
		"/repos/o/r/issues/7/comments?page=2",
	} {
		if !slices.Contains(asked(), p) {
			t.Errorf("never asked for %s; asked %v", p, asked())
		}
	}

	// What the events mean for approvals: bots are dropped, edits by
	// others and by nobody known void, and only the approvals bound to
	// the head count for it.
	act := owners.ReadEvents(got, nil)
	var heads []string
	for _, a := range act.Approvals {
		if a.SHA == evHead {
			heads = append(heads, a.User)
		}
	}
	if fmt.Sprint(heads) != "[bob erin carol]" {
		t.Errorf("approvals of the head: %v, want [bob erin carol]", heads)
	}
	if fmt.Sprint(act.Voided) != "[{ivan edited by mallory, not its author; post the command in a new comment true} "+
		"{gina edited by mallory, not its author; post the command in a new comment false} "+
		"{hank edited; the editor cannot be established: post the command in a new comment false}]" {
		t.Errorf("voided: %v", act.Voided)
	}
}

// TestHeadSince: when the head became this pull request's head, by its
// timeline alone, and what a comment at a given time is then bound to.
func TestHeadSince(t *testing.T) {
	const a, b, x = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccccccccccccccccccccccc"
	commit := func(sha string) *github.Timeline {
		return &github.Timeline{Event: github.String("committed"), SHA: github.String(sha)}
	}
	force := func(sha, hhmm string) *github.Timeline {
		return &github.Timeline{Event: github.String("head_ref_force_pushed"), CommitID: github.String(sha), CreatedAt: &github.Timestamp{Time: evAt(hhmm)}}
	}
	tests := []struct {
		name     string
		timeline []*github.Timeline
		head     string
		// comment is when a comment was written, bound whether it is
		// then bound to head.
		comment string
		// pushed is what deliveries said of head: "" none come (the
		// Action), "none" none named it (the App after a restart), else
		// when GitHub said head became this pull request's head.
		pushed string
		bound  bool
		why    string
	}{
		{name: "the only commit since opening", timeline: []*github.Timeline{commit(a)}, head: a, comment: "09:00", bound: true},
		// The attack of issue 13: B approved, then force-pushed to X,
		// which another pull request had pushed (and made check
		// suites for) long before.
		{name: "force-pushed to an existing commit after the approval", head: x, comment: "10:00",
			timeline: []*github.Timeline{commit(b), force(x, "10:05"), commit(x)}},
		{name: "a comment after the force-push", head: x, comment: "10:06", bound: true,
			timeline: []*github.Timeline{commit(b), force(x, "10:05"), commit(x)}},
		// Approved on b, then force-pushed back to a, its old head.
		{name: "force-pushed back to an old head", head: a, comment: "10:02",
			timeline: []*github.Timeline{commit(a), commit(b), force(a, "10:05")}},
		// Head x, then z, then x again: the latest force-push to x counts.
		{name: "force-pushed away and back", head: x, comment: "10:04",
			timeline: []*github.Timeline{commit(b), force(x, "10:01"), force(a, "10:03"), force(x, "10:05")}},
		// The timeline lists events by its own order; GitHub's clock
		// decides which force-push is the latest.
		{name: "the latest force-push by time", head: x, comment: "10:04",
			timeline: []*github.Timeline{force(x, "10:05"), force(a, "10:03")}},
		{name: "pushed after a force-push", head: x, comment: "11:00", why: "was pushed after a force-push",
			timeline: []*github.Timeline{commit(b), force(a, "10:01"), commit(x)}},
		// A fast-forward to a commit that existed before the approval
		// looks like any other push: its time is unknown.
		{name: "pushed after opening", head: x, comment: "11:00", why: "was pushed after the pull request was opened",
			timeline: []*github.Timeline{commit(b), commit(x)}},
		// What the App's push deliveries add: an ordinary push's time.
		{name: "a comment after an ordinary push (App)", head: x, comment: "10:06", pushed: "10:05", bound: true,
			timeline: []*github.Timeline{commit(b), commit(x)}},
		{name: "a comment before an ordinary push (App)", head: x, comment: "10:04", pushed: "10:05",
			timeline: []*github.Timeline{commit(b), commit(x)}},
		{name: "a comment in the push's own second (App)", head: x, comment: "10:05", pushed: "10:05",
			timeline: []*github.Timeline{commit(b), commit(x)}},
		{name: "an ordinary push after a force-push (App)", head: x, comment: "11:00", pushed: "10:30", bound: true,
			timeline: []*github.Timeline{commit(b), force(a, "10:01"), commit(x)}},
		// A force-push after the delivered push is the latest head
		// change: back to head, it dates head; elsewhere, head came
		// back by a push the App was not told of.
		{name: "force-pushed back to head after its delivery (App)", head: x, comment: "10:20", pushed: "10:05",
			timeline: []*github.Timeline{commit(b), commit(x), force(a, "10:10"), force(x, "10:30")}},
		{name: "a comment after a force-push back to head (App)", head: x, comment: "10:31", pushed: "10:05", bound: true,
			timeline: []*github.Timeline{commit(b), commit(x), force(a, "10:10"), force(x, "10:30")}},
		{name: "force-pushed away after its delivery (App)", head: x, comment: "11:00", pushed: "10:05", why: "no push delivery for it has reached the App",
			timeline: []*github.Timeline{commit(b), commit(x), force(a, "10:10"), commit(x)}},
		{name: "a push delivery later than the force-push to head (App)", head: x, comment: "10:20", pushed: "10:30",
			timeline: []*github.Timeline{commit(b), force(x, "10:10")}},
		{name: "no delivery since a restart (App)", head: x, comment: "11:00", pushed: "none", why: "no push delivery for it has reached the App since it started",
			timeline: []*github.Timeline{commit(b), commit(x)}},
		{name: "no deliveries at all (Action)", head: x, comment: "11:00", why: "the Action is told of no pushes",
			timeline: []*github.Timeline{commit(b), commit(x)}},
		{name: "not in the timeline", head: x, comment: "11:00", why: "is not in the pull request's timeline",
			timeline: []*github.Timeline{commit(b)}},
		{name: "an empty timeline", head: x, comment: "11:00", why: "is not in the pull request's timeline"},
		{name: "no head", head: "", comment: "11:00", why: "head commit is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pushed *time.Time
			switch tt.pushed {
			case "":
			case "none":
				pushed = new(time.Time)
			default:
				at := evAt(tt.pushed)
				pushed = &at
			}
			since, ok, why := headSince(tt.timeline, tt.head, pushed)
			bound := ok && evAt(tt.comment).After(since)
			if bound != tt.bound {
				t.Errorf("a comment at %s bound = %v, want %v (since %v, ok %v, %q)", tt.comment, bound, tt.bound, since, ok, why)
			}
			if tt.why != "" && !strings.Contains(why, tt.why) {
				t.Errorf("why = %q, want it to say %q", why, tt.why)
			}
		})
	}
}

func TestEventsErrors(t *testing.T) {
	tests := []struct {
		name, drop, want string
	}{
		{"timeline", "/repos/o/r/issues/7/timeline", "list the timeline of o/r#7"},
		{"reviews", "/repos/o/r/pulls/7/reviews", "list the reviews of o/r#7"},
		{"comments", "/repos/o/r/issues/7/comments", "list the comments of o/r#7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages := map[string]map[string]string{}
			for k, v := range eventPages {
				if k != tt.drop {
					pages[k] = v
				}
			}
			c, _ := eventServer(t, pages)
			_, err := Events(context.Background(), c, "o", "r", 7, evHead, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "404") {
				t.Errorf("err = %v, want it to say %q and 404", err, tt.want)
			}
		})
	}
}

func evLines(events []owners.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %+v\n", e)
	}
	return b.String()
}

// heads is a HeadLog: pull request number and head to when a delivery
// said it became the head.
type heads map[string]time.Time

func (h heads) HeadSince(number int, sha string) (time.Time, bool) {
	at, ok := h[strconv.Itoa(number)+"/"+sha]
	return at, ok
}

// TestEventsHeads: after an ordinary push only a delivery for this pull
// request and this very head dates it, and only comments after it count.
func TestEventsHeads(t *testing.T) {
	pages := map[string]map[string]string{}
	for k, v := range eventPages {
		pages[k] = v
	}
	// evOld, then evHead by an ordinary push: no time in the timeline.
	pages["/repos/o/r/issues/7/timeline"] = map[string]string{"": `[` + tlCommit(evOld, "2024-05-01T08:00:00Z") + `,` + tlCommit(evHead, "2024-05-01T08:01:00Z") + `]`}
	tests := []struct {
		name  string
		heads HeadLog
		want  string // the users whose comments are bound to evHead
		why   string // the reason of the unbound ones
	}{
		{name: "the push delivered", heads: heads{"7/" + evHead: evAt("10:00")},
			want: "[bob carol catalogbot[bot] helper[bot] gina hank]", why: "before the head 111111111111 became this pull request's head"},
		{name: "another pull request's push of the head", heads: heads{"8/" + evHead: evAt("10:00")},
			want: "[]", why: "no push delivery for it has reached the App"},
		{name: "a push of another head", heads: heads{"7/" + evOld: evAt("10:00")},
			want: "[]", why: "no push delivery for it has reached the App"},
		{name: "no deliveries (Action)", want: "[]", why: "the Action is told of no pushes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := eventServer(t, pages)
			got, err := Events(context.Background(), c, "o", "r", 7, evHead, nil, tt.heads)
			if err != nil {
				t.Fatal(err)
			}
			var bound []string
			for _, e := range got {
				switch {
				case e.ReviewState != "":
				case e.CommitSHA == evHead:
					bound = append(bound, e.User)
				case !strings.Contains(e.Unbound, tt.why):
					t.Errorf("%s's comment: unbound %q, want it to say %q", e.User, e.Unbound, tt.why)
				}
			}
			if fmt.Sprint(bound) != tt.want {
				t.Errorf("bound to the head: %v, want %s", bound, tt.want)
			}
		})
	}
}
