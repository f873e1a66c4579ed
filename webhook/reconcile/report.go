package reconcile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
	"github.com/catalogbot/catalogbot/webhook"
)

// Check run names.
const (
	// CheckRunName is the run that holds the verdict on a pull request's
	// head: one per head commit.
	CheckRunName = "catalogbot"
	// PublishCheckRunName is the run on a commit of the default branch
	// that says where its catalog image went.
	PublishCheckRunName = "catalogbot/publish"
)

// GitHub's limits on check run output.
const (
	// MaxSummary is the longest output.summary GitHub accepts.
	MaxSummary = 65535
	// AnnotationsPerRequest is the most annotations one create or update
	// may carry; more go in further updates, which GitHub appends.
	AnnotationsPerRequest = 50
	// MaxAnnotations bounds the annotations of one run: past a few
	// hundred nobody reads them, and each 50 costs a request. The summary
	// says how many were left out.
	MaxAnnotations = 500
	// maxAnnotationMessage is GitHub's limit on one annotation's message.
	maxAnnotationMessage = 64 << 10
)

// checkOutput is what a check run says.
type checkOutput struct {
	Conclusion checks.Conclusion
	Title      string
	Summary    string
	// Findings with a file and a line become annotations.
	Findings []checks.Finding
	// Text is the run's output.text: for the catalogbot run of an open
	// pull request, why it is not merged (review.BlockedText).
	Text string
}

// outputOf is the catalogbot check run of an outcome, as the review core
// renders it.
func outputOf(o *review.Outcome) checkOutput {
	conclusion, title := o.Verdict()
	return checkOutput{Conclusion: conclusion, Title: title, Summary: o.Summary(), Findings: o.Findings()}
}

// invalidPolicyOutput is a run on a commit whose policy file does not
// parse: nothing can be done under rules nobody wrote.
func invalidPolicyOutput(findings []checks.Finding, c review.Context) checkOutput {
	return checkOutput{Conclusion: checks.Failure, Title: "The repository policy is invalid", Summary: review.InvalidPolicy(findings, c), Findings: findings}
}

// annotations maps findings to check run annotations: the review core's
// list (one order, one dedupe key, one severity mapping), less those
// without a file and a line, which a check run cannot place, at most
// MaxAnnotations. left is how many were dropped for the cap.
func annotations(findings []checks.Finding) (anns []*github.CheckRunAnnotation, left int) {
	for _, a := range checks.Annotations(findings) {
		if a.File == "" || a.Line <= 0 {
			continue
		}
		if len(anns) == MaxAnnotations {
			left++
			continue
		}
		level := a.Level
		if level == "error" {
			level = "failure" // the check run API's word for it
		}
		anns = append(anns, &github.CheckRunAnnotation{
			Path:            github.String(a.File),
			StartLine:       github.Int(a.Line),
			EndLine:         github.Int(a.Line),
			AnnotationLevel: github.String(level),
			Message:         github.String(checks.Truncate(a.Message, maxAnnotationMessage, checks.Bytes, "…")),
			Title:           github.String(a.Title),
		})
	}
	return anns, left
}

// capSummary keeps a summary within GitHub's limit, saying it was cut.
func capSummary(s string) string {
	return checks.Truncate(s, MaxSummary, checks.Bytes, "\n\n… (truncated: the full report is longer than a check run can hold)\n")
}

// externalID fingerprints a run's annotations. GitHub only ever appends
// annotations to a run, so a run whose annotations would change is
// replaced by a new one rather than updated; the fingerprint, kept in the
// run's external_id, says whether they would.
func externalID(anns []*github.CheckRunAnnotation) string {
	data, _ := json.Marshal(anns)
	sum := sha256.Sum256(data)
	return "catalogbot:" + hex.EncodeToString(sum[:8])
}

// findCheckRun returns the newest run named runName that this App made on
// sha, or nil.
func (a *App) findCheckRun(ctx context.Context, gh *github.Client, owner, repo, sha, runName string) (*github.CheckRun, error) {
	opts := &github.ListCheckRunsOptions{CheckName: github.String(runName), AppID: github.Int64(a.gh.AppID()), ListOptions: github.ListOptions{PerPage: 100}}
	var found *github.CheckRun
	for {
		res, resp, err := gh.Checks.ListCheckRunsForRef(ctx, owner, repo, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("list the %s check runs of %s/%s@%s: %w", runName, owner, repo, sha, err)
		}
		for _, run := range res.CheckRuns {
			// The listing is already asked for this App's runs; a run
			// that does not say it is this App's is still not taken
			// for it: any App can name a run catalogbot.
			if run.GetName() != runName || run.GetApp().GetID() != a.gh.AppID() {
				continue
			}
			if found == nil || run.GetID() > found.GetID() {
				found = run
			}
		}
		if resp.NextPage == 0 {
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

// The output of a run whose check is under way.
const (
	checkingTitle   = "Checking"
	checkingSummary = "The check of this commit is under way."
)

// begin makes sure the catalogbot run of sha exists, in progress if it is
// new, so the pull request shows that a check is under way.
func (r *prRun) begin(ctx context.Context, sha string) error {
	run, err := r.a.findCheckRun(ctx, r.gh, r.owner, r.name, sha, CheckRunName)
	if err != nil {
		return r.a.fail("report", err)
	}
	if run == nil {
		// Until the check concludes, the run says that it is under way,
		// and so why the pull request is not merged yet.
		text := review.BlockedText([]policy.Block{{Code: policy.CodeChecking, Text: "the check of " + change.ShortSHA(sha) + " is under way"}})
		run, _, err = r.gh.Checks.CreateCheckRun(ctx, r.owner, r.name, github.CreateCheckRunOptions{
			Name: CheckRunName, HeadSHA: sha, Status: github.String("in_progress"),
			Output: &github.CheckRunOutput{Title: github.String(checkingTitle), Summary: github.String(checkingSummary), Text: github.String(text)},
		})
		if err != nil {
			return r.a.fail("report", fmt.Errorf("create the %s check run of %s/%s@%s: %w", CheckRunName, r.owner, r.name, sha, err))
		}
	}
	r.a.learnSlug(run)
	r.head, r.said = sha, run.GetOutput().GetText()
	return nil
}

// report writes out as the catalogbot check run of sha. A re-requested
// check (check_run or check_suite event) is always rewritten; otherwise a
// run that already says exactly this is left alone.
func (r *prRun) report(ctx context.Context, sha string, out checkOutput) error {
	out.Text = review.BlockedText(r.blocks)
	if err := r.a.writeCheckRun(ctx, r.gh, r.owner, r.name, sha, CheckRunName, out, r.rerequest); err != nil {
		return r.a.fail("report", err)
	}
	r.head, r.said = sha, out.Text
	return nil
}

// explain records why the pull request waits once the job is done, in the
// blocked metric and in the text of its catalogbot run when that says
// otherwise: what the merge found after the check was reported (a queue,
// a refusal, GitHub's mergeability), or that the job failed (err) and the
// queue tries again by its class. Nothing recorded is unexplained, which the run
// and the metric then say: it is a bug. ok is false when the run could not
// be made to say it.
func (r *prRun) explain(ctx context.Context, err error) (ok bool) {
	a := r.a
	if r.closed {
		a.metrics.Blocked.Done(r.job.Key.Repo, r.number)
		r.sayClosed(ctx)
		return true
	}
	if err != nil {
		r.blocks = []policy.Block{{Code: policy.CodeRetrying, Text: failedText(err, a.now())}}
	}
	a.metrics.Blocked.Set(r.job.Key.Repo, r.number, policy.CodesOf(policy.OrUnexplained(r.blocks)))
	text := review.BlockedText(r.blocks)
	if r.head == "" || text == r.said {
		return true
	}
	if err := a.sayBlocked(ctx, r.gh, r.owner, r.name, r.head, text); err != nil {
		// GitHub may still be failing; the next reconcile says it.
		r.log.Warn("could not say why the pull request waits", "err", a.fail("report", err))
		return false
	}
	r.said = text
	return true
}

// sayClosed makes the run of the head this job checked stop saying why
// the pull request waits, once it is merged or closed: a merged pull
// request whose run still read "blocked-by: merging" would look stuck.
// The pull request is read again to tell a merge from a close, whoever
// made it; a failure is only logged (the pull request waits for nothing).
func (r *prRun) sayClosed(ctx context.Context) {
	if r.head == "" || r.said == "" {
		return
	}
	if _, blocked := review.ParseBlockedBy(r.said); !blocked {
		return
	}
	pr, _, err := r.gh.PullRequests.Get(ctx, r.owner, r.name, r.number)
	if err != nil {
		r.log.Warn("could not read the closed pull request to say so in its run", "err", r.a.fail("report", err))
		return
	}
	text := "Closed without merging: nothing waits.\n"
	if pr.GetMerged() {
		text = fmt.Sprintf("Merged as %s: nothing waits.\n", change.ShortSHA(pr.GetMergeCommitSHA()))
	}
	if err := r.a.sayBlocked(ctx, r.gh, r.owner, r.name, r.head, text); err != nil {
		r.log.Warn("could not say in its run that the pull request is closed", "err", r.a.fail("report", err))
		return
	}
	r.said = text
}

// failedText says why a job failed and what follows, by the failure's
// class (webhook.RetryClass), as the queue acts on it.
func failedText(err error, now time.Time) string {
	at := now.Format(time.RFC3339)
	class, _ := webhook.Classify(err, now)
	switch class {
	case webhook.Permanent:
		what := "the request was refused"
		if code := statusOf(err); code != 0 {
			what = fmt.Sprintf("GitHub refused a request with HTTP %d", code)
		}
		return fmt.Sprintf("the last attempt failed at %s and is not tried again (%s); a push, a comment, /recheck or the next resync runs it again", at, what)
	case webhook.Unauthorized:
		return fmt.Sprintf("the last attempt failed at %s (GitHub refused the installation token; a new one is minted); it is tried again shortly", at)
	}
	return fmt.Sprintf("the last attempt failed at %s (GitHub or git answered with an error); it is tried again shortly, with backoff", at)
}

// sayBlocked sets the text of the catalogbot run of sha, leaving the rest
// of it (status, conclusion, title, summary, annotations) as it is.
func (a *App) sayBlocked(ctx context.Context, gh *github.Client, owner, repo, sha, text string) error {
	run, err := a.findCheckRun(ctx, gh, owner, repo, sha, CheckRunName)
	if err != nil || run == nil || run.GetOutput().GetText() == text {
		return err
	}
	out := run.GetOutput()
	// GitHub requires a title and a summary beside the text.
	title, summary := cmp.Or(out.GetTitle(), checkingTitle), cmp.Or(out.GetSummary(), checkingSummary)
	_, _, err = gh.Checks.UpdateCheckRun(ctx, owner, repo, run.GetID(), github.UpdateCheckRunOptions{
		Name:   CheckRunName,
		Output: &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary), Text: github.String(text)},
	})
	if err != nil {
		return fmt.Errorf("update the text of the %s check run %d of %s/%s@%s: %w", CheckRunName, run.GetID(), owner, repo, sha, err)
	}
	return nil
}

// rerequested says whether the job is a re-request of this App's check:
// a check_run or check_suite delivery whose run or suite this App made.
// GitHub sends such deliveries only to the App that made the run, but
// whoever can make the delivery look otherwise gets no forced rewrite of
// catalogbot's run from another App's run. The pull request is still
// reconciled as for any event: the queue may have folded another
// delivery for it into this job.
func (r *prRun) rerequested() bool {
	if r.job.Event != "check_run" && r.job.Event != "check_suite" {
		return false
	}
	if len(r.job.Payload) == 0 {
		return true // a job made here, not from a delivery
	}
	var p struct {
		CheckRun   *struct{ App *struct{ ID int64 } } `json:"check_run"`
		CheckSuite *struct{ App *struct{ ID int64 } } `json:"check_suite"`
	}
	if err := json.Unmarshal(r.job.Payload, &p); err != nil {
		return false
	}
	var id int64
	switch {
	case r.job.Event == "check_run" && p.CheckRun != nil && p.CheckRun.App != nil:
		id = p.CheckRun.App.ID
	case r.job.Event == "check_suite" && p.CheckSuite != nil && p.CheckSuite.App != nil:
		id = p.CheckSuite.App.ID
	}
	if id == 0 || id != r.a.gh.AppID() {
		r.log.Info("a re-request of another App's check run; not rewriting catalogbot's", "event", r.job.Event, "app_id", id)
		return false
	}
	return true
}

// writeCheckRun makes the run runName of sha say out: the one run this App
// has there, updated in place, or a new one when there is none or when its
// annotations would have to change. Annotations go 50 per request. A
// pending out is a run in progress, with no conclusion: GitHub counts a
// neutral run as passing, and a run that could not judge must not pass.
func (a *App) writeCheckRun(ctx context.Context, gh *github.Client, owner, repo, sha, runName string, out checkOutput, force bool) error {
	anns, left := annotations(out.Findings)
	summary := out.Summary
	if left > 0 {
		summary = fmt.Sprintf("%s\n\n%d more findings are not shown as annotations.\n", strings.TrimRight(summary, "\n"), left)
	}
	// The review core's text is spelled out already; the publish run's
	// quotes the errors of registries a catalog.yaml names. Visible
	// changes nothing that is spelled out.
	summary = capSummary(checks.Visible(summary))
	title := checks.Truncate(checks.VisibleLine(out.Title), 255, checks.Bytes, "…")
	ext := externalID(anns)

	run, err := a.findCheckRun(ctx, gh, owner, repo, sha, runName)
	if err != nil {
		return err
	}
	if run != nil && run.GetExternalID() != "" && run.GetExternalID() != ext && run.GetOutput().GetAnnotationsCount() > 0 {
		// Its annotations cannot be taken back: start a fresh run,
		// which GitHub shows in place of the old one.
		run = nil
	}
	status, conclusion := "completed", string(out.Conclusion)
	if out.Conclusion == checks.Pending {
		status, conclusion = "in_progress", ""
		if run.GetStatus() == "completed" {
			// A verdict given stays given; a fresh run in progress
			// takes its place.
			run = nil
		}
	}
	text := capSummary(out.Text)
	if run != nil && !force && run.GetStatus() == status && run.GetConclusion() == conclusion &&
		run.GetExternalID() == ext && run.GetOutput().GetTitle() == title && run.GetOutput().GetSummary() == summary &&
		run.GetOutput().GetText() == text {
		return nil
	}
	if run != nil && run.GetExternalID() == ext && run.GetOutput().GetAnnotationsCount() > 0 {
		// The run has these annotations already, and GitHub would add
		// them again: only its other output changes.
		anns = nil
	}
	first := anns[:min(len(anns), AnnotationsPerRequest)]
	output := &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary), Annotations: first}
	if text != "" {
		output.Text = github.String(text)
	}
	var concl *string
	var completed *github.Timestamp
	if status == "completed" {
		concl, completed = github.String(conclusion), &github.Timestamp{Time: a.now()}
	}
	if run == nil {
		run, _, err = gh.Checks.CreateCheckRun(ctx, owner, repo, github.CreateCheckRunOptions{
			Name: runName, HeadSHA: sha, ExternalID: github.String(ext), Status: github.String(status),
			Conclusion: concl, CompletedAt: completed, Output: output,
		})
		if err != nil {
			return fmt.Errorf("create the %s check run of %s/%s@%s: %w", runName, owner, repo, sha, err)
		}
	} else {
		_, _, err = gh.Checks.UpdateCheckRun(ctx, owner, repo, run.GetID(), github.UpdateCheckRunOptions{
			Name: runName, ExternalID: github.String(ext), Status: github.String(status),
			Conclusion: concl, CompletedAt: completed, Output: output,
		})
		if err != nil {
			return fmt.Errorf("update the %s check run %d of %s/%s@%s: %w", runName, run.GetID(), owner, repo, sha, err)
		}
	}
	for i := len(first); i < len(anns); i += AnnotationsPerRequest {
		batch := anns[i:min(i+AnnotationsPerRequest, len(anns))]
		_, _, err = gh.Checks.UpdateCheckRun(ctx, owner, repo, run.GetID(), github.UpdateCheckRunOptions{
			Name:   runName,
			Output: &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary), Text: output.Text, Annotations: batch},
		})
		if err != nil {
			return fmt.Errorf("annotate the %s check run %d of %s/%s@%s: %w", runName, run.GetID(), owner, repo, sha, err)
		}
	}
	return nil
}
