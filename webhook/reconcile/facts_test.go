package reconcile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/publisher/sign"
	"github.com/catalogbot/catalogbot/webhook"
	"github.com/catalogbot/catalogbot/webhook/durable"
)

// TestFactsOutliveRestart: what deliveries told one App (a head's push
// time, a comment's editor, a pending check's retry) is known to the App
// that starts next on the same state, so that an approval after an
// ordinary push still counts, an edited comment keeps its verdict and a
// pending pull request keeps its retry time.
func TestFactsOutliveRestart(t *testing.T) {
	const head = "cccccccccccccccccccccccccccccccccccccccc"
	const mergeSHA = "dddddddddddddddddddddddddddddddddddddddd"
	pushed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	edited := pushed.Add(time.Minute)
	retry := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	dir := t.TempDir()
	open := func() *durable.State {
		s, err := durable.Open(context.Background(), durable.Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	s := open()
	first := newEnvWith(t, catalogRepo(""), func(o *AppOptions) { o.Facts = s.Facts() })
	key := webhook.Key{Repo: "acme/catalog", PR: 1, Kind: webhook.KindPR}
	first.app.Observe(webhook.Job{Key: key, Event: "pull_request", Action: "synchronize",
		Payload: []byte(fmt.Sprintf(`{"number": 1, "pull_request": {"number": 1, "head": {"sha": %q}, "updated_at": %q}}`, head, pushed.Format(time.RFC3339)))})
	first.app.Observe(webhook.Job{Key: key, Event: "issue_comment", Action: "edited",
		Payload: []byte(fmt.Sprintf(`{"comment": {"id": 42, "updated_at": %q}, "sender": {"login": "mallory"}}`, edited.Format(time.RFC3339)))})
	first.app.waiting.update(prKey{"acme/catalog", 1}, maxWaiting, func(waiting, bool) (waiting, bool) {
		return waiting{head: head, tries: 1, next: retry}, true
	})
	merged := review.MergeRecord{
		Packages:    []sign.Package{{Name: "foo"}},
		PullRequest: sign.PullRequest{Number: 1, Head: head, Author: "alice", Approvers: []string{"bob"}},
	}
	first.app.merges.update("acme/catalog@"+mergeSHA, maxMerges, func(review.MergeRecord, bool) (review.MergeRecord, bool) { return merged, true })
	first.app.published.update("acme/catalog", maxMerges, func(string, bool) (string, bool) { return head, true })
	s.Close()

	s = open()
	defer s.Close()
	next := newEnvWith(t, catalogRepo(""), func(o *AppOptions) { o.Facts = s.Facts() })
	if at, ok := next.app.heads.forRepo("acme/catalog").HeadSince(1, head); !ok || !at.Equal(pushed) {
		t.Errorf("after a restart the push time is %v, %v; want %v", at, ok, pushed)
	}
	if by, ok := next.app.edits.forRepo("acme/catalog").CommentEditor(42, edited); !ok || by != "mallory" {
		t.Errorf("after a restart the comment's editor is %q, %v; want mallory", by, ok)
	}
	pr := &github.PullRequest{Number: github.Int(1), Head: &github.PullRequestBranch{SHA: github.String(head)}}
	if !next.app.isWaiting("acme/catalog", pr) {
		t.Error("after a restart the pending pull request no longer waits for its retry")
	}
	w, ok := next.app.waiting.get(prKey{"acme/catalog", 1})
	if !ok || !w.next.Equal(retry) || w.tries != 1 {
		t.Errorf("after a restart the retry is %+v, %v; want try 1 at %v", w, ok, retry)
	}
	// The approval attestation of the next publication lists the merges
	// since the last: a restart between the two must not lose them.
	if got, ok := next.app.merges.get("acme/catalog@" + mergeSHA); !ok || !reflect.DeepEqual(got, merged) {
		t.Errorf("after a restart the merge record is %+v, %v; want %+v", got, ok, merged)
	}
	if got, ok := next.app.published.get("acme/catalog"); !ok || got != head {
		t.Errorf("after a restart the last published commit is %q, %v; want %s", got, ok, head)
	}
}
