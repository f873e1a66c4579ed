package ghapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-github/v60/github"
)

// TestEnqueuePullRequestAnswers: what GitHub's GraphQL answers to
// enqueuePullRequest becomes an entry or an error callers can tell apart.
func TestEnqueuePullRequestAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   error // nil: an entry
	}{
		{"queued", `{"data":{"enqueuePullRequest":{"mergeQueueEntry":{"id":"MQE_1","position":2,"state":"QUEUED"}}}}`, nil},
		{"head moved", `{"data":{"enqueuePullRequest":null},"errors":[{"type":"UNPROCESSABLE","message":"Expected head sha did not match the pull request's head"}]}`, ErrQueueHeadMoved},
		{"already queued", `{"data":{"enqueuePullRequest":null},"errors":[{"type":"UNPROCESSABLE","message":"Pull request is already in the merge queue"}]}`, ErrAlreadyQueued},
		{"other refusal", `{"data":{"enqueuePullRequest":null},"errors":[{"type":"FORBIDDEN","message":"Resource not accessible by integration"}]}`, errOther},
		{"no entry", `{"data":{"enqueuePullRequest":{"mergeQueueEntry":null}}}`, errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				Query     string
				Variables map[string]string
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/graphql" || r.Method != http.MethodPost {
					http.NotFound(w, r)
					return
				}
				_ = json.NewDecoder(r.Body).Decode(&got)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			gh := github.NewClient(nil)
			gh.BaseURL, _ = url.Parse(srv.URL + "/")
			entry, err := EnqueuePullRequest(context.Background(), gh, "PR_1", "abc123")
			switch {
			case tt.want == nil && (err != nil || entry.Position != 2 || entry.ID != "MQE_1"):
				t.Errorf("EnqueuePullRequest = %+v, %v; want position 2", entry, err)
			case tt.want == errOther && (err == nil || errors.Is(err, ErrQueueHeadMoved) || errors.Is(err, ErrAlreadyQueued)):
				t.Errorf("EnqueuePullRequest = %v; want an error of its own", err)
			case tt.want != nil && tt.want != errOther && !errors.Is(err, tt.want):
				t.Errorf("EnqueuePullRequest = %v; want %v", err, tt.want)
			}
			if got.Variables["pullRequestId"] != "PR_1" || got.Variables["expectedHeadOid"] != "abc123" {
				t.Errorf("variables sent = %v, want the pull request and the checked head", got.Variables)
			}
		})
	}
}

var errOther = errors.New("another error")

// TestDequeueAnswers: the entry query and the dequeue mutation send the
// pull request's node id, read an entry or none, and turn GitHub's
// refusals into errors.
func TestDequeueAnswers(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		queued  bool // MergeQueueEntryOf finds an entry
		wantErr bool
	}{
		{"queued", `{"data":{"node":{"mergeQueueEntry":{"id":"MQE_1","position":1,"state":"QUEUED"}},"dequeuePullRequest":{"mergeQueueEntry":{"id":"MQE_1"}}}}`, true, false},
		{"not queued", `{"data":{"node":{"mergeQueueEntry":null},"dequeuePullRequest":null}}`, false, false},
		{"refused", `{"data":null,"errors":[{"type":"FORBIDDEN","message":"Resource not accessible by integration"}]}`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent []map[string]string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var got struct{ Variables map[string]string }
				_ = json.NewDecoder(r.Body).Decode(&got)
				sent = append(sent, got.Variables)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tt.answer))
			}))
			defer srv.Close()
			gh := github.NewClient(nil)
			gh.BaseURL, _ = url.Parse(srv.URL + "/")
			entry, err := MergeQueueEntryOf(context.Background(), gh, "PR_1")
			if (err != nil) != tt.wantErr || (entry != nil) != tt.queued {
				t.Errorf("MergeQueueEntryOf = %+v, %v; want queued %v, error %v", entry, err, tt.queued, tt.wantErr)
			}
			if err := DequeuePullRequest(context.Background(), gh, "PR_1"); (err != nil) != tt.wantErr {
				t.Errorf("DequeuePullRequest = %v; want error %v", err, tt.wantErr)
			}
			for _, v := range sent {
				if v["id"] != "PR_1" {
					t.Errorf("variables sent = %v, want the pull request's node id", v)
				}
			}
		})
	}
}
