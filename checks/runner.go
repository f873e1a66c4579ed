package checks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Run runs every check on in at once and returns their results sorted by
// check name, so that the report reads the same whatever finished first.
//
// The checks share ctx; Run does not cancel the others when one fails,
// because the point of a report is to say everything that is wrong at once.
// A check that panics is reported as a failure of that check alone rather
// than taking the process (a webhook server handling many changes) down.
// A result is always named after its check, whatever the check filled in.
// A check that ctx stopped (its deadline passed, or the run was cancelled)
// before it found a failure is pending, whatever it concluded: what it
// did not get to may be wrong, and a check cut short has not judged.
//
// When ctx ends, Run stops waiting: a check still running is reported as
// cut short (pending: it could not judge), with the context's cause, so
// that a deadline bounds the report even for a check stuck where it does
// not look at ctx. Such a check finishes in the background and its result
// is dropped.
func Run[T any](ctx context.Context, in T, checks ...Check[T]) Report {
	results := make([]Result, len(checks))
	done := make([]chan Result, len(checks))
	for i, c := range checks {
		done[i] = make(chan Result, 1)
		go func() { done[i] <- runOne(ctx, c, in) }()
	}
	var grace context.Context // ends cutShortGrace after ctx
	for i, c := range checks {
		// A result that is there already is taken first, so that a check
		// that finished before ctx ended keeps it.
		select {
		case results[i] = <-done[i]:
			continue
		default:
		}
		select {
		case results[i] = <-done[i]:
		case <-ctx.Done():
			// A check that heeds ctx returns at once with what it
			// found, which is worth more than "cut short"; one stuck
			// where it does not look at ctx gets a moment, not more.
			if grace == nil {
				var cancel context.CancelFunc
				grace, cancel = context.WithTimeout(context.WithoutCancel(ctx), cutShortGrace)
				defer cancel()
			}
			select {
			case results[i] = <-done[i]:
				continue
			case <-grace.Done():
			}
			results[i] = cutShort(Result{Name: c.Name(), Findings: []Finding{}}, ctx)
		}
	}
	slices.SortStableFunc(results, func(a, b Result) int { return cmp.Compare(a.Name, b.Name) })
	return Report{Results: results}
}

// cutShortGrace is how long Run waits, after ctx ends, for the checks
// still running to return what they have.
var cutShortGrace = time.Second

func runOne[T any](ctx context.Context, c Check[T], in T) (res Result) {
	name := c.Name()
	defer func() {
		if p := recover(); p != nil {
			res = Result{Conclusion: Failure, Summary: fmt.Sprintf("The check crashed: %v", p)}
		}
		res.Name = name
		if res.Conclusion == "" {
			res.Conclusion = Neutral
		}
		if err := ctx.Err(); err != nil && res.Conclusion != Failure {
			res = cutShort(res, ctx)
		}
		if res.Findings == nil {
			res.Findings = []Finding{}
		}
	}()
	if ctx.Err() != nil {
		return Result{Summary: "Not run."}
	}
	return c.Run(ctx, in)
}

// cutShort makes res pending on the end of its context, keeping what it
// found and waits for already. The context's cause, when it gives one
// (the policy's limits.checkTimeout), is named: it says what to raise.
func cutShort(res Result, ctx context.Context) Result {
	err := ctx.Err()
	w := Wait{Class: WaitCancelled}
	if errors.Is(err, context.DeadlineExceeded) {
		w.Class = WaitDeadline
	}
	why := w.String()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		why += " (" + cause.Error() + ")"
	}
	if res.Conclusion != Pending || why != w.String() {
		res.Summary = strings.TrimRight("Could not judge: "+why+".\n\n"+res.Summary, "\n") + "\n"
	}
	res.Conclusion = Pending
	res.Waits = AddWait(res.Waits, w)
	return res
}
