package ghapi

import (
	"io"
	"strconv"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review"
)

// Report writes a review for GitHub Actions: the annotations (as workflow
// commands) and the decision on stdout, the Markdown job summary appended
// to $GITHUB_STEP_SUMMARY and the step outputs appended to $GITHUB_OUTPUT.
// repo is the checkout's directory, which annotations are relative to.
// Everything it writes is rendered by the review core; this only puts it
// where a workflow reads it.
func (a *Actions) Report(stdout io.Writer, out *review.Outcome, d policy.Decision, repo string) error {
	dir := a.RepoDir(repo)
	if err := checks.WriteGitHubAnnotations(stdout, out.Findings(), checks.AnnotationOptions{Dir: dir}); err != nil {
		return err
	}
	if err := out.WriteText(stdout, d, false); err != nil {
		return err
	}
	if a.SummaryFile != "" {
		err := appendStepFile(a.SummaryFile, "$GITHUB_STEP_SUMMARY", func(w io.Writer) error { return out.JobSummary(w, d, dir) })
		if err != nil {
			return err
		}
	}
	if a.OutputFile == "" {
		return nil
	}
	v := out.Outputs(d)
	var outputs []checks.GitHubOutput
	// A check that could not judge says nothing of valid: unset, so that
	// a workflow testing for either value takes neither branch.
	if v.Judged {
		outputs = append(outputs, checks.GitHubOutput{Name: "valid", Value: strconv.FormatBool(v.Valid)})
	}
	outputs = append(outputs,
		checks.GitHubOutput{Name: "approved", Value: strconv.FormatBool(v.Approved)},
		checks.GitHubOutput{Name: "mergeable", Value: strconv.FormatBool(v.Mergeable)})
	// mergeable leaves out whether the policy lets catalogbot merge: a
	// workflow that merges reads these two.
	if out.Policy != nil {
		outputs = append(outputs,
			checks.GitHubOutput{Name: "merge-enabled", Value: strconv.FormatBool(out.Policy.Merge.Enabled)},
			checks.GitHubOutput{Name: "merge-method", Value: out.Policy.Merge.Method})
	}
	return appendStepFile(a.OutputFile, "$GITHUB_OUTPUT", func(w io.Writer) error { return checks.WriteGitHubOutputs(w, outputs) })
}
