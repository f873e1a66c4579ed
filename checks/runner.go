package checks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
func Run[T any](ctx context.Context, in T, checks ...Check[T]) Report {
	results := make([]Result, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			results[i] = runOne(ctx, c, in)
		})
	}
	wg.Wait()
	slices.SortStableFunc(results, func(a, b Result) int { return cmp.Compare(a.Name, b.Name) })
	return Report{Results: results}
}

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
			res = cutShort(res, err)
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
// found and waits for already.
func cutShort(res Result, err error) Result {
	w := Wait{Class: WaitCancelled}
	if errors.Is(err, context.DeadlineExceeded) {
		w.Class = WaitDeadline
	}
	if res.Conclusion != Pending {
		res.Summary = strings.TrimRight("Could not judge: "+w.String()+".\n\n"+res.Summary, "\n") + "\n"
	}
	res.Conclusion = Pending
	res.Waits = AddWait(res.Waits, w)
	return res
}
