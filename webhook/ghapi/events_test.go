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
// by path and then page ("" is the first). The head was pushed at 10:00:00
// (the earliest check suite, which comes on the second page).
var eventPages = map[string]map[string]string{
	"/repos/o/r/commits/" + evHead + "/check-suites": {
		"": `{"total_count": 2, "check_suites": [
			{"id": 2, "head_sha": "` + evHead + `", "status": "completed", "created_at": "2024-05-01T10:07:00Z", "updated_at": "2024-05-01T10:09:00Z",
			 "app": {"id": 15368, "slug": "github-actions"}}]}`,
		"2": `{"total_count": 2, "check_suites": [
			{"id": 1, "head_sha": "` + evHead + `", "status": "completed", "created_at": "2024-05-01T10:00:00Z", "updated_at": "2024-05-01T10:02:00Z",
			 "app": {"id": 99, "slug": "catalogbot"}}]}`,
	},
	"/repos/o/r/pulls/7/reviews": {
		"": `[
			{"id": 80, "user": {"login": "dave", "id": 4, "type": "User"}, "body": "", "state": "APPROVED",
			 "commit_id": "` + evOld + `", "submitted_at": "2024-05-01T09:30:00Z", "author_association": "MEMBER"},
			{"id": 81, "user": {"login": "erin", "id": 5, "type": "User"}, "body": "LGTM", "state": "APPROVED",
			 "commit_id": "` + evHead + `", "submitted_at": "2024-05-01T10:20:00Z", "author_association": "MEMBER"},
			{"id": 82, "user": {"login": "frank", "id": 6, "type": "User"}, "body": "", "state": "PENDING",
			 "commit_id": "` + evHead + `", "author_association": "MEMBER"}
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
			 "created_at": "2024-05-01T10:41:00Z", "updated_at": "2024-05-01T10:41:00Z", "author_association": "NONE"}
		]`,
	},
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
	got, err := Events(context.Background(), c, "o", "r", 7, evHead)
	if err != nil {
		t.Fatal(err)
	}
	want := []owners.Event{
		// A review binds to the commit it names, even an old one.
		{User: "dave", ReviewState: "APPROVED", Time: evAt("09:30"), CommitSHA: evOld},
		// Posted before the head was pushed: it was about an earlier head.
		{User: "alice", Body: "/approve", Time: evAt("09:59"), CommitSHA: ""},
		// Posted after the push (found on the second page of suites).
		{User: "bob", Body: "/approve", Time: evAt("10:01"), CommitSHA: evHead},
		{User: "erin", Body: "LGTM", ReviewState: "APPROVED", Time: evAt("10:20"), CommitSHA: evHead},
		// Created before the push, edited after: it counts from the edit.
		{User: "carol", Body: "thanks\n/approve", Time: evAt("10:30"), CommitSHA: evHead},
		// Bots keep, or gain, their [bot] suffix.
		{User: "catalogbot[bot]", Body: "/approve", Time: evAt("10:40"), CommitSHA: evHead},
		{User: "helper[bot]", Body: "/approve", Time: evAt("10:41"), CommitSHA: evHead},
		// frank's pending review is not there: it was never submitted.
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events:\n%s\nwant:\n%s", evLines(got), evLines(want))
	}
	for _, p := range []string{
		"/repos/o/r/commits/" + evHead + "/check-suites?page=2",
		"/repos/o/r/issues/7/comments?page=2",
	} {
		if !slices.Contains(asked(), p) {
			t.Errorf("never asked for %s; asked %v", p, asked())
		}
	}

	// What the events mean for approvals: bots are dropped, and only the
	// approvals bound to the head count for it.
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
}

// TestEventsNoCheckSuite: without a check suite nobody can tell when the
// head arrived, so no comment is bound to it; reviews still are.
func TestEventsNoCheckSuite(t *testing.T) {
	pages := map[string]map[string]string{
		"/repos/o/r/commits/" + evHead + "/check-suites": {"": `{"total_count": 0, "check_suites": []}`},
		"/repos/o/r/pulls/7/reviews":                     eventPages["/repos/o/r/pulls/7/reviews"],
		"/repos/o/r/issues/7/comments":                   eventPages["/repos/o/r/issues/7/comments"],
	}
	c, _ := eventServer(t, pages)
	got, err := Events(context.Background(), c, "o", "r", 7, evHead)
	if err != nil {
		t.Fatal(err)
	}
	var reviews int
	for _, e := range got {
		switch {
		case e.ReviewState != "":
			reviews++
		case e.CommitSHA != "":
			t.Errorf("comment %+v bound to %s without a push time", e, e.CommitSHA)
		}
	}
	if reviews != 2 {
		t.Errorf("%d reviews, want 2", reviews)
	}
}

func TestEventsErrors(t *testing.T) {
	tests := []struct {
		name, drop, want string
	}{
		{"check suites", "/repos/o/r/commits/" + evHead + "/check-suites", "list the check suites of o/r@" + evHead},
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
			_, err := Events(context.Background(), c, "o", "r", 7, evHead)
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
