package policy

import (
	"encoding/json"
	"slices"
	"strings"
)

// Code names why an open pull request is not merged, for machines: a
// script reading the check run, an alert on the wait by reason. Codes are
// a closed set (Codes), stable across releases; the prose beside each
// (Block.Text) is for people and may change.
type Code string

// The codes Decide gives. Each reason Decide lists carries one.
const (
	CodeMergingDisabled Code = "merging-disabled" // the policy turns merging off
	CodeDraft           Code = "draft"
	CodeHold            Code = "hold"             // the hold label or a standing /hold
	CodeApprovalMissing Code = "approval-missing" // the owners have not approved the head
	CodeChecksFailed    Code = "checks-failed"    // a catalogbot check or a required check concluded other than success
	CodeChecksPending   Code = "checks-pending"   // a check has not reported, or could not judge yet
	CodeHeadMoved       Code = "head-moved"       // the check is not of the current head: checked again
	CodeBaseMoved       Code = "base-moved"       // the base changed what the pull request touches since the check: checked again
	CodeMergeability    Code = "mergeability-unknown"
	CodeMergeConflict   Code = "merge-conflict" // GitHub says it does not merge cleanly
	CodePolicyInvalid   Code = "policy-invalid" // the policy file on the base branch does not parse
)

// The codes of the states the GitHub App passes through on its way to a
// merge. Decide never gives them: they say what the service is doing, not
// what the rules say.
const (
	// CodeChecking: the check of the head is under way.
	CodeChecking Code = "checking"
	// CodeMerging: the decision is to merge, and the merge is being made.
	CodeMerging Code = "merging"
	// CodeQueued: the pull request waits in its base branch's merge queue.
	CodeQueued Code = "queued"
	// CodeQueueRemoved: the merge queue let go of the pull request at this
	// head; it is not queued again until a new commit or /recheck.
	CodeQueueRemoved Code = "queue-removed"
	// CodeMergeRefused: GitHub refused the merge of a pull request the
	// rules allow, again after a re-check.
	CodeMergeRefused Code = "merge-refused"
	// CodeRetrying: the last attempt failed (GitHub or git answered with an
	// error, or the pull request kept moving); the job is retried with
	// backoff by the class of its failure, and the resync is only the
	// backstop.
	CodeRetrying Code = "retrying"
	// CodeUnexplained is reported for an open pull request that is not
	// merged when no other code applies. It is always a bug: every path
	// that leaves a pull request open must say why.
	CodeUnexplained Code = "unexplained"
)

// Codes lists every code, in the order the documentation gives them.
func Codes() []Code {
	return []Code{
		CodeMergingDisabled, CodeDraft, CodeHold, CodeApprovalMissing, CodeChecksFailed, CodeChecksPending,
		CodeHeadMoved, CodeBaseMoved, CodeMergeability, CodeMergeConflict, CodePolicyInvalid,
		CodeChecking, CodeMerging, CodeQueued, CodeQueueRemoved, CodeMergeRefused, CodeRetrying, CodeUnexplained,
	}
}

// Block is one reason a pull request is not merged: its code and the
// sentence that says it to people.
type Block struct {
	Code Code   `json:"code"`
	Text string `json:"text"`
}

// Reasons are the sentences of the blocks, in order.
func (d Decision) Reasons() []string {
	var out []string
	for _, b := range d.Blocks {
		out = append(out, b.Text)
	}
	return out
}

// Codes are the distinct codes of the blocks, in the order they first
// appear.
func (d Decision) Codes() []Code { return CodesOf(d.Blocks) }

// CodesOf are the distinct codes of blocks, in the order they first
// appear.
func CodesOf(blocks []Block) []Code {
	var out []Code
	for _, b := range blocks {
		if !slices.Contains(out, b.Code) {
			out = append(out, b.Code)
		}
	}
	return out
}

// JoinCodes spells codes as the value of a blocked-by line: comma
// separated, no spaces.
func JoinCodes(codes []Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// MarshalJSON writes the reasons beside the blocks: documents written
// before the codes existed carry the reasons alone, and readers of those
// keep working.
func (d Decision) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Merge   bool     `json:"merge"`
		Method  string   `json:"method"`
		SHA     string   `json:"sha"`
		Reasons []string `json:"reasons"`
		Blocks  []Block  `json:"blocks"`
		Recheck bool     `json:"recheck"`
	}{d.Merge, d.Method, d.SHA, d.Reasons(), d.Blocks, d.Recheck})
}

// OrUnexplained is blocks, or when there are none a block of
// CodeUnexplained: what an open pull request that is not merged reports
// when nothing recorded why.
func OrUnexplained(blocks []Block) []Block {
	if len(blocks) > 0 {
		return blocks
	}
	return []Block{{Code: CodeUnexplained, Text: "nothing recorded why this pull request is not merged; this is a bug in catalogbot"}}
}
