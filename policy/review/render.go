package review

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks"
	"github.com/catalogbot/catalogbot/checks/change"
	"github.com/catalogbot/catalogbot/checks/fbc/graph"
	"github.com/catalogbot/catalogbot/owners"
	"github.com/catalogbot/catalogbot/policy"
	"github.com/catalogbot/catalogbot/policy/review/pipeline"
)

// This file is the one place an Outcome becomes text. The App maps what it
// returns to a check run and a comment, the Action to workflow commands, a
// job summary and step outputs, the command line to a terminal; none of
// them words anything of its own. The text quotes pull request data (paths,
// package names, logins, comment text), so each function returns it with
// what a reader would not see spelled out (checks.Visible), and quotes
// names in code spans that they cannot close (checks.Code).

// Verdict is the conclusion and title of the catalogbot check run: failure
// when any check failed (or the policy is invalid); pending when none
// failed but one could not judge, which the App shows as a run still in
// progress and never as neutral, since GitHub counts neutral as passing;
// neutral when the rest succeeded and some had nothing to judge; success
// only when every check succeeded.
func (o *Outcome) Verdict() (checks.Conclusion, string) {
	if !o.Valid() {
		return checks.Failure, "The repository policy is invalid"
	}
	var failed, pending, neutral []string
	for _, res := range o.Report.Results {
		switch res.Conclusion {
		case checks.Success:
		case checks.Pending:
			pending = append(pending, res.Name)
		case checks.Neutral:
			neutral = append(neutral, res.Name)
		default:
			failed = append(failed, res.Name)
		}
	}
	switch {
	case len(o.Report.Results) == 0:
		return checks.Neutral, "No check ran"
	case len(failed) > 0:
		title := "Failed: " + strings.Join(failed, ", ")
		if len(pending) > 0 {
			title += "; could not judge: " + strings.Join(pending, ", ")
		}
		return checks.Failure, title
	case len(pending) > 0:
		return checks.Pending, "Could not judge: " + strings.Join(pending, ", ")
	case len(neutral) > 0:
		return checks.Neutral, "Not run: " + strings.Join(neutral, ", ")
	}
	return checks.Success, "All checks passed"
}

// Waits are what the checks that could not judge wait for, merged.
func (o *Outcome) Waits() []checks.Wait {
	var out []checks.Wait
	for _, res := range o.Report.Results {
		if res.Conclusion != checks.Pending {
			continue
		}
		for _, w := range res.Waits {
			out = checks.AddWait(out, w)
		}
	}
	return out
}

// waiting says whether the verdict is pending, and what it waits for in a
// sentence fragment ("" when the checks did not say).
func (o *Outcome) waiting() (bool, string) {
	if c, _ := o.Verdict(); c != checks.Pending {
		return false, ""
	}
	return true, checks.WaitList(o.Waits())
}

// CouldNotJudge says, when a check could not judge and none failed, what
// the verdict waits for in one sentence; "" otherwise.
func (o *Outcome) CouldNotJudge() string {
	pending, what := o.waiting()
	switch {
	case !pending:
		return ""
	case what == "":
		return "Could not judge yet."
	}
	return "Could not judge yet: " + what + "."
}

// again says what to do about a verdict that is pending: wait for the
// registries, or, when a git object was missing, fetch it first, since no
// later run reads an object the repository does not have.
func (o *Outcome) again() string {
	for _, w := range o.Waits() {
		if w.Class == checks.WaitUnreadable {
			return "Fetch the git objects it could not read (the checks say how) and run the check again."
		}
	}
	return "Run the check again later."
}

// Retry is what the App knows of its tries of a pending verdict.
type Retry struct {
	// Try is the try that could not judge (1 for the first) of Tries in
	// all.
	Try, Tries int
	// Next is when the next try starts, In from now; zero when Try is
	// the last.
	Next time.Time
	In   time.Duration
}

// PendingRun is the check run of a pending verdict after try r: still
// pending while tries are left, with what it waits for and when it tries
// again, and failure after the last try, since what could not be checked
// is not cleared. It never concludes neutral or success.
func (o *Outcome) PendingRun(r Retry) (c checks.Conclusion, title, summary string) {
	_, title = o.Verdict()
	var b strings.Builder
	b.WriteString(o.CouldNotJudge())
	if r.Try < r.Tries {
		// The title is the verdict's, as every front end shows it; the
		// tries are the App's own, and go in the summary.
		c = checks.Pending
		fmt.Fprintf(&b, " Try %d of %d: the check stays in progress and tries again in %s (at %s). After try %d it fails rather than pass what could not be checked.",
			r.Try, r.Tries, r.In.Round(time.Second), r.Next.UTC().Format("15:04:05 MST"), r.Tries)
	} else {
		c = checks.Failure
		title = fmt.Sprintf("%s after %s", title, checks.Count(r.Tries, "try", "tries"))
		fmt.Fprintf(&b, " It could not judge in %s, so it fails rather than pass what could not be checked. Re-run the check, or push, to try again.",
			checks.Count(r.Tries, "try", "tries"))
	}
	b.WriteString("\n\n")
	b.WriteString(o.Summary())
	return c, title, b.String()
}

// Findings are every finding of the outcome: the policy's when it is
// invalid, else every check's in the report's order.
func (o *Outcome) Findings() []checks.Finding {
	if !o.Valid() {
		return o.PolicyFindings
	}
	var out []checks.Finding
	for _, res := range o.Report.Results {
		out = append(out, res.Findings...)
	}
	return out
}

// Summary is the Markdown body of the check run.
func (o *Outcome) Summary() string {
	if !o.Valid() {
		return InvalidPolicy(o.PolicyFindings, ForCheck)
	}
	// A merge group says first that it is one: its files are the
	// group's, not one pull request's.
	var paras []string
	if o.Group {
		paras = append(paras, GroupNote)
	}
	if a := o.account(); a != "" {
		paras = append(paras, a)
	}
	if m := o.mergeNote(); m != "" && !o.Group {
		paras = append(paras, m)
	}
	return strings.Join(append(paras, o.Report.Markdown()), "\n\n")
}

// mergeNote says what the verdict was made on: the merge result, or the
// head alone because the change does not apply onto the base.
func (o *Outcome) mergeNote() string {
	m := o.Merge
	if m == nil {
		return ""
	}
	// A base given as a commit has no branch name to show.
	onto, branch := fmt.Sprintf("`%s` at `%s`", m.Branch, change.ShortSHA(m.Onto)), "`"+m.Branch+"`"
	if m.Branch == "" || strings.HasPrefix(m.Onto, m.Branch) {
		onto, branch = "`"+change.ShortSHA(m.Onto)+"`", "the base branch"
	}
	if len(m.Conflicts) > 0 {
		return fmt.Sprintf("The change does not apply cleanly onto %s (%s changed on both sides): its own head was checked, and it cannot merge until it is updated.",
			onto, strings.Join(m.Conflicts, ", "))
	}
	return fmt.Sprintf("Checked as merged onto %s: the tree %s will hold after the merge.", onto, branch)
}

// Context is what an invalid policy stopped.
type Context int

const (
	// ForCheck: a pull request's checks.
	ForCheck Context = iota
	// ForPublish: publishing a pushed commit's catalog.
	ForPublish
)

// InvalidPolicy says that the policy file does not parse, what is wrong
// with it line by line, and what that stopped.
func InvalidPolicy(findings []checks.Finding, c Context) string {
	var b strings.Builder
	switch c {
	case ForPublish:
		fmt.Fprintf(&b, "The repository policy `%s` is invalid, so nothing was published:\n\n", policy.FileName)
	default:
		fmt.Fprintf(&b, "The repository policy `%s` on the base branch is invalid, so no check ran. Fix it on the base branch first:\n\n", policy.FileName)
	}
	for _, f := range findings {
		fmt.Fprintf(&b, "- %s: %s (%s)\n", checks.Code(fmt.Sprintf("%s:%d", f.File, f.Line)), f.Message, f.Rule)
	}
	return checks.Visible(b.String())
}

// TooLarge is the title and summary of a pull request too large for GitHub
// to list in full: the files beyond the list cannot be seen, so the change
// can be neither checked nor approved.
func TooLarge() (string, string) {
	return "Too large to check", fmt.Sprintf("This pull request changes %d files or more, as many as GitHub lists. "+
		"The files beyond them cannot be seen, so the change cannot be checked or approved. Split it into smaller pull requests.", owners.MaxFiles)
}

// TooLargeForMemory is the title and summary of the check run of a pull
// request whose check would read more than the service's memory allows
// (MemoryError). It names the files it would read, largest first, and says
// that the catalog was not judged.
func TooLargeForMemory(e *MemoryError) (string, string) {
	var b strings.Builder
	fmt.Fprintf(&b, "This pull request was not checked: checking it would read %s of catalog files, "+
		"more than this service's memory lets its checks hold at once (%s). "+
		"Nothing was judged invalid: the same change can be checked by a service with more memory "+
		"(its operator raises the memory limit), or split into smaller pull requests.\n\nThe files it would read:\n\n",
		pipeline.BytesText(e.Reads.Bytes), pipeline.BytesText(e.Budget))
	const listed = 10
	for i, f := range e.Reads.Files {
		if i == listed {
			fmt.Fprintf(&b, "- and %s more\n", checks.Plural(len(e.Reads.Files)-listed, "file"))
			break
		}
		fmt.Fprintf(&b, "- %s (%s, %s)\n", checks.Code(f.Path), f.Side, pipeline.BytesText(f.Size))
	}
	return "Too large for this service's memory", b.String()
}

// StatusComment is the text of the one status comment on a pull request:
// the approval verdict, every OWNERS file whose approvers must approve and
// who did, whom to ask for the rest, approvals that do not count and why,
// a hold, and every reason d gives against merging. It holds nothing that
// changes unless the state does (no times), so that an unchanged state
// never rewrites the comment.
func (o *Outcome) StatusComment(d policy.Decision) string {
	return o.statusComment(d, nil)
}

// Queue is where a pull request stands with its base branch's merge
// queue: a branch whose rules require one merges through it alone.
type Queue struct {
	// Base is the branch whose queue it is.
	Base string
	// SHA is the head the pull request was queued, or taken out, at.
	SHA string
	// Removed, when set, is the reason GitHub gave for taking it out of
	// the queue; otherwise it is queued.
	Removed string
}

// QueueComment is StatusComment for a pull request that the merge queue of
// its base branch holds, or has just let go of: it says so after the
// decision, with what to do to queue it again.
func (o *Outcome) QueueComment(d policy.Decision, q Queue) string {
	return o.statusComment(d, &q)
}

func (o *Outcome) statusComment(d policy.Decision, q *Queue) string {
	var b strings.Builder
	if !o.Valid() {
		b.WriteString("### ❌ Not checked\n\n")
		b.WriteString(InvalidPolicy(o.PolicyFindings, ForCheck))
		return checks.Visible(b.String())
	}
	st := o.Owners
	if st == nil {
		fmt.Fprintf(&b, "### ❌ Could not read the OWNERS files at %s\n\nThe owners check says why.\n", change.ShortSHA(o.HeadSHA))
		return b.String()
	}
	if st.Approved {
		fmt.Fprintf(&b, "### ✅ Approved at %s\n\n", change.ShortSHA(st.HeadSHA))
	} else {
		fmt.Fprintf(&b, "### ⏳ Waiting for approval at %s\n\n", change.ShortSHA(st.HeadSHA))
	}
	if a := o.account(); a != "" {
		b.WriteString(a + "\n\n")
	}
	b.WriteString(st.Reason + "\n")

	if len(st.Required) > 0 {
		b.WriteString("\n| OWNERS file | approved | by | paths |\n|---|---|---|---|\n")
		for _, req := range st.Required {
			mark := "no"
			if req.Approved {
				mark = "yes"
			}
			by := "—"
			if len(req.ApprovedBy) > 0 {
				by = strings.Join(req.ApprovedBy, ", ")
			}
			paths := req.Paths
			more := ""
			if len(paths) > 5 {
				more = fmt.Sprintf(" and %d more", len(paths)-5)
				paths = paths[:5]
			}
			// A path may hold '|', which ends a cell even in a code span.
			cell := strings.NewReplacer("|", `\|`)
			code := make([]string, len(paths))
			for i, p := range paths {
				code[i] = cell.Replace(checks.Code(p))
			}
			file := cell.Replace(checks.Code(req.File))
			if req.CIYAML != nil {
				// Whose approval a package's ci.yaml asks for is in
				// the file, not in sight: say it.
				file += " reviewers: " + cell.Replace(checks.MarkdownText(strings.Join(req.CIYAML.Reviewers, ", ")))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s%s |\n", file, mark, by, strings.Join(code, ", "), more)
		}
	}
	if len(st.Packages) > 0 {
		b.WriteString("\nPackages the change touches, each owned by the approvers of its home wherever its blobs sit:\n")
		for _, line := range owners.DescribeAll(st.Packages) {
			// Plain text naming the package and its paths.
			fmt.Fprintf(&b, "- %s\n", checks.MarkdownText(line))
		}
	}
	if len(st.Catalogs) > 0 {
		b.WriteString("\nCatalogs the change adds or removes, each a published image that only the root approvers may add or take away:\n")
		for _, c := range st.Catalogs {
			fmt.Fprintf(&b, "- %s\n", checks.MarkdownText(c.Why()))
		}
	}
	for _, c := range st.Files {
		if c.Blocked != "" {
			fmt.Fprintf(&b, "\n%s cannot be approved: %s\n", checks.Code(c.Path), checks.MarkdownText(c.Blocked))
		}
	}
	if !st.Approved && len(st.Suggested) > 0 {
		ask := make([]string, len(st.Suggested))
		for i, s := range st.Suggested {
			ask[i] = "@" + s
		}
		fmt.Fprintf(&b, "\nTo approve the rest, ask %s: an owner comments `/approve` or approves a review.\n", strings.Join(ask, ", "))
	}
	if len(st.NotCounted) > 0 {
		b.WriteString("\nNot counted:\n")
		for _, n := range st.NotCounted {
			fmt.Fprintf(&b, "- %s: %s\n", n.Login, n.Reason)
		}
	}
	if o.Hold.Held {
		release := "`/hold cancel` releases it"
		if strings.HasSuffix(o.Hold.By, " label") {
			release = "removing the label releases it"
		}
		fmt.Fprintf(&b, "\n🛑 Held by %s: %s.\n", o.Hold.By, release)
	}
	if len(o.Activity.Voided) > 0 {
		b.WriteString("\nNot read (the body was edited):\n")
		for _, v := range o.Activity.Voided {
			fmt.Fprintf(&b, "- %s: %s\n", v.What(), v.Reason)
		}
	}
	if len(o.Hold.IgnoredLifts) > 0 {
		fmt.Fprintf(&b, "\nNot counted: `/hold cancel` from %s. Only the user who placed a hold or an approver of a touched path may lift it.\n",
			strings.Join(o.Hold.IgnoredLifts, ", "))
	}
	b.WriteString(o.graphs())
	b.WriteString(o.olmv1Section())
	b.WriteString(o.cardsSection())
	if len(d.Blocks) > 0 {
		// Each reason after its code, as the check run lists them, so
		// that the code a script or a search finds is in sight here too.
		b.WriteString("\n**Not merging yet:**\n")
		b.WriteString(blockLines(d.Blocks))
	}
	switch {
	case q == nil:
	case q.Removed != "":
		fmt.Fprintf(&b, "\n**Removed from the merge queue** of %s at %s: %s. It is not queued again at this commit; "+
			"a new commit, or `/recheck`, queues it again.\n", checks.Code(q.Base), change.ShortSHA(q.SHA), checks.Code(q.Removed))
	default:
		fmt.Fprintf(&b, "\n**Queued** in the merge queue of %s at %s: GitHub merges it once the queue's required checks pass.\n",
			checks.Code(q.Base), change.ShortSHA(q.SHA))
	}
	binding := "Approvals count for the commit they were given on."
	if o.Policy.Owners.StickyApprovals {
		binding = "Approvals stay across pushes."
	}
	fmt.Fprintf(&b, "\n<sub>Commands: `/approve`, `/approve cancel`, `/hold`, `/hold cancel`, `/recheck`. %s</sub>\n", binding)
	return checks.Visible(b.String())
}

// graphs is the section of the upgrade graphs, for the status comment and
// the job summary alike: GitHub draws Mermaid in both.
func (o *Outcome) graphs() string {
	if len(o.Graphs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n#### Upgrade graphs\n\nThe channels this change alters, as they are on the head: added bundles and edges are green, deprecated bundles grey, heads bold.\n")
	for _, g := range o.Graphs {
		fmt.Fprintf(&b, "\n%s, channel %s%s:\n\n%s", checks.Code(g.Package), checks.Code(g.Channel), inCatalogs(g.Roots, checks.Code), g.Markdown)
	}
	if o.MoreGraphs > 0 {
		fmt.Fprintf(&b, "\n%s not drawn; `catalogbot graph` draws any channel.\n", checks.Count(o.MoreGraphs, "more channel is", "more channels are"))
	}
	return b.String()
}

// inCatalogs says, after a channel's name, which catalogs' roots a
// picture stands for when it stands for more than one: " in a, b and c",
// or " in 6 catalogs, a to f". quote formats each root.
func inCatalogs(roots []string, quote func(string) string) string {
	switch n := len(roots); {
	case n < 2:
		return ""
	case n <= 3:
		q := make([]string, n)
		for i, r := range roots {
			q[i] = quote(r)
		}
		return " in " + strings.Join(q[:n-1], ", ") + " and " + q[n-1]
	default:
		return fmt.Sprintf(" in %d catalogs, %s to %s", n, quote(roots[0]), quote(roots[n-1]))
	}
}

// maxGraphNames bounds the bundles a text summary names per list; the
// command it ends with draws the rest.
const maxGraphNames = 5

// writeGraphsText says, for a terminal, what the change did to each channel
// it alters, and how to draw it: Mermaid is read in a browser, not here.
func (o *Outcome) writeGraphsText(b *strings.Builder) {
	if len(o.Graphs) == 0 {
		return
	}
	b.WriteString("upgrade graphs: the channels this change alters, on the head\n")
	for _, g := range o.Graphs {
		var parts []string
		if g.NewChannel {
			parts = append(parts, "new channel")
		}
		if len(g.Added) > 0 {
			parts = append(parts, "added "+nodeList(g.Added))
		}
		if len(g.Removed) > 0 {
			parts = append(parts, "removed "+nodeList(g.Removed))
		}
		if n := len(g.AddedEdges); n > 0 {
			parts = append(parts, checks.Count(n, "edge added", "edges added"))
		}
		if n := len(g.RemovedEdges); n > 0 {
			parts = append(parts, checks.Count(n, "edge removed", "edges removed"))
		}
		if len(g.Heads) > 0 {
			parts = append(parts, "head "+strings.Join(g.Heads, ", "))
		}
		fmt.Fprintf(b, "  %s/%s%s: %s\n", g.Package, g.Channel, inCatalogs(g.Roots, func(s string) string { return s }), strings.Join(parts, "; "))
		fmt.Fprintf(b, "    catalogbot graph %s --package %s --channel %s\n", shellWord(g.Root), shellWord(g.Package), shellWord(g.Channel))
	}
	if o.MoreGraphs > 0 {
		fmt.Fprintf(b, "  %s not listed; catalogbot graph draws any channel\n", checks.Count(o.MoreGraphs, "more channel is", "more channels are"))
	}
}

// nodeList names bundles by version, at most maxGraphNames of them.
func nodeList(nodes []graph.Node) string {
	var names []string
	for i, n := range nodes {
		if i == maxGraphNames {
			names = append(names, fmt.Sprintf("and %d more", len(nodes)-i))
			break
		}
		names = append(names, n.Label())
	}
	return strings.Join(names, ", ")
}

// shellWord quotes s for a POSIX shell when it needs it: package and
// channel names are the pull request's, and the hint is meant to be
// pasted.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+=:@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Document is the JSON form of an outcome and its decision.
type Document struct {
	BaseSHA string `json:"baseSHA"`
	HeadSHA string `json:"headSHA"`
	// Conclusion and Title are the verdict, as the check run shows it.
	Conclusion checks.Conclusion `json:"conclusion"`
	Title      string            `json:"title"`
	checks.Report
	// Policy lists the problems of an invalid policy, which stop the
	// checks from running at all.
	Policy   []checks.Finding `json:"policy,omitempty"`
	Hold     *Hold            `json:"hold,omitempty"`
	Decision *policy.Decision `json:"decision,omitempty"`
	// Graphs are the upgrade graphs of the channels the change alters,
	// as the status comment draws them; MoreGraphs counts those left out
	// (pipeline.MaxGraphs).
	Graphs     []pipeline.Graph `json:"graphs,omitempty"`
	MoreGraphs int              `json:"moreGraphs,omitempty"`
}

// Doc is the outcome and d as a Document.
func (o *Outcome) Doc(d policy.Decision) Document {
	doc := Document{BaseSHA: o.BaseSHA, HeadSHA: o.HeadSHA, Report: o.Report, Policy: o.PolicyFindings,
		Graphs: o.Graphs, MoreGraphs: o.MoreGraphs}
	doc.Conclusion, doc.Title = o.Verdict()
	if doc.Results == nil {
		doc.Results = []checks.Result{}
	}
	if o.Hold.Held {
		h := o.Hold
		doc.Hold = &h
	}
	if o.Valid() {
		doc.Decision = &d
	}
	return doc
}

// WriteText prints the conclusion of every check with the rest of its
// summary (whom to ask, what was validated), its findings when findings is
// set, and the decision.
func (o *Outcome) WriteText(w io.Writer, d policy.Decision, findings bool) error {
	var b strings.Builder
	if !o.Valid() {
		b.WriteString("the policy is invalid; no check ran:\n")
		if findings {
			if err := checks.WriteText(&b, o.PolicyFindings, ""); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, checks.Visible(b.String()))
		return err
	}
	b.WriteString(o.accountText())
	if m := o.mergeNote(); m != "" {
		fmt.Fprintf(&b, "%s\n", strings.ReplaceAll(m, "`", ""))
	}
	for _, res := range o.Report.Results {
		summary, rest, _ := strings.Cut(strings.TrimSpace(res.Summary), "\n")
		fmt.Fprintf(&b, "%s: %s: %s\n", res.Name, res.Conclusion, summary)
		// The summary is Markdown, read here as plain text.
		for _, line := range strings.Split(rest, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(line, "`", ""))
			}
		}
		if findings {
			if err := checks.WriteText(&b, res.Findings, ""); err != nil {
				return err
			}
		}
	}
	o.writeGraphsText(&b)
	o.writeOLMv1Text(&b)
	o.writeCardsText(&b)
	if cnj := o.CouldNotJudge(); cnj != "" {
		fmt.Fprintf(&b, "%s %s\n", cnj, o.again())
	}
	if d.Merge {
		fmt.Fprintf(&b, "mergeable at %s\n", o.HeadSHA)
	} else {
		b.WriteString("not mergeable:\n")
		for _, r := range d.Reasons() {
			fmt.Fprintf(&b, "  - %s\n", r)
		}
	}
	_, err := io.WriteString(w, checks.Visible(b.String()))
	return err
}

// Outputs are the verdicts a workflow branches on.
type Outputs struct {
	// Valid: no check but owners failed, and the policy is valid.
	// Meaningless while Judged is false.
	Valid bool
	// Judged is false when a check other than owners could not judge:
	// nothing is known of Valid, which is then left unset rather than
	// said either way.
	Judged bool
	// Approved: the owners check passed.
	Approved bool
	// Mergeable: the decision says merge.
	Mergeable bool
}

// Outputs are o's verdicts under d.
func (o *Outcome) Outputs(d policy.Decision) Outputs {
	out := Outputs{Valid: o.Valid(), Judged: true, Approved: o.Approved(), Mergeable: o.Valid() && d.Merge}
	for _, res := range o.Report.Results {
		if res.Name == pipeline.OwnersName {
			continue
		}
		switch res.Conclusion {
		case checks.Failure:
			out.Valid = false
		case checks.Pending:
			out.Judged = false
		}
	}
	if !out.Valid {
		// A failure is a verdict whatever else could not judge.
		out.Judged = true
	}
	return out
}

// JobSummary is the Markdown job summary of the check: the verdict with
// every reason against merging, the report and its findings (placed under
// dir, the repository relative to the workspace), and where approvals came
// from, so that a missing approval is not mistaken for a missing token.
func (o *Outcome) JobSummary(w io.Writer, d policy.Decision, dir string) error {
	rep := o.Report
	if !o.Valid() {
		rep = checks.Report{Results: []checks.Result{{
			Name:       "policy",
			Conclusion: checks.Failure,
			Findings:   o.PolicyFindings,
			Summary:    InvalidPolicy(nil, ForCheck),
		}}}
	}
	return checks.WriteGitHubSummary(w, checks.GitHubSummary{
		Title:  "catalogbot check",
		Intro:  o.intro(d),
		Report: rep,
		Notes:  o.notes(),
		Dir:    dir,
	})
}

func (o *Outcome) intro(d policy.Decision) string {
	var b strings.Builder
	if a := o.account(); a != "" && o.Valid() {
		b.WriteString(a + "\n\n")
	}
	switch {
	case !o.Valid():
		b.WriteString("**Not checked**: the repository policy is invalid.")
	case d.Merge:
		fmt.Fprintf(&b, "**Mergeable** at `%s`.", change.ShortSHA(o.HeadSHA))
	case o.CouldNotJudge() != "":
		_, what := o.waiting()
		fmt.Fprintf(&b, "**Could not judge** `%s`", change.ShortSHA(o.HeadSHA))
		if what != "" {
			b.WriteString(": " + what)
		}
		b.WriteString(". " + o.again() + " Not mergeable:\n")
		for _, r := range d.Reasons() {
			fmt.Fprintf(&b, "\n- %s", r)
		}
	default:
		fmt.Fprintf(&b, "**Not mergeable** at `%s`:\n", change.ShortSHA(o.HeadSHA))
		for _, r := range d.Reasons() {
			fmt.Fprintf(&b, "\n- %s", r)
		}
	}
	fmt.Fprintf(&b, "\n\nBase `%s`, head `%s`.", change.ShortSHA(o.BaseSHA), change.ShortSHA(o.HeadSHA))
	return b.String()
}

func (o *Outcome) notes() string {
	if !o.Valid() {
		return ""
	}
	var notes []string
	if m := o.mergeNote(); m != "" {
		notes = append(notes, m)
	}
	if g := strings.TrimSpace(o.graphs()); g != "" {
		notes = append(notes, g)
	}
	if v := strings.TrimSpace(o.olmv1Section()); v != "" {
		notes = append(notes, v)
	}
	if v := strings.TrimSpace(o.cardsSection()); v != "" {
		notes = append(notes, v)
	}
	if o.eventsRead >= 0 {
		notes = append(notes, fmt.Sprintf("Approvals counted: the author's, and those given in the pull request's %s.",
			checks.Count(o.eventsRead, "review or comment", "reviews and comments")))
	} else if o.noEventsWhy != "" {
		notes = append(notes, o.noEventsWhy)
	}
	for _, v := range o.Activity.Voided {
		notes = append(notes, "Not read: "+v.What()+", "+v.Reason+".")
	}
	if o.Draft {
		notes = append(notes, "The pull request is a draft.")
	}
	if o.Hold.Held {
		notes = append(notes, "The pull request is held by "+o.Hold.By+".")
	}
	return strings.Join(notes, "\n\n")
}

// BlockedByPrefix opens the line of a check run's text that lists why the
// pull request is not merged, by code (policy.Code), comma separated:
//
//	blocked-by: approval-missing,checks-pending
//
// The line is the first of the text, so that a script reading the check
// run through the API finds it without parsing the rest.
const BlockedByPrefix = "blocked-by: "

// BlockedText is the text of the check run of an open pull request that
// is not merged: the blocked-by line with the codes of blocks (unexplained
// when there are none), then each reason as people read it. It is the
// text of a check run, plain Markdown.
func BlockedText(blocks []policy.Block) string {
	blocks = policy.OrUnexplained(blocks)
	var b strings.Builder
	b.WriteString(BlockedByPrefix + policy.JoinCodes(policy.CodesOf(blocks)) + "\n\n")
	b.WriteString(blockLines(blocks))
	return b.String()
}

// blockLines lists blocks, each reason after its code: the check run's
// text and the status comment say them alike.
func blockLines(blocks []policy.Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "- `%s`: %s\n", bl.Code, checks.VisibleLine(bl.Text))
	}
	return b.String()
}

// ParseBlockedBy reads the codes of the blocked-by line of a check run's
// text (BlockedText); ok is false when the text has no such line.
func ParseBlockedBy(text string) (codes []policy.Code, ok bool) {
	for line := range strings.Lines(text) {
		rest, found := strings.CutPrefix(strings.TrimRight(line, "\r\n"), BlockedByPrefix)
		if !found {
			continue
		}
		for _, c := range strings.Split(rest, ",") {
			if c = strings.TrimSpace(c); c != "" {
				codes = append(codes, policy.Code(c))
			}
		}
		return codes, true
	}
	return nil, false
}
